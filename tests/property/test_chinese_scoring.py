"""Hypothesis: closed Chinese pair points keep the rules' promises whatever the cards.

A fouled setting never wins points from one that plays; points are antisymmetric;
1-6 and 2-4 agree on who won each row; a surrender costs exactly surrender_points.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.core.games import CHINESE
from pipeline.core.games.chinese import (
    NATURAL_POINTS,
    PLAY,
    SURRENDER,
    contract_rules,
    fouled,
    pair_points,
    royalties,
)
from pipeline.core.games.game import HOME_RUN_NONE
from pipeline.core.showdown import showdown

SIZES = [row.size for row in CHINESE.rows]


@st.composite
def two_players(draw: st.DrawFn) -> np.ndarray:
    """Two settings of 13 distinct cards each, in rows of 3, 5 and 5: (2, 13) codes."""
    deck = draw(st.permutations(range(52)))
    return np.array(deck[:26], dtype=np.int8).reshape(2, 13)


def values_of(cards: np.ndarray) -> np.ndarray:
    bounds = np.cumsum([0, *SIZES])
    setting = {row.name: cards[:, bounds[r] : bounds[r + 1]] for r, row in enumerate(CHINESE.rows)}
    shown = showdown(CHINESE, np.zeros((1, 0, 0), np.int8), setting, np.zeros(len(cards), np.int64))
    return shown.value[:, 0, :]


def points(
    values: np.ndarray, declared: list[int], two_four: bool, surrender: int = 3
) -> tuple[np.ndarray, np.ndarray]:
    """Both orders of the pair: (a, b) and (b, a)."""
    a, b = np.array([0, 1]), np.array([1, 0])
    foul = fouled(values)
    contract, profile = contract_rules(), np.zeros(2, np.int64)
    royalty = royalties(values, contract, profile)
    scored = pair_points(
        a,
        b,
        values,
        foul,
        royalty,
        np.array(declared),
        np.zeros(2, np.int64),
        np.full(2, two_four),
        np.full(2, surrender),
        contract.naturals_sum[profile],
        contract.home_run[profile],
    )
    return scored.points, scored.home_run


@settings(max_examples=300, deadline=None)
@given(cards=two_players(), two_four=st.booleans())
def test_points_are_antisymmetric_and_a_foul_never_wins(cards: np.ndarray, two_four: bool) -> None:
    values = values_of(cards)
    (ab, ba), _ = points(values, [PLAY, PLAY], two_four)
    assert ab == -ba
    foul = fouled(values)
    if foul[0] and not foul[1]:
        assert ab < 0
    if foul[0] and foul[1]:
        assert ab == 0


@settings(max_examples=300, deadline=None)
@given(cards=two_players())
def test_the_two_methods_agree_on_who_won_each_row(cards: np.ndarray) -> None:
    values = values_of(cards)
    (one_six, _), (sweep_16, _) = points(values, [PLAY, PLAY], False)
    (two_four, _), (sweep_24, _) = points(values, [PLAY, PLAY], True)
    assert sweep_16 == sweep_24
    contract = royalties(values, contract_rules(), np.zeros(2, np.int64))
    royalty = np.where(fouled(values)[:, None], 0, contract)
    if not royalty.any():  # rows alone: the same winner under either method
        assert np.sign(one_six) == np.sign(two_four)


@settings(max_examples=200, deadline=None)
@given(cards=two_players(), two_four=st.booleans(), surrender=st.integers(0, 20))
def test_a_surrender_costs_exactly_its_points(
    cards: np.ndarray, two_four: bool, surrender: int
) -> None:
    values = values_of(cards)
    (ab, ba), home_run = points(values, [SURRENDER, PLAY], two_four, surrender)
    assert (ab, ba) == (-surrender, surrender)
    assert (home_run == HOME_RUN_NONE).all()
    (both, _), _ = points(values, [SURRENDER, SURRENDER], two_four, surrender)
    assert both == 0
    assert NATURAL_POINTS[0] == 0
