"""The ledger's cost: appending a day to a large audit, beside auditing that day alone.

Run: make bench (or .venv/bin/python scripts/bench_append.py --history 1000000 --day 100000).
Generates (or reuses) in bench/ Taiwanese tables of 200 hands as Parquet, and splits
them by hand number: the earlier hands of every table are the history, the later ones
the next day (so the day continues every table, as a day's export does). Then, in
turns, each in a fresh process: `verify DAY` into an empty directory, and
`verify DAY --append` onto a copy of the history's audit. Medians of --runs. With
--engine spark, every run is Spark's (`verify --engine spark [--append]`), with the
Parquet dataset beside each audit.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parent.parent
HANDS_PER_TABLE = 200


def data(history: int, day: int, out: Path) -> tuple[Path, Path]:
    """The history's and the day's Parquet files (the day: the last hand numbers)."""
    folder = out / f"append-{history}-{day}"
    whole, past, later = folder / "all.parquet", folder / "history.parquet", folder / "day.parquet"
    tables = (history + day) // HANDS_PER_TABLE
    if not whole.exists():
        subprocess.run(
            [sys.executable, "-m", "pipeline", "generate", "--tables", str(tables), "--hands",
             str(HANDS_PER_TABLE), "--seed", "3", "--format", "parquet", "--out", str(whole)],
            check=True, cwd=ROOT,
        )  # fmt: skip
    cut = HANDS_PER_TABLE * history // (history + day)  # hand numbers above it: the day
    if not later.exists():
        con = duckdb.connect()
        for path, where in ((past, f"<= {cut}"), (later, f"> {cut}")):
            con.execute(
                f"COPY (SELECT * FROM read_parquet('{whole}') WHERE hand_no {where}) "
                f"TO '{path}' (FORMAT parquet)"
            )
        con.close()
    return past, later


def timed(*args: str) -> float:
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "pipeline", *args], cwd=ROOT, capture_output=True, text=True
    )
    if result.returncode not in (0, 1):
        raise SystemExit(result.stderr)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--history", type=int, default=1_000_000)
    parser.add_argument("--day", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path, default=ROOT / "bench")
    parser.add_argument(
        "--engine",
        choices=("local", "spark"),
        default="local",
        help="spark: the history audited by Spark, the day alone and appended by Spark",
    )
    parser.add_argument("--master", default="local[2]", help="Spark's master (--engine spark)")
    args = parser.parse_args()
    engine = ["--engine", "spark", "--master", args.master] if args.engine == "spark" else []
    past, later = data(args.history, args.day, args.out)
    work = args.out / f"append-work-{args.history}-{args.day}-{args.engine}"
    history_audit = work / "history"
    if not (history_audit / "audit.duckdb").exists():
        seconds = timed("verify", str(past), *engine, "--out", str(history_audit))
        print(f"history: {args.history:,} hands audited in {seconds:.1f} s ({args.engine})")
    alone, appended = [], []
    for run in range(args.runs):
        shutil.rmtree(work / "alone", ignore_errors=True)
        alone.append(timed("verify", str(later), *engine, "--out", str(work / "alone")))
        shutil.rmtree(work / "ledger", ignore_errors=True)
        shutil.copytree(history_audit, work / "ledger")
        appended.append(
            timed("verify", str(later), *engine, "--append", "--out", str(work / "ledger"))
        )
        print(f"run {run + 1}: alone {alone[-1]:.2f} s, appended {appended[-1]:.2f} s")
    a, b = statistics.median(alone), statistics.median(appended)
    print(
        f"{args.engine}: the day ({args.day:,} hands) alone: {a:.2f} s; appended to "
        f"{args.history:,} hands: {b:.2f} s; ratio {b / a:.2f} (medians of {args.runs})"
    )


if __name__ == "__main__":
    main()
