"""Hypothesis: a row's value never depends on the order of cards in the row or on the board."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.core.cards import JOKER
from pipeline.core.evaluator import Plays, evaluate

KINDS = [(1, Plays.ANY), (2, Plays.ANY), (4, Plays.EXACTLY_TWO)]


@st.composite
def deals(draw: st.DrawFn) -> tuple[list[int], list[int], int, Plays]:
    size, plays = draw(st.sampled_from(KINDS))
    jokers = draw(st.integers(0, min(2, size)))
    cards = draw(st.permutations(range(52)))
    row = [JOKER] * jokers + cards[: size - jokers]
    return row, cards[size - jokers : size - jokers + 5], size, plays


@settings(max_examples=300, deadline=None)
@given(deal=deals(), data=st.data())
def test_card_order_never_changes_a_value(
    deal: tuple[list[int], list[int], int, Plays], data: st.DataObject
) -> None:
    row, board, _, plays = deal
    row2 = data.draw(st.permutations(row))
    board2 = data.draw(st.permutations(board))
    a = evaluate(np.array([row]), np.array([board]), plays=plays)
    b = evaluate(np.array([row2]), np.array([board2]), plays=plays)
    assert a.value[0] == b.value[0]
    assert a.joker_as.tolist() == b.joker_as.tolist()


@settings(max_examples=200, deadline=None)
@given(deal=deals())
def test_a_batch_gives_what_each_row_gives_alone(
    deal: tuple[list[int], list[int], int, Plays],
) -> None:
    """Vectorized and one-at-a-time agree: a row's result does not depend on its neighbours."""
    row, board, size, plays = deal
    rng = np.random.default_rng(len(row) + board[0])
    from pipeline.core.evaluator.deal import deal as random_deals

    rows, boards = random_deals(rng, 50, size, jokers=int(rng.integers(0, min(2, size) + 1)))
    rows = np.vstack([rows, [row]]).astype(np.int8) if len(row) == size else rows
    boards = np.vstack([boards, [board]]).astype(np.int8)
    batch = evaluate(rows, boards, plays=plays)
    alone = evaluate(rows[-1:], boards[-1:], plays=plays)
    assert batch.value[-1] == alone.value[0]
    assert batch.joker_as[-1].tolist() == alone.joker_as[0].tolist()
