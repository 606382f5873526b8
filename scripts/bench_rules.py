"""The cost of house rules: one history mixing three profiles of three games, audited with
`--rules`, beside the same games dealt by the contract, audited without.

Run: .venv/bin/python scripts/bench_rules.py [--hands 200000] [--runs 3]
Generates (or reuses) in bench/rules-N/: a third of the hands under each of
`jokers_deep` (Taiwanese Jokers), `asia` (closed Chinese) and `pineapple_prog`
(Pineapple) of fixtures/examples/house-rules/house.toml, and the same games, tables and
seeds under the contract; each set's lines interleaved into one JSON Lines file (so every
block of input mixes the profiles). Then, in turns, each in a fresh process: `verify` of
each file into an empty directory. Medians of --runs.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "fixtures" / "examples" / "house-rules" / "house.toml"
HANDS_PER_TABLE = 200
# profile -> the generate options of its game under the contract
PROFILES = {
    "jokers_deep": ["--variant", "taiwanese", "--jokers", "1"],
    "asia": ["--variant", "chinese", "--scoring", "2-4"],
    "pineapple_prog": ["--variant", "pineapple_ofc"],
}


def _generate(out: Path, tables: int, options: list[str]) -> None:
    run = [sys.executable, "-m", "pipeline", "generate", "--tables", str(tables), "--hands"]
    run += [str(HANDS_PER_TABLE), "--seed", "5", "--out", str(out), *options]
    subprocess.run(run, check=True, cwd=ROOT, capture_output=True)


def data(hands: int, out: Path) -> tuple[Path, Path]:
    """The house-rules history and the contract's, each one interleaved file."""
    folder = out / f"rules-{hands}"
    house, contract = folder / "house.jsonl", folder / "contract.jsonl"
    if house.exists() and contract.exists():
        return house, contract
    folder.mkdir(parents=True, exist_ok=True)
    tables = max(1, hands // len(PROFILES) // HANDS_PER_TABLE)
    for target, per_profile in (
        (house, {p: ["--rules", str(RULES), "--profile", p] for p in PROFILES}),
        (contract, PROFILES),
    ):
        lines: list[str] = []
        for name, options in per_profile.items():
            part = folder / f"{target.stem}-{name}.jsonl"
            _generate(part, tables, options)
            lines += part.read_text().splitlines(keepends=True)
            part.unlink()
        random.Random(7).shuffle(lines)
        target.write_text("".join(lines))
    return house, contract


def timed(*args: str) -> float:
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "pipeline", *args], cwd=ROOT, capture_output=True, text=True
    )
    if result.returncode != 0:
        raise SystemExit(result.stdout + result.stderr)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hands", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path, default=ROOT / "bench")
    args = parser.parse_args()
    house, contract = data(args.hands, args.out)
    audits = args.out / "rules-audits"
    with_rules, without = [], []
    for run in range(args.runs):
        shutil.rmtree(audits, ignore_errors=True)
        without.append(timed("verify", str(contract), "--out", str(audits / "contract")))
        with_rules.append(
            timed("verify", str(house), "--rules", str(RULES), "--out", str(audits / "house"))
        )
        print(f"run {run + 1}: contract {without[-1]:.2f} s, three profiles {with_rules[-1]:.2f} s")
    a, b = statistics.median(without), statistics.median(with_rules)
    print(
        f"{args.hands:,} hands, a third under each of three profiles: {b:.2f} s with --rules; "
        f"the same games under the contract: {a:.2f} s; ratio {b / a:.2f} (medians of {args.runs})"
    )


if __name__ == "__main__":
    main()
