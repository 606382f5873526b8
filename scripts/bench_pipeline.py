"""End to end: `handaudit verify` on JSON Lines and Parquet, beside a per-hand Python baseline.

Run: make bench (or .venv/bin/python scripts/bench_pipeline.py --hands 200000).
Generates (or reuses) the data set in bench/: tables of 2 to 6 players, half with
jokers. Each verify runs in a fresh process, so its peak RSS is its own; the
baseline runs on the first --baseline-hands lines of the same JSON Lines file
and its rate is per hand, like ours. Then the JSON Lines audit beside Arrow's bare
parse of the same file, in turns. Then the first --shape-hands of those hands,
written as Parquet the ordinary ways (pyarrow, DuckDB, polars) and as an indented
JSON array, are each audited beside the project's own Parquet of them.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from datetime import date
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
HANDS_PER_TABLE = 200


def data_set(hands: int, out: Path, variant: str = "taiwanese") -> tuple[Path, Path]:
    folder = out / (f"pipeline-{hands}" if variant == "taiwanese" else f"{variant}-{hands}")
    jsonl, parquet = folder / "hands.jsonl", folder / "parquet" / "hands.parquet"
    tables = max(1, hands // HANDS_PER_TABLE)
    for path, fmt in ((jsonl, "jsonl"), (parquet, "parquet")):
        if not path.exists():
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pipeline",
                    "generate",
                    "--tables",
                    str(tables),
                    "--hands",
                    str(HANDS_PER_TABLE),
                    "--seed",
                    "1",
                    "--jokers",
                    "0.5",
                    "--format",
                    fmt,
                    "--variant",
                    variant,
                    "--out",
                    str(path),
                ],
                check=True,
                cwd=ROOT,
            )
    return jsonl, parquet


def shape_files(jsonl: Path, parquet: Path, hands: int, out: Path) -> dict[str, Path]:
    """The first `hands` hands of `jsonl`, written the ordinary ways hand-history.md allows:
    JSON Lines; an indented JSON array; Parquet by pyarrow from the JSON (amounts and times
    as text, one row group), by pyarrow with decimals (row groups of 10,000), by DuckDB's
    COPY and by polars; and the project's own Parquet (`generate`'s: decimals,
    dictionaries, row groups of 8,192)."""
    import duckdb
    import polars as pl
    import pyarrow.json as pj
    import pyarrow.parquet as pq

    from pipeline.ingest.hand_history import arrow_schema

    folder = out / f"shapes-{hands}"
    files = {
        name: folder / file
        for name, file in (
            ("generate's own Parquet", "own.parquet"),
            ("JSON Lines", "hands.jsonl"),
            ("JSON array, indented", "hands.json"),
            ("pyarrow, text amounts, 1 row group", "pyarrow-text.parquet"),
            ("pyarrow, decimals, row groups of 10,000", "pyarrow-decimal.parquet"),
            ("DuckDB COPY", "duckdb.parquet"),
            ("polars write_parquet", "polars.parquet"),
        )
    }
    if all(path.exists() for path in files.values()):
        return files
    folder.mkdir(parents=True, exist_ok=True)
    with jsonl.open("rb") as source, files["JSON Lines"].open("wb") as target:
        for _, line in zip(range(hands), source, strict=False):
            target.write(line)
    with (
        files["JSON Lines"].open("rb") as records,
        files["JSON array, indented"].open("w") as array,
    ):
        array.write("[\n")
        for i, line in enumerate(records):
            array.write((",\n" if i else "") + json.dumps(json.loads(line), indent=1))
        array.write("\n]\n")
    text = pj.read_json(files["JSON Lines"])
    pq.write_table(text, files["pyarrow, text amounts, 1 row group"], row_group_size=hands)
    decimals = pj.read_json(
        files["JSON Lines"], parse_options=pj.ParseOptions(explicit_schema=arrow_schema())
    )
    pq.write_table(
        decimals, files["pyarrow, decimals, row groups of 10,000"], row_group_size=10_000
    )
    with duckdb.connect() as con:
        con.execute("SET enable_progress_bar = false")
        lines, copy = files["JSON Lines"], files["DuckDB COPY"]
        con.execute(f"COPY (SELECT * FROM read_json('{lines}')) TO '{copy}'")
    pl.read_ndjson(files["JSON Lines"]).write_parquet(files["polars write_parquet"])
    own = pq.read_table(parquet).slice(0, hands)
    pq.write_table(own, files["generate's own Parquet"], row_group_size=8_192)
    return files


def peak_mb(usage: resource.struct_rusage) -> float:
    """This process's peak resident memory. Linux's VmHWM where there is one: ru_maxrss
    also counts what the parent held when it started this process (the bench, after
    writing the shapes, held 4.7 GB)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return usage.ru_maxrss / 1024


