"""Some hands of a batch taken as a batch of their own, and parts of several batches
joined (`core/batch.py`): a hand scored in a part diverges exactly as it does in its
whole batch, for every game, on the examples' faulty histories (whose hands diverge)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pipeline.core.inference import candidate
from pipeline.core.rules import RuleBook
from pipeline.engine.pool import Pool, read_pool
from pipeline.ingest.house_rules import read_rules
from tests.conftest import EXAMPLES

HOUSE = EXAMPLES / "house-rules"
SETS = {
    "taiwanese": [EXAMPLES / "faults" / "hands.jsonl", EXAMPLES / "clean"],
    "family": [EXAMPLES / "family" / "faults" / "hands.jsonl", EXAMPLES / "family" / "clean"],
    "house": [HOUSE / f"{name}-faults" / "hands.jsonl" for name in ("asia", "ofc_capped")],
}


def inputs(paths: list[Path]) -> list[Path]:
    return [f for p in paths for f in (sorted(p.glob("*.jsonl")) if p.is_dir() else [p])]


def unscored(pool: Pool) -> Pool:
    pool.memo.clear()
    pool.parts.clear()
    return pool


@pytest.mark.parametrize("name", sorted(SETS))
def test_hands_scored_apart_diverge_as_in_their_whole_batches(name: str) -> None:
    pool = read_pool(inputs(SETS[name]))
    assert len(pool.batches) >= 2  # parts of several batches are joined
    book: RuleBook = read_rules(HOUSE / "house.toml")
    games = sorted(set(pool.game))
    profiles = [candidate(g, {}) for g in games] + [p for p in book.house if p.game in games]
    rng = np.random.default_rng(7)
    everything = np.arange(len(pool))
    diverged = 0
    for profile in profiles:
        whole = unscored(pool).divergences(profile, everything)
        diverged += int((whole > 0).sum())
        for share in (0.1, 0.3):  # fewer than half of each batch: taken, then joined
            some = np.sort(rng.choice(len(pool), int(share * len(pool)), replace=False))
            apart = unscored(pool).divergences(profile, some)
            assert pool.parts, "the hands were not scored apart"
            np.testing.assert_array_equal(apart, whole[some])
        table = np.flatnonzero(np.array(pool.table_id) == pool.table_id[-1])
        pool.focus_on(table)  # one table held as one batch, its parts taken from it
        for share in (1.0, 0.4):
            some = np.sort(rng.choice(table, max(1, int(share * len(table))), replace=False))
            apart = unscored(pool).divergences(profile, some)
            np.testing.assert_array_equal(apart, whole[some])
        pool.focus_on(None)
    assert diverged  # the comparison saw divergences, not only clean hands
