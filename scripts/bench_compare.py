"""Side by side: this tree against another commit, on the same data, runs alternating.

Run: .venv/bin/python scripts/bench_compare.py REV [--hands 200000] [--repeat 3]
The machine's speed drifts over an hour, so the two are timed in turns (A B A B ...)
on the bench's data set (made by `make bench` or on first use), each run in a fresh
process; the other commit runs from a git worktree in bench/, with this venv.
Prints the median seconds and CPU seconds of each, per input, and their ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts.bench_pipeline import data_set  # noqa: E402


def worktree(rev: str, out: Path) -> Path:
    sha = subprocess.run(
        ["git", "rev-parse", "--short", rev], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout.strip()
    path = out / f"tree-{sha}"
    if not path.exists():
        subprocess.run(["git", "worktree", "add", "--detach", str(path), sha], check=True, cwd=ROOT)
    return path


def run(tree: Path, data: Path, out: Path, workers: int) -> dict[str, float]:
    """One verify of `data` by the code in `tree`, in a fresh process."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    finished = subprocess.run(
        [
            sys.executable,
            str(tree / "scripts" / "bench_pipeline.py"),
            "--measure",
            str(data),
            str(out),
            "--workers",
            str(workers),
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=tree,
        env=env,
    )
    figures: dict[str, float] = json.loads(finished.stdout.splitlines()[-1])
    return figures


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("rev", help="the commit to compare this tree with")
    ap.add_argument("--hands", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workers", type=int, default=min(os.cpu_count() or 1, 4))
    ap.add_argument("--out", type=Path, default=ROOT / "bench")
    a = ap.parse_args()
    a.out.mkdir(exist_ok=True)
    jsonl, parquet = data_set(a.hands, a.out)
    trees = {a.rev: worktree(a.rev, a.out), "this tree": ROOT}
    print(f"# {a.hands:,} hands, {a.workers} workers, {a.repeat} alternating runs each")
    print("\n| input | code | seconds (median) | CPU seconds (median) | runs |")
    print("| --- | --- | ---: | ---: | --- |")
    for name, data in (("Parquet", parquet), ("JSON Lines", jsonl)):
        runs: dict[str, list[dict[str, float]]] = {label: [] for label in trees}
        for _ in range(a.repeat):
            for label, tree in trees.items():
                runs[label].append(run(tree, data, a.out / "compare-audit", a.workers))
        medians = {}
        for label, figures in runs.items():
            seconds = statistics.median(f["seconds"] for f in figures)
            cpu = statistics.median(f["cpu_seconds"] for f in figures)
            medians[label] = seconds
            listed = ", ".join(f"{f['seconds']:.2f}" for f in figures)
            print(f"| {name} | {label} | {seconds:.2f} | {cpu:.1f} | {listed} |")
        ratio = medians["this tree"] / medians[a.rev]
        print(f"| {name} | this tree / {a.rev} | {ratio:.2f} | | |")


if __name__ == "__main__":
    main()