def measure(path: Path, out: Path, workers: int) -> None:
    """In this process: verify `path` into `out`; print one JSON line of figures."""
    from pipeline.engine.verify import verify
    from pipeline.helpers.memory import keep_freed_memory
    from pipeline.helpers.no_pandas import arrow_without_pandas
    from pipeline.helpers.stages import Stages

    keep_freed_memory()  # as the command line does
    arrow_without_pandas()

    stages = Stages()
    started = time.perf_counter()
    summary = verify([path], out, stages=stages, workers=workers)
    seconds = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_SELF)  # every thread of this process
    import duckdb

    with duckdb.connect(str(summary.database), read_only=True) as con:
        (players,) = con.execute("SELECT count(*) FROM players").fetchone() or (0,)
    print(
        json.dumps(
            {
                "hands": summary.accounting.verified,
                "players": players,
                "seconds": seconds,
                "stages": stages.seconds,
                "cpu_seconds": usage.ru_utime + usage.ru_stime,
                "system_seconds": usage.ru_stime,
                "page_faults": usage.ru_minflt,
                "peak_mb": peak_mb(usage),
            }
        )
    )


def parse(path: Path, tuned: bool) -> None:
    """In this process: Arrow's JSON reader on `path` and nothing else (its defaults: all
    cores, types inferred); with `tuned`, memory kept for reuse as the audit's process
    keeps it. Print one JSON line of figures."""
    import pyarrow.json as pj

    if tuned:
        from pipeline.helpers.memory import keep_freed_memory

        keep_freed_memory()

    def cpu() -> float:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime

    started, cpu_before = time.perf_counter(), cpu()
    table = pj.read_json(path)
    figures = {"rows": table.num_rows, "seconds": time.perf_counter() - started}
    print(json.dumps({**figures, "cpu_seconds": cpu() - cpu_before}))


def parse_floor(jsonl: Path, a: argparse.Namespace) -> None:
    """The JSON Lines audit beside Arrow's bare parse of the same file, in turns: with
    Arrow's defaults, and with the freed memory kept as the audit's process keeps it
    (a fresh process's first parse otherwise pays for faulting its memory in)."""
    triples = []
    for _ in range(a.repeat):
        bare = []
        for mode in ("--parse", "--parse-tuned"):
            finished = subprocess.run(
                [sys.executable, __file__, mode, str(jsonl)],
                capture_output=True,
                text=True,
                check=True,
                cwd=ROOT,
            )
            bare.append(json.loads(finished.stdout.splitlines()[-1]))
        (ours,) = runs_of(jsonl, a.workers, 1, a.out / "audit")
        triples.append((*bare, ours))
    print(
        f"\nJSON Lines ({jsonl.stat().st_size / 1e6:,.0f} MB) audited end to end, beside Arrow's "
        "JSON reader only parsing the same file (`pyarrow.json.read_json`: all cores, types "
        "inferred), each in a fresh process, in turns; with Arrow's defaults, and with "
        f"freed memory kept as the audit keeps it; {a.workers} workers:\n\n"
        "| run | parse s, defaults | parse s, memory kept | audit s | audit CPU s | "
        "audit / parse, defaults | audit / parse, memory kept |\n"
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
    )
    for i, (plain, kept, ours) in enumerate(triples, 1):
        print(
            f"| {i} | {plain['seconds']:.2f} | {kept['seconds']:.2f} | {ours['seconds']:.2f} | "
            f"{ours['cpu_seconds']:.1f} | {ours['seconds'] / plain['seconds']:.2f} | "
            f"{ours['seconds'] / kept['seconds']:.2f} |"
        )
    plain_s, kept_s, audit_s = (
        statistics.median(t[k]["seconds"] for t in triples) for k in range(3)
    )
    print(
        f"| median | {plain_s:.2f} | {kept_s:.2f} | {audit_s:.2f} | | "
        f"{audit_s / plain_s:.2f} | {audit_s / kept_s:.2f} |"
    )


def runs_of(path: Path, workers: int, repeat: int, out: Path) -> list[dict[str, Any]]:
    """`repeat` runs of verify on `path`, each in a fresh process, their figures."""
    command = [sys.executable, __file__, "--measure", str(path), str(out), "--workers"]
    runs = []
    for _ in range(repeat):
        finished = subprocess.run(
            [*command, str(workers)],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        )
        runs.append(json.loads(finished.stdout.splitlines()[-1]))
    return runs


