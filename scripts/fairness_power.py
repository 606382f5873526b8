"""How often the fairness report flags a deal: power on biased deals, false alarms on fair
ones, over many seeds, through the real pipeline (generate, verify, report fairness).

    python scripts/fairness_power.py --seeds 100 --hands 1500 15000 --out bench/fairness

Each trial generates a history of the games asked (`--games taiwanese`: Taiwanese and
Taiwanese Jokers tables, half each; `--games family`: closed Chinese, Open-Face and
Pineapple tables, a third each), audits it, runs `report fairness` at `--alpha`, and
records whether anything, and which tests, were flagged. It writes one JSON line per
trial, and a summary per scenario and size: the share of seeds flagged with its 95%
Clopper-Pearson interval. Trials run side by side (`--workers`).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from scipy import stats

from pipeline.engine.verify import verify
from pipeline.generate.run import generate
from pipeline.generate.shuffle import dealer_for
from pipeline.outputs.fairness import fairness_report
from pipeline.outputs.reports import Filters

GAMES = {"taiwanese": ("taiwanese",), "family": ("chinese", "ofc", "pineapple_ofc")}
# A scenario: its bias (as --bias reads it), the share of hands it touches, its strength.
SCENARIOS = {
    "fair": ("fair", 0.0, 0.0),
    "suit": ("suit", 0.25, 0.1),  # a quarter of hands; seat 1's non-hearts swapped 10%
    "naive": ("naive", 0.25, 0.0),  # a quarter of hands from the naive shuffle
    "sticky": ("sticky", 0.1, 0.0),  # a tenth of hands: the table's last deck barely moved
    "offbyone": ("offbyone", 1.0, 0.0),  # the software's shuffle: every hand
    **{f"riffle:{k}": (f"riffle:{k}", 1.0, 0.0) for k in range(1, 8)},  # a dealer's riffles
}
HANDS_PER_TABLE = 250


def trial(games: str, scenario: str, hands: int, seed: int, alpha: float) -> dict[str, Any]:
    """One history generated, audited and tested; what was flagged."""
    bias, share, strength = SCENARIOS[scenario]
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as work:
        root = Path(work)
        per_game = hands // len(GAMES[games])
        for g, variant in enumerate(GAMES[games]):
            dealer = dealer_for(bias, share, strength, seed * 10 + g)
            tables = max(per_game // HANDS_PER_TABLE, 1)
            generate(
                root / "in" / f"{variant}.jsonl",
                tables=tables,
                hands=per_game // tables,
                seed=seed * 10 + g,
                variant=variant,
                dealer=dealer,
            )
        summary = verify([root / "in"], root / "audit")
        report = fairness_report(root / "audit" / "audit.duckdb", Filters(), alpha)
    rows = report.rows.to_pylist()
    flagged = [f"{r['test']} ({r['scope']})" for r in rows if r["flagged"]]
    return {
        "games": games,
        "scenario": scenario,
        "hands": summary.accounting.verified,
        "seed": seed,
        "diverged": summary.hands_diverged + summary.accounting.quarantined,
        "tests": report.totals["tests"],
        "flagged": flagged,
        "seconds": round(time.perf_counter() - started, 2),
    }


def summarize(trials: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per games, scenario and size: the share of seeds flagged, with its 95% interval."""
    groups: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
    for t in trials:
        groups.setdefault((t["games"], t["scenario"], t["hands"] // 100 * 100), []).append(t)
    rows = []
    for (games, scenario, hands), group in sorted(groups.items()):
        flagged = sum(bool(t["flagged"]) for t in group)
        ci = stats.binomtest(flagged, len(group)).proportion_ci(confidence_level=0.95)
        rows.append(
            {
                "games": games,
                "scenario": scenario,
                "hands": hands,
                "seeds": len(group),
                "flagged": flagged,
                "share": round(flagged / len(group), 3),
                "ci95": [round(ci.low, 3), round(ci.high, 3)],
                "diverged": sum(t["diverged"] for t in group),
                "median_seconds": sorted(t["seconds"] for t in group)[len(group) // 2],
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--first-seed", type=int, default=1)
    parser.add_argument("--hands", type=int, nargs="+", default=[1500, 15000])
    parser.add_argument("--games", nargs="+", default=list(GAMES), choices=list(GAMES))
    parser.add_argument("--scenarios", nargs="+", default=list(SCENARIOS), choices=SCENARIOS)
    parser.add_argument("--alpha", type=float, default=0.01)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("bench/fairness"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    jobs = [
        (games, scenario, hands, seed, args.alpha)
        for hands in args.hands
        for games in args.games
        for scenario in args.scenarios
        for seed in range(args.first_seed, args.first_seed + args.seeds)
    ]
    trials = []
    with (
        ProcessPoolExecutor(args.workers) as pool,
        (args.out / "trials.jsonl").open("a") as log,
    ):
        for result in pool.map(trial, *zip(*jobs, strict=True)):
            trials.append(result)
            log.write(json.dumps(result) + "\n")
            log.flush()
    summary = summarize(trials)
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    for row in summary:
        print(json.dumps(row))


if __name__ == "__main__":
    main()
