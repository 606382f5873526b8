"""Pair points and Home Runs, from row values."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.core.games import HOME_RUN_NONE, HOME_RUN_OPPONENT, HOME_RUN_SEAT, TAIWANESE
from pipeline.core.games.pairs import pairs_of, player_points
from pipeline.core.games.taiwanese import HandRules, pair_points


def values(*rows: list[int]) -> np.ndarray:
    """Players' values shaped (players, 2 boards, 3 rows) from 6 numbers each."""
    return np.array(rows, dtype=np.int16).reshape(len(rows), 2, 3)


def test_rows_score_one_two_three_and_chops_move_nothing() -> None:
    v = values([5, 5, 5, 5, 5, 5], [4, 5, 6, 4, 5, 6])
    pairs = pair_points(v, np.array([0, 0]), np.array([1, 2]), HandRules.contract(TAIWANESE, 1))
    assert pairs.points.tolist() == [1 - 3 + 1 - 3]
    assert pairs.home_run.tolist() == [HOME_RUN_NONE]


def test_home_run_needs_all_six_won_outright() -> None:
    sweep = values([9] * 6, [1] * 6, [9, 9, 9, 9, 9, 1])
    pairs = pair_points(
        sweep, np.array([0, 0, 0]), np.array([1, 3, 5]), HandRules.contract(TAIWANESE, 1)
    )
    # (1,3): all six won, +8. (1,5): five chops, one bottom won. (3,5): five lost, one chop.
    assert pairs.points.tolist() == [20, 3, -9]
    assert pairs.home_run.tolist() == [HOME_RUN_SEAT, HOME_RUN_NONE, HOME_RUN_NONE]
    lost = pair_points(
        values([1] * 6, [9] * 6),
        np.zeros(2, np.int64),
        np.array([1, 2]),
        HandRules.contract(TAIWANESE, 1),
    )
    assert (lost.points.tolist(), lost.home_run.tolist()) == ([-20], [HOME_RUN_OPPONENT])
    chop = values([9] * 6, [9, 1, 1, 1, 1, 1])
    assert (
        pair_points(
            chop, np.zeros(2, np.int64), np.array([1, 2]), HandRules.contract(TAIWANESE, 1)
        ).points[0]
        == 11
    )


def test_pairs_are_per_hand_lower_seat_first() -> None:
    a, b = pairs_of(np.array([0, 0, 0, 1, 1]), np.array([5, 1, 3, 2, 6]))
    assert list(zip(a.tolist(), b.tolist(), strict=True)) == [(1, 2), (1, 0), (2, 0), (3, 4)]


@settings(max_examples=200, deadline=None)
@given(
    st.integers(2, 6).flatmap(
        lambda n: st.lists(
            st.lists(st.integers(0, 7461), min_size=6, max_size=6), min_size=n, max_size=n
        )
    )
)
def test_points_are_bounded_and_sum_to_zero(rows: list[list[int]]) -> None:
    n = len(rows)
    pairs = pair_points(
        values(*rows), np.zeros(n, np.int64), np.arange(1, n + 1), HandRules.contract(TAIWANESE, 1)
    )
    assert (np.abs(pairs.points) <= 20).all()
    assert player_points(pairs, n).sum() == 0
