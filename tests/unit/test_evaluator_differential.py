"""The vectorized evaluator against phevaluator (plain rows) and brute force (jokers)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from pipeline.core.cards import JOKER
from pipeline.core.evaluator import Plays, evaluate
from pipeline.core.evaluator.deal import deal
from tests.scalar import best_any, best_omaha, best_with_jokers

KINDS = {"top": (1, Plays.ANY), "middle": (2, Plays.ANY), "bottom": (4, Plays.EXACTLY_TWO)}


def assert_same_order(ours: np.ndarray, theirs: np.ndarray) -> None:
    """`theirs` ranks hands smaller-is-stronger; the two must order every pair of rows alike."""
    pairs = np.unique(np.stack([ours, theirs], axis=1), axis=0)
    assert len(pairs) == len(np.unique(ours)) == len(np.unique(theirs))  # ties are the same ties
    assert (np.diff(pairs[:, 1]) < 0).all()  # sorted by ours, theirs strictly falls


@pytest.mark.parametrize("kind", KINDS)
def test_one_million_rows_order_like_phevaluator(kind: str) -> None:
    pheval = pytest.importorskip("phevaluator._pheval")
    size, plays = KINDS[kind]
    rows, boards = deal(np.random.default_rng(11), 1_000_000, size)
    ours = evaluate(rows, boards, plays=plays).value
    r, b = rows.tolist(), boards.tolist()
    if kind == "bottom":
        theirs = [pheval.evaluate_omaha_cards(*bb, *rr) for rr, bb in zip(r, b, strict=True)]
    else:
        fn = pheval.evaluate_6cards if size == 1 else pheval.evaluate_7cards
        theirs = [fn(*rr, *bb) for rr, bb in zip(r, b, strict=True)]
    assert_same_order(ours, np.array(theirs))


def brute_force(
    rows: np.ndarray, boards: np.ndarray, plays: Plays
) -> tuple[np.ndarray, np.ndarray]:
    """Try every allowed substitute with the plain evaluator; keep the first best, in card order."""
    jokers = int((rows == JOKER).sum(axis=1)[0])
    slots = np.argsort(rows != JOKER, axis=1, kind="stable")[:, :jokers]  # joker positions
    taken = np.zeros((len(rows), 53), dtype=bool)
    np.put_along_axis(taken, rows.astype(np.intp), True, axis=1)
    np.put_along_axis(taken, boards.astype(np.intp), True, axis=1)
    best = np.full(len(rows), -1, dtype=np.int16)
    first = np.full((len(rows), jokers), -1, dtype=np.int8)
    for subs in itertools.combinations(range(52), jokers):
        trial = rows.copy()
        for slot, card in zip(slots.T, subs, strict=True):
            trial[np.arange(len(rows)), slot] = card
        value = evaluate(trial, boards, plays=plays).value
        value[taken[:, list(subs)].any(axis=1)] = -1  # not allowed: in the row or on the board
        better = value > best
        best[better] = value[better]
        first[better] = subs
    return best, first


@pytest.mark.parametrize(
    ("kind", "jokers", "n"),
    [
        ("top", 1, 100_000),
        ("middle", 1, 100_000),
        ("middle", 2, 100_000),
        ("bottom", 1, 100_000),
        ("bottom", 2, 100_000),
    ],
)
def test_jokers_match_brute_force(kind: str, jokers: int, n: int) -> None:
    size, plays = KINDS[kind]
    rows, boards = deal(np.random.default_rng(jokers * 10 + size), n, size, jokers=jokers)
    result = evaluate(rows, boards, plays=plays)
    best, first = brute_force(rows, boards, plays)
    assert (result.value == best).all()
    assert (result.joker_as[:, :jokers] == first).all()
    assert (result.joker_as[:, jokers:] == -1).all()


@pytest.mark.parametrize(
    ("kind", "jokers", "n"),
    [
        ("top", 0, 300),
        ("top", 1, 200),
        ("middle", 0, 300),
        ("middle", 1, 60),
        ("middle", 2, 12),
        ("bottom", 0, 300),
        ("bottom", 1, 20),
        ("bottom", 2, 4),
    ],
)
def test_against_the_scalar_evaluator(kind: str, jokers: int, n: int) -> None:
    """A small sample against the plain one-row-at-a-time evaluator of tests/scalar.py."""
    size, plays = KINDS[kind]
    rows, boards = deal(np.random.default_rng(100 + jokers * 10 + size), n, size, jokers=jokers)
    result = evaluate(rows, boards, plays=plays)
    omaha = plays is Plays.EXACTLY_TWO
    keys = []
    for i, (row, board) in enumerate(zip(rows.tolist(), boards.tolist(), strict=True)):
        if jokers:
            key, first = best_with_jokers(tuple(row), tuple(board), omaha)
            assert result.joker_as[i, :jokers].tolist() == list(first)
        else:
            key = (best_omaha if omaha else best_any)(tuple(row), tuple(board))
        keys.append(key)
    # Same order: sorting by our value sorts the scalar keys.
    by_value = sorted(range(n), key=lambda i: int(result.value[i]))
    for a, b in itertools.pairwise(by_value):
        assert (keys[a] < keys[b]) if result.value[a] < result.value[b] else keys[a] == keys[b]
