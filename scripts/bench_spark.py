"""The Spark engine beside the local one: `verify --engine spark` on the bench's hands.

Run: make bench (after bench_pipeline.py, which generates the hands), or
.venv/bin/python scripts/bench_spark.py --hands 200000 --repeat 2.
Each run is a fresh process; the local and the Spark engine run in turns on the same
files (the JSON Lines file, cut into byte ranges by the engine; the Parquet file, cut
into runs of row groups; and the Parquet split into --parts files), so that both see
the same machine noise. The Spark runs say where their time went, step by step, and the
driver's peak memory (its Python process: the driver holds no hands, so it should
not grow with them). An input not generated for --hands is left out.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]


def measure_spark(inputs: list[str], out: str, master: str) -> None:
    """In this process: the Spark engine on `inputs`; one JSON line of figures."""
    from pipeline.spark.engine import verify_on_spark

    started = time.perf_counter()
    summary = verify_on_spark(inputs, out, master)
    seconds = time.perf_counter() - started
    peak = high_water_mb()
    figures = {
        "hands": summary.accounting.verified,
        "seconds": seconds,
        "steps": summary.steps,
        "driver_mb": peak,
    }
    print(json.dumps(figures))


def high_water_mb() -> float:
    """This process's peak resident memory (VmHWM: unlike getrusage's, not inherited
    from the process that started this one)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def run(command: list[str]) -> dict[str, object]:
    """Wall seconds of a command (and what it printed last, when JSON)."""
    started = time.perf_counter()
    finished = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    seconds = time.perf_counter() - started
    if finished.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed:\n{finished.stderr[-2000:]}")
    last = finished.stdout.strip().splitlines()[-1]
    figures: dict[str, object] = json.loads(last) if last.startswith("{") else {}
    return {**figures, "wall": seconds}


def parquet_parts(parquet: Path, parts: int, beside: Path) -> Path:
    """The Parquet file split into `parts` files of whole row groups, in a folder."""
    folder = beside / f"parquet-{parts}-parts"
    if not folder.exists():
        partial = folder.with_name(folder.name + ".partial")
        partial.mkdir(parents=True, exist_ok=True)
        table = pq.read_table(parquet)
        size = -(-table.num_rows // parts)
        for i in range(parts):
            pq.write_table(table.slice(i * size, size), partial / f"part-{i:02}.parquet")
        partial.rename(folder)
    return folder


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--hands", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--parts", type=int, default=8)
    ap.add_argument(
        "--parquet",
        type=Path,
        help="hands as one Parquet file (default: bench_pipeline.py's for --hands)",
    )
    ap.add_argument("--master", default="local[2]")
    ap.add_argument(
        "--standalone",
        type=int,
        metavar="CORES",
        help="Spark on a standalone cluster started here, of one worker of CORES cores "
        "(its executors' Python the driver's), instead of --master: the per-core figure, "
        "beside the local engine with --workers CORES",
    )
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", type=Path, default=ROOT / "bench")
    ap.add_argument("--measure-spark", nargs="+", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.measure_spark:
        out, *inputs = a.measure_spark
        measure_spark(inputs, out, a.master)
        return
    folder = a.out / f"pipeline-{a.hands}"
    jsonl, parquet = folder / "hands.jsonl", a.parquet or folder / "parquet" / "hands.parquet"
    if not jsonl.exists() and not parquet.exists():
        raise SystemExit(f"no bench data in {folder}: run scripts/bench_pipeline.py first")
    inputs = {}
    if jsonl.exists():
        inputs["JSON Lines"] = jsonl
    if parquet.exists():
        inputs["Parquet, one file"] = parquet
        inputs[f"Parquet, {a.parts} files"] = parquet_parts(parquet, a.parts, folder)
    with contextlib.ExitStack() as stack:
        if a.standalone:
            sys.path.insert(0, str(ROOT))
            from scripts.spark_cluster import standalone_cluster

            os.environ["PYSPARK_PYTHON"] = sys.executable  # the executors' Python
            scratch = Path(stack.enter_context(tempfile.TemporaryDirectory()))
            a.master = stack.enter_context(standalone_cluster(scratch, 1, a.standalone))
            a.workers = a.standalone
        compare(a, inputs)


def compare(a: argparse.Namespace, inputs: dict[str, Path]) -> None:
    """The local engine and Spark in turns on each input; a Markdown table."""
    local = [sys.executable, "-m", "pipeline", "verify", "--workers", str(a.workers), "--out"]
    spark = [sys.executable, __file__, "--master", a.master, "--measure-spark"]
    print(
        f"# verify --engine spark --master {a.master} beside the local engine "
        f"(--workers {a.workers}), {a.hands:,} hands, {os.cpu_count()} cores, "
        f"median of {a.repeat}"
    )
    print("\n| input | local s | Spark s | Spark / local | driver MB | Spark's steps (median s) |")
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    for name, path in inputs.items():
        locals_, sparks = [], []
        for _ in range(a.repeat):
            locals_.append(run([*local, str(a.out / "audit-local"), str(path)])["wall"])
            sparks.append(run([*spark, str(a.out / "audit-spark"), str(path)]))
        local_s = statistics.median(float(str(r)) for r in locals_)
        spark_s = statistics.median(float(str(r["wall"])) for r in sparks)
        steps: dict[str, list[float]] = {}
        for r in sparks:
            for step, seconds in dict(r["steps"]).items():  # type: ignore[call-overload]
                steps.setdefault(step, []).append(seconds)
        told = ", ".join(f"{k} {statistics.median(v):.1f}" for k, v in steps.items())
        driver = max(float(str(r["driver_mb"])) for r in sparks)
        print(
            f"| {name} | {local_s:.1f} | {spark_s:.1f} | {spark_s / local_s:.2f} | "
            f"{driver:.0f} | {told} |"
        )
    print("\nWall seconds of whole processes (Spark's include starting and stopping its JVM).")


if __name__ == "__main__":
    main()
