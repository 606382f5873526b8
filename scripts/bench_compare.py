"""Side by side: this tree against another commit, on the same data, runs alternating.

Run: make bench-compare REF=REV [HANDS=100000] (or .venv/bin/python
scripts/bench_compare.py REV [--hands 200000] [--repeat 3]).
The machine's speed drifts over an hour, so the two are timed in turns (A B A B ...)
on the bench's data set of Taiwanese hands (made by `make bench` or on first use), each
run in a fresh process; the other commit runs, with this venv, from a temporary git
worktree that is removed when the comparison ends (or fails), so nothing is left behind.
Prints the median seconds and CPU seconds of each, per input, and their ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts.bench_pipeline import data_set  # noqa: E402


def commit(rev: str) -> str:
    """The short hash of the commit `rev` names, or a sentence and exit 1 if none."""
    found = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", "--short", f"{rev}^{{commit}}"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    if found.returncode != 0:
        sys.exit(f"bench_compare: {rev!r} names no commit of this repository")
    return found.stdout.strip()


@contextmanager
def worktree(sha: str) -> Iterator[Path]:
    """A detached checkout of `sha` in a temporary folder, gone (and unregistered from
    git) when the block ends, however it ends."""
    parent = Path(tempfile.mkdtemp(prefix="handaudit-bench-compare-"))
    path = parent / f"tree-{sha}"
    try:
        subprocess.run(
            ["git", "worktree", "add", "--quiet", "--detach", str(path), sha],
            check=True,
            cwd=ROOT,
        )
        yield path
    finally:
        removed = subprocess.run(["git", "worktree", "remove", "--force", str(path)], cwd=ROOT)
        shutil.rmtree(parent, ignore_errors=True)
        if removed.returncode != 0:  # never added, or its folder already gone
            subprocess.run(["git", "worktree", "prune"], cwd=ROOT)


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
        cwd=tree,
        env=env,
    )
    if finished.returncode != 0:
        sys.exit(f"bench_compare: the run of {tree} on {data} failed:\n{finished.stderr}")
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
    sha = commit(a.rev)
    a.out.mkdir(exist_ok=True)
    jsonl, parquet = data_set(a.hands, a.out)
    with worktree(sha) as tree:
        compare({a.rev: tree, "this tree": ROOT}, a.rev, jsonl, parquet, a)


def compare(
    trees: dict[str, Path], rev: str, jsonl: Path, parquet: Path, a: argparse.Namespace
) -> None:
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
            print(f"| {name} | {label} | {seconds:.2f} | {cpu:.1f} | {listed} |", flush=True)
        ratio = medians["this tree"] / medians[rev]
        print(f"| {name} | this tree / {rev} | {ratio:.2f} | | |", flush=True)


if __name__ == "__main__":
    main()