def shapes_table(
    jsonl: Path, parquet: Path, hands: int, a: argparse.Namespace, base_rate: float
) -> None:
    """Each shape of the same hands audited end to end, beside the project's own Parquet."""
    files = shape_files(jsonl, parquet, hands, a.out)
    rates = {}
    print(
        f"\n{hands:,} hands as each shape ({a.workers} workers, median of {a.repeat}):\n\n"
        "| shape | hands/s | time a hand, x own Parquet | x baseline | CPU us a player | "
        "peak RSS MB |\n| --- | ---: | ---: | ---: | ---: | ---: |"
    )
    for name, path in files.items():
        runs = runs_of(path, a.workers, a.repeat, a.out / "audit")
        assert all(r["hands"] == hands for r in runs), (name, runs[0]["hands"])
        rates[name] = rate = statistics.median(r["hands"] / r["seconds"] for r in runs)
        cpu = statistics.median(r["cpu_seconds"] * 1e6 / r["players"] for r in runs)
        peak = max(r["peak_mb"] for r in runs)
        own = rates["generate's own Parquet"]
        print(
            f"| {name} | {rate:,.0f} | {own / rate:.2f} | "
            f"{rate / base_rate:.1f} | {cpu:.1f} | {peak:,.0f} |"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--hands", type=int, default=200_000)
    ap.add_argument("--baseline-hands", type=int, default=2_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path, default=ROOT / "bench")
    ap.add_argument("--workers", type=int, default=min(os.cpu_count() or 1, 4))
    ap.add_argument(
        "--shape-hands", type=int, default=100_000, help="hands of the shapes table (0: none)"
    )
    ap.add_argument("--data-only", action="store_true", help="generate the data set and stop")
    ap.add_argument("--measure", nargs=2, type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--parse", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--parse-tuned", type=Path, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.parse or a.parse_tuned:
        parse(a.parse or a.parse_tuned, tuned=bool(a.parse_tuned))
        return
    if a.measure:
        path, out = a.measure
        measure(path, out, a.workers)
        return
    a.out.mkdir(exist_ok=True)
    jsonl, parquet = data_set(a.hands, a.out)
    chinese_jsonl, chinese_parquet = data_set(a.hands, a.out, "chinese")
    ofc_jsonl, ofc_parquet = data_set(a.hands, a.out, "ofc")
    if a.data_only:
        print(f"{jsonl}\n{parquet}")
        return
    print(
        f"# handaudit end to end, {a.hands:,} hands, median of {a.repeat}; {date.today()}, "
        f"{platform.machine()}, {os.cpu_count()} cores, {a.workers} workers, "
        f"Python {platform.python_version()}"
    )
    configs = [
        (f"{name}, {workers} worker{'s' if workers > 1 else ''}", path, workers)
        for name, path in (
            ("JSON Lines", jsonl),
            ("Parquet", parquet),
            ("Chinese, JSON Lines", chinese_jsonl),
            ("Chinese, Parquet", chinese_parquet),
            ("Open-face, JSON Lines", ofc_jsonl),
            ("Open-face, Parquet", ofc_parquet),
        )
        for workers in sorted({1, a.workers})
    ]
    rows = []
    base_rates = []
    sys.path.insert(0, str(ROOT))
    from scripts import baseline

    for _ in range(a.repeat):
        # The baseline between our runs, so both see the same machine noise.
        started = time.perf_counter()
        done = baseline.run(jsonl, a.baseline_hands)
        base_rates.append(done / (time.perf_counter() - started))
    for name, path, workers in configs:
        runs = runs_of(path, workers, a.repeat, a.out / "audit")
        middle = sorted(runs, key=lambda r: r["seconds"])[len(runs) // 2]
        rate = statistics.median(r["hands"] / r["seconds"] for r in runs)
        rows.append((name, rate, middle, max(r["peak_mb"] for r in runs)))
    base_rate = statistics.median(base_rates)

    stages = list(rows[0][2]["stages"])
    print(
        "\n| input | hands/s | x baseline | seconds | cores busy | CPU us a player | peak RSS MB | "
        + " | ".join(stages)
        + " |"
    )
    print("| --- | " + " | ".join("---:" for _ in range(6 + len(stages))) + " |")
    for name, rate, run, peak in rows:
        stage_text = " | ".join(f"{run['stages'].get(k, 0):.1f} s" for k in stages)
        print(
            f"| {name} | {rate:,.0f} | {rate / base_rate:.1f} | {run['seconds']:.1f} | "
            f"{run['cpu_seconds'] / run['seconds']:.2f} | "
            f"{run['cpu_seconds'] * 1e6 / max(run['players'], 1):.1f} | {peak:,.0f} | "
            f"{stage_text} |"
        )
    print(
        f"| baseline (per-hand Python, phevaluator API, Decimal; first {a.baseline_hands:,} "
        f"hands; runs {', '.join(f'{r:,.0f}' for r in base_rates)}) | {base_rate:,.0f} | 1.0 | "
        + " | ".join("" for _ in range(4 + len(stages)))
        + " |"
    )
    print(
        "\nMedians of the runs. Stage seconds are summed over the worker threads, so with "
        "several workers they add up to more than the run's seconds."
    )
    if a.shape_hands:
        parse_floor(shape_files(jsonl, parquet, a.shape_hands, a.out)["JSON Lines"], a)
        shapes_table(jsonl, parquet, a.shape_hands, a, base_rate)


if __name__ == "__main__":
    main()
