"""End to end: `handaudit verify` on JSON Lines and Parquet, beside a per-hand Python baseline.

Run: make bench (or .venv/bin/python scripts/bench_pipeline.py --hands 200000).
Generates (or reuses) the data set in bench/: tables of 2 to 6 players, half with
jokers. Each verify runs in a fresh process, so its peak RSS is its own; the
baseline runs on the first --baseline-hands lines of the same JSON Lines file
and its rate is per hand, like ours.
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


def measure(path: Path, out: Path, workers: int) -> None:
    """In this process: verify `path` into `out`; print one JSON line of figures."""
    from pipeline.memory import keep_freed_memory
    from pipeline.stages import Stages
    from pipeline.verify import verify

    keep_freed_memory()  # as the command line does

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
                "peak_mb": usage.ru_maxrss / 1024,
            }
        )
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--hands", type=int, default=200_000)
    ap.add_argument("--baseline-hands", type=int, default=2_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path, default=ROOT / "bench")
    ap.add_argument("--workers", type=int, default=min(os.cpu_count() or 1, 4))
    ap.add_argument("--data-only", action="store_true", help="generate the data set and stop")
    ap.add_argument("--measure", nargs=2, type=Path, help=argparse.SUPPRESS)
    a = ap.parse_args()
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
        runs = []
        for _ in range(a.repeat):
            finished = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--measure",
                    str(path),
                    str(a.out / "audit"),
                    "--workers",
                    str(workers),
                ],
                capture_output=True,
                text=True,
                check=True,
                cwd=ROOT,
            )
            runs.append(json.loads(finished.stdout.splitlines()[-1]))
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


if __name__ == "__main__":
    main()
