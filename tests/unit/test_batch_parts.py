"""Some hands of a batch taken as a batch of their own, and parts of several batches
joined (`core/batch.py`): a hand scored in a part diverges exactly as it does in its
whole batch, for every game, on the examples' faulty histories (whose hands diverge)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from pipeline.core.audit import evaluated, score, unruled
from pipeline.core.batch import HandBatch
from pipeline.core.checks.family import _dealt_beyond, check_chinese, check_placements
from pipeline.core.checks.findings import Findings
from pipeline.core.inference import candidate, hand_rules
from pipeline.core.rules import RuleBook
from pipeline.core.scoring import low_middles
from pipeline.engine.infer import _Searcher
from pipeline.engine.pool import (
    READING,
    Pool,
    Scorable,
    _by_game,
    _divergences,
    _own,
    _reading_rules,
    _taken,
    force,
    read_pool,
)
from pipeline.engine.recorded import Recorded
from pipeline.ingest import decode, validate
from pipeline.ingest.house_rules import read_rules
from pipeline.ingest.sources import read_blocks
from tests.conftest import EXAMPLES

HOUSE = EXAMPLES / "house-rules"
SETS = {
    "taiwanese": [EXAMPLES / "faults" / "hands.jsonl", EXAMPLES / "clean"],
    "family": [EXAMPLES / "family" / "faults" / "hands.jsonl", EXAMPLES / "family" / "clean"],
    "house": [HOUSE / f"{name}-faults" / "hands.jsonl" for name in ("asia", "ofc_capped")],
}
SETS["mixed"] = [SETS["taiwanese"][0], SETS["family"][0]]  # games dealt on boards, and not


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
        for share in (1.0, 0.4):  # one table's hands, all or some
            some = np.sort(rng.choice(table, max(1, int(share * len(table))), replace=False))
            apart = unscored(pool).divergences(profile, some)
            np.testing.assert_array_equal(apart, whole[some])
    assert diverged  # the comparison saw divergences, not only clean hands


@pytest.mark.parametrize("name", sorted(SETS))
def test_hands_taken_in_any_order_diverge_as_in_their_batch(name: str) -> None:
    # The pool is held table by table (`by_table`): hands taken from a batch in any
    # order, with their players, streets, rows and settlements following them.
    pool = read_pool(inputs(SETS[name]))
    rng = np.random.default_rng(11)
    diverged = 0
    for scorable, (batch, _, offset) in zip(_scorables(pool), pool.batches, strict=True):
        assert all((np.diff(owner) >= 0).all() for owner in _owners(batch))  # as held,
        assert not len(batch.players.streets)  # without the streets `unruled` read
        profile = candidate(int(batch.hands.game[0]), {})
        whole = pool.divergences(profile, offset + np.arange(len(batch)))
        order = rng.permutation(len(batch))[: max(1, 2 * len(batch) // 3)]
        part = _taken(scorable, order)
        apart = _divergences(*part, hand_rules(profile))
        np.testing.assert_array_equal(apart, whole[order])
        # each hand's players, their streets and rows, its settlements follow it, in its
        for owner in _owners(part[0]):  # new place
            assert (np.diff(owner) >= 0).all()
        diverged += int((apart > 0).sum())
    assert diverged


def test_the_pool_holds_each_table_in_one_batch_and_knows_the_order_read() -> None:
    files = inputs(SETS["house"] + SETS["family"])
    pool = read_pool(files)
    read: dict[str, None] = {}  # each hand id, first read (a block's games are read one
    for line in (line for f in files for line in f.read_text().splitlines()):  # after
        with contextlib.suppress(ValueError, KeyError, TypeError):  # another: by game)
            read.setdefault(json.loads(line)["hand_id"], None)
    game = dict(zip(pool.hand_id, pool.game, strict=True))
    in_order = [pool.hand_id[i] for i in np.argsort(pool.read_at)]
    for code in set(pool.game):
        assert [h for h in in_order if game[h] == code] == [
            h for h in read if h in game and game[h] == code
        ]
    starts = np.array([offset for _, _, offset in pool.batches])
    tables = np.array(pool.table_id)
    for table in set(pool.table_id):
        mine = np.flatnonzero(tables == table)
        assert len(set(np.searchsorted(starts, mine, side="right"))) == 1, table
        assert (np.diff(mine) == 1).all() and (np.diff(np.array(pool.hand_no)[mine]) >= 0).all()
    searcher = _Searcher(pool, Recorded(pool), None)  # its pooled readings: in the order read
    for code in set(pool.game):
        mine = searcher._of(code, None)
        assert [pool.hand_id[i] for i in mine] == [h for h in in_order if game[h] == code]


def _owners(batch: HandBatch) -> list[npt.NDArray[np.int64]]:
    """Each column of a batch that names its items' owners (non-decreasing: `HandBatch`)."""
    streets = batch.players.streets
    return [batch.players.hand, streets.player, batch.rows.player, batch.settlements.hand,
            batch.sitting_out.hand, *(street for _, street in streets.parts.values())]  # fmt: skip


