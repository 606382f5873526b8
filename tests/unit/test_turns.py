"""Tables' searches taking turns (`engine/turns.py`): each finds what it finds alone, in
the order of the jobs, their asks scored in few passes; an error in one is raised."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
import pytest

from pipeline.core.inference import candidate
from pipeline.engine import pool as pool_module
from pipeline.engine.infer import _Searcher, table_hands
from pipeline.engine.pool import Pool, read_pool
from pipeline.engine.recorded import Recorded
from pipeline.engine.turns import Turns
from pipeline.ingest.house_rules import read_rules
from tests.conftest import EXAMPLES

HOUSE = EXAMPLES / "house-rules"
SETS = sorted(HOUSE.glob("*/hands.jsonl"))


def _exact_each(pool: Pool, hands: np.ndarray) -> list[int]:
    """A small search's outcome: the exact hands of each profile of the house rules of
    the table's game and the contract, asked one after another."""
    game = pool.game[int(hands[0])]
    profiles = [p for p in read_rules(HOUSE / "house.toml").house if p.game == game]
    return [int(pool.exact(p, hands).sum()) for p in [*profiles, candidate(game, {})]]


def _counted(passes: list[int], scores: Callable[..., Any], *args: Any) -> Any:
    passes.append(1)
    return scores(*args)


def test_searches_in_turns_find_what_each_finds_alone_in_few_passes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tables = list(table_hands(read_pool(SETS)))
    alone = read_pool(SETS)
    expected = [_exact_each(alone, hands) for _, hands in tables]
    pool = read_pool(SETS)
    passes: list[int] = []  # (a pass scores one candidate on a batch, or several stacked)
    for name in ("_divergences", "_stacked"):
        scores = getattr(pool_module, name)
        monkeypatch.setattr(pool_module, name, partial(_counted, passes, scores))
    jobs = [partial(_exact_each, pool, hands) for _, hands in tables]
    assert Turns(pool, 8).run(jobs) == expected  # in the jobs' order, not as they end
    assert pool.defer is None
    asks = sum(len(found) for found in expected)
    assert len(passes) <= asks // 4, (len(passes), asks)  # the asks of 8 searches at once


def test_a_search_in_turns_finds_its_segments_as_alone() -> None:
    pool = read_pool(SETS)
    searcher = _Searcher(pool, Recorded(pool), None)
    tables = list(table_hands(pool))
    for _, hands in tables:
        searcher.shared_seeds(hands)
    jobs = [partial(searcher.segments, t, hands, [], 3) for t, hands in tables]
    found = Turns(pool, 6).run(jobs)
    again = read_pool(SETS)
    alone = _Searcher(again, Recorded(again), None)
    for (table_id, hands), segments in zip(tables, found, strict=True):
        mine = alone.segments(table_id, hands, [], 3)
        assert [(s.profile.digest, s.fit.score, s.hands.tolist()) for s in segments] == [
            (s.profile.digest, s.fit.score, s.hands.tolist()) for s in mine
        ]


def test_an_error_in_one_search_is_raised_once_the_others_end() -> None:
    pool = read_pool(SETS)
    tables = list(table_hands(pool))
    done: list[int] = []

    def job(k: int, hands: np.ndarray) -> None:
        _exact_each(pool, hands)
        if k == 3:
            raise ValueError("a search that fails")
        done.append(k)

    with pytest.raises(ValueError, match="a search that fails"):
        Turns(pool, 4).run([partial(job, k, hands) for k, (_, hands) in enumerate(tables)])
    assert pool.defer is None
    assert 3 not in done and len(done) >= 3
