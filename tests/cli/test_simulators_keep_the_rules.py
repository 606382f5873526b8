"""Every game's simulator at the sizes where rare mistakes show: at least 50,000 hands of
each, generated without faults, verify with no finding and nothing quarantined, and
their deal passes the fairness report (a fair shuffle, dealt as the rules deal).

A mistake that shows once in 5,000 hands (a player's id reused for a new stack, a
seat's Fantasyland handed to its next player) is invisible in a fixture of a few
hundred. The four games are generated two at a time (the machine has two cores).
"""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import duckdb
import pytest

from pipeline.outputs.fairness import fairness_report
from pipeline.outputs.reports import Filters
from tests.conftest import ROOT

# (variant, tables, hands a table): 50,000 hands or more each.
GAMES = [
    ("taiwanese", 100, 500),  # Taiwanese Jokers tables among them (--jokers)
    ("chinese", 200, 250),
    ("ofc", 200, 250),
    ("pineapple_ofc", 200, 250),
]


def _generated_and_verified(variant: str, tables: int, hands: int, folder: Path) -> str:
    history = folder / f"{variant}.jsonl.gz"
    run = [sys.executable, "-m", "pipeline"]
    generate = [*run, "generate", "--variant", variant, "--tables", str(tables)]
    generate += ["--hands", str(hands), "--seed", "11", "--out", str(history)]
    generate += ["--jokers", "0.3"] if variant.startswith("taiwanese") else []
    made = subprocess.run(generate, capture_output=True, text=True, cwd=ROOT, timeout=900)
    assert made.returncode == 0, made.stderr
    verify = [*run, "verify", str(history), "--out", str(folder / variant)]
    return subprocess.run(verify, capture_output=True, text=True, cwd=ROOT, timeout=900).stdout


@pytest.mark.slow
def test_fifty_thousand_generated_hands_of_every_game_verify_clean(tmp_path: Path) -> None:
    with ThreadPoolExecutor(2) as pool:
        said = dict(
            zip(
                [g[0] for g in GAMES],
                pool.map(lambda g: _generated_and_verified(g[0], g[1], g[2], tmp_path), GAMES),
                strict=True,
            )
        )
    for variant, tables, hands in GAMES:
        with duckdb.connect(str(tmp_path / variant / "audit.duckdb"), read_only=True) as con:
            verified = con.execute("SELECT count(*) FROM hands").fetchall()[0][0]
            findings = con.execute(
                'SELECT "check", count(*) FROM divergences GROUP BY 1 ORDER BY 1'
            ).fetchall()
            quarantined = con.execute("SELECT count(*) FROM quarantine").fetchall()[0][0]
        assert verified == tables * hands >= 50_000, said[variant]
        assert (findings, quarantined) == ([], 0), (variant, said[variant])
        fairness = fairness_report(tmp_path / variant / "audit.duckdb", Filters(), 0.01)
        flagged = [row for row in fairness.rows.to_pylist() if row["flagged"]]
        assert fairness.totals["tests"] > 5 and not flagged, (variant, flagged)