def _scorables(pool: Pool) -> list[Scorable]:
    return [(b, own, shown, rows) for (b, own, _), shown, rows
            in zip(pool.batches, pool.shown, pool.unruled, strict=True)]  # fmt: skip


@pytest.mark.parametrize("name", sorted(SETS))
def test_candidates_scored_together_diverge_as_each_scored_alone(name: str) -> None:
    pool = read_pool(inputs(SETS[name]))
    book: RuleBook = read_rules(HOUSE / "house.toml")
    games = sorted(set(pool.game))
    profiles = [candidate(g, {}) for g in games] + [p for p in book.house if p.game in games]
    rng = np.random.default_rng(5)
    alone = {p.digest: unscored(pool).divergences(p, np.arange(len(pool))) for p in profiles}
    for share in (0.05, 0.6):
        some = rng.choice(len(pool), max(1, int(share * len(pool))), replace=False)
        unscored(pool).score_together(profiles, some)
        assert len(pool.memo) == len(profiles)
        for profile in profiles:  # each hand as scored alone, and only those asked
            found = pool.memo[hand_rules(profile).digest][np.arange(len(pool))]
            np.testing.assert_array_equal(found[some], alone[profile.digest][some])
            assert (found >= 0).sum() == len(some)
    assert sum(int((a > 0).sum()) for a in alone.values())  # hands diverged


def test_placements_found_once_and_under_each_profile_are_those_a_verify_finds() -> None:
    # `rules infer` finds the placements no profile changes once (`misplaced`) and the
    # cards a Fantasyland street deals, which a profile bounds, under each candidate:
    # the same players as `check_placements`, which a verify runs.
    files = inputs(SETS["family"] + SETS["house"] + [HOUSE / "pineapple_prog-faults"])
    book: RuleBook = read_rules(HOUSE / "house.toml")
    compared = wrong = beyond = 0
    for batch, own, shown, fixed in _with_streets(files):
        game = int(batch.hands.game[0])
        for profile in [candidate(game, {}), *(p for p in book.house if p.game == game)]:
            forced = force(batch, own, profile)
            over = _dealt_beyond(forced, fixed.placed.dealt)  # a Fantasyland street's cards
            findings = Findings()
            check_placements(forced, findings)
            found = np.zeros(len(batch.players), dtype=bool)
            found[_player_of(forced, findings)] = True
            np.testing.assert_array_equal(fixed.placed.misplaced | over, found)
            scored = score(forced, replace(shown, value=low_middles(forced, shown.value)))
            assert scored.chinese is not None
            counts = [Findings(marks_only=True) for _ in range(2)]  # each way, per hand
            check_chinese(forced, scored.chinese, counts[0])
            check_chinese(forced, scored.chinese, counts[1], fixed.placed)
            np.testing.assert_array_equal(
                counts[0].counts(len(batch)), counts[1].counts(len(batch))
            )
            compared += len(found)
            wrong += int(found.sum())
            beyond += int((over & ~fixed.placed.misplaced).sum())
    assert compared and wrong and beyond  # placements went wrong, some by the cards dealt


def _with_streets(files: list[Path]) -> Iterator[Scorable]:
    """Each verified batch of `files` as `read_pool` reads it, its streets kept (the pool
    holds them without: what they show was found once, `unruled`)."""
    for path in files:
        for block in read_blocks(path):
            for part in _by_game(decode(block, threads=False)):
                reading = replace(part, table=_reading_rules(part.table))
                for batch in validate(reading, set(), READING)[0]:
                    shown = evaluated(batch)
                    yield batch, _own(batch, part.table), shown, unruled(batch, shown)


def _player_of(batch: HandBatch, findings: Findings) -> npt.NDArray[np.int64]:
    """The players of `findings` (each names their hand and seat)."""
    players = batch.players
    key = players.hand * 16 + players.seat
    return np.searchsorted(key, np.array(findings.hand) * 16 + np.array(findings.seat))
