"""What the fairness report costs: `handaudit report fairness` on an audit, in turns, each a
fresh process, wall seconds and peak memory; the median and the range.

    python scripts/bench_fairness.py bench/fairness-1m/audit.duckdb --runs 5

Make the audit first, e.g. `handaudit verify bench/append-1000000-100000/all.parquet --out
bench/fairness-1m` (1,100,000 Taiwanese hands, `scripts/bench_append.py` writes them).
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path


def once(db: Path) -> tuple[float, float]:
    """One report in a fresh process: its wall seconds and its peak memory in MB."""
    started = time.perf_counter()
    command = [sys.executable, "-m", "pipeline", "report", "fairness", "--db", str(db)]
    done = subprocess.run([*command, "--format", "csv"], capture_output=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(done.stderr.decode())
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return seconds, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("db", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    runs = [once(args.db) for _ in range(args.runs)]
    seconds = [s for s, _ in runs]
    print(
        f"report fairness on {args.db}: median {statistics.median(seconds):.2f} s "
        f"(range {min(seconds):.2f}-{max(seconds):.2f}, {args.runs} runs), "
        f"peak memory {max(p for _, p in runs):,.0f} MB"
    )


if __name__ == "__main__":
    main()
