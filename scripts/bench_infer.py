"""`rules infer` beside a plain `verify` of the same hands (the issue's bound: 3 times).

Run: .venv/bin/python scripts/bench_infer.py [--hands 200000] [--variant taiwanese]
     [--profile NAME [--faults RATE] [--table-hands 1000]] [--runs 3] [--ref REV]
On the bench's data set of the variant (made on first use, `bench_pipeline.data_set`),
or with --profile, tables of 1,000 hands (or --table-hands) dealt by that profile of the
public house-rules file (verified under it, inferred with it withheld), each command in a
fresh process, in turns (verify, infer, verify, infer, ...: the machine's speed drifts).
With --ref, the infer of another commit (from a temporary git worktree, this venv) runs
in the same turns. Prints the median seconds of each, and the ratios.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts.bench_compare import commit, worktree  # noqa: E402
from scripts.bench_pipeline import data_set  # noqa: E402


def timed(tree: Path, *args: str) -> float:
    """Seconds of one `handaudit ARGS` by the code in `tree`, in a fresh process."""
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pipeline", *args],
        cwd=tree,
        env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - began
    if done.returncode not in (0, 1):
        sys.exit(f"bench_infer: {' '.join(args)} in {tree} failed:\n{done.stderr}")
    return seconds


HOUSE = ROOT / "fixtures" / "examples" / "house-rules" / "house.toml"


def profile_set(
    hands: int, out: Path, profile: str, faults: float = 0.0, table_hands: int = 1000
) -> Path:
    """Tables of `table_hands` hands dealt by `profile` of the public house-rules file
    (with `faults`, that share of hands given a fault)."""
    name = f"{profile}-{hands}" + (f"-faults-{faults}" if faults else "")
    name += f"-tables-of-{table_hands}" if table_hands != 1000 else ""
    path = out / name / "hands.jsonl"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tables = str(max(1, hands // table_hands))
        args = ["generate", "--rules", str(HOUSE), "--profile", profile, "--tables", tables]
        args += ["--hands", str(min(hands, table_hands)), "--out", str(path)]
        args += ["--faults", str(faults)]
        timed(ROOT, *args)
    return path


def measure(
    trees: dict[str, Path], data: Path, out: Path, runs: int, rules: tuple[str, ...] = ()
) -> dict[str, list[float]]:
    """Each command's seconds, in turns: verify by this tree (under `rules`), then infer
    by each tree (without)."""
    seconds: dict[str, list[float]] = {"verify": [], **{f"infer {k}": [] for k in trees}}
    for _ in range(runs):
        seconds["verify"].append(timed(ROOT, "verify", str(data), "--out", str(out), *rules))
        for label, tree in trees.items():
            seconds[f"infer {label}"].append(timed(tree, "rules", "infer", str(data)))
        print(", ".join(f"{k} {v[-1]:.1f} s" for k, v in seconds.items()), flush=True)
    return seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--hands", type=int, default=200_000)
    ap.add_argument("--variant", default="taiwanese")
    ap.add_argument("--profile", help="a profile of the public house-rules file, withheld")
    ap.add_argument("--faults", type=float, default=0.0, help="with --profile: a share")
    ap.add_argument("--table-hands", type=int, default=1000, help="with --profile: a table's")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--ref", help="another commit whose infer runs in the same turns")
    ap.add_argument("--out", type=Path, default=ROOT / "bench")
    a = ap.parse_args()
    a.out.mkdir(exist_ok=True)
    rules: tuple[str, ...] = ()
    if a.profile is None:
        jsonl, _ = data_set(a.hands, a.out, a.variant)
    else:
        jsonl = profile_set(a.hands, a.out, a.profile, a.faults, a.table_hands)
        rules = ("--rules", str(HOUSE))
    print(f"# {a.hands:,} hands ({jsonl}), {a.runs} runs each, in turns")
    if a.ref is None:
        seconds = measure({"this tree": ROOT}, jsonl, a.out / "infer-audit", a.runs, rules)
    else:
        with worktree(commit(a.ref)) as tree:
            trees = {a.ref: tree, "this tree": ROOT}
            seconds = measure(trees, jsonl, a.out / "infer-audit", a.runs, rules)
    medians = {k: statistics.median(v) for k, v in seconds.items()}
    print("\n| command | seconds (median) | runs | / verify |")
    print("| --- | ---: | --- | ---: |")
    for label, median in medians.items():
        listed = ", ".join(f"{s:.1f}" for s in seconds[label])
        print(f"| {label} | {median:.1f} | {listed} | {median / medians['verify']:.2f} |")
    if a.ref is not None:
        ratio = medians["infer this tree"] / medians[f"infer {a.ref}"]
        print(f"\ninfer, this tree / {a.ref}: {ratio:.2f}")


if __name__ == "__main__":
    main()
