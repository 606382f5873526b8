"""The deal-memory tests' arithmetic against brute force, and their false-alarm rate.

What two hands share (the same seat's cards, pairs held together by one player) is checked
against every pair of deals of a small deck, the vanishing covariance along a table
against every three deals, the chance of a repeat against counting; the statistics'
calibration against simulated fair tables whose seats come and go.
"""

from __future__ import annotations

import itertools
from math import comb

import numpy as np
import pyarrow as pa
import pytest
from scipy import stats

from pipeline.core import between_hands
from pipeline.outputs.fairness_deals import Sequence, between_tests, repeat_tests


def _deals(n: int, sizes: list[int]) -> list[np.ndarray]:
    """Every deal of n cards into groups of `sizes` (and the rest): each card's group."""
    owner = np.repeat(np.arange(len(sizes) + 1), [*sizes, n - sum(sizes)])
    seen = {tuple(owner[list(p)]) for p in itertools.permutations(range(n))}
    return [np.array(s) for s in sorted(seen)]


def _same(a: np.ndarray, b: np.ndarray, groups: int) -> int:
    return int(sum(((a == g) & (b == g)).sum() for g in range(groups)))


def _together(a: np.ndarray, b: np.ndarray, first: int, second: int) -> int:
    n = len(a)
    return sum(
        a[i] == a[j] and a[i] < first and b[i] == b[j] and b[i] < second
        for i, j in itertools.combinations(range(n), 2)
    )


@pytest.mark.parametrize(
    ("r", "c"), [([2, 1], [1, 3]), ([2, 2], [3, 0]), ([3, 1], [2, 2]), ([1, 1, 1], [2, 1, 0])]
)
def test_what_two_hands_share_has_every_pair_of_deals_moments(r: list[int], c: list[int]) -> None:
    n = 6
    first, second = _deals(n, r), _deals(n, c)
    same = [_same(a, b, len(r)) for a in first for b in second]
    together = [_together(a, b, len(r), len(c)) for a in first for b in second]
    mean, variance = between_hands.same_group_moments([r], [c], n)
    assert (mean[0], variance[0]) == pytest.approx((np.mean(same), np.var(same)))
    mean, variance = between_hands.together_moments([r], [c], n)
    assert (mean[0], variance[0]) == pytest.approx((np.mean(together), np.var(together)))


def test_consecutive_pairs_of_a_table_are_uncorrelated() -> None:
    """Three hands t, t + 1, t + 2: what (t, t + 1) share and what (t + 1, t + 2) share
    have covariance 0, for both statistics, so a table's variances add up."""
    n, sizes = 5, [[2, 1], [1, 2], [2, 2]]
    hands = [_deals(n, s) for s in sizes]
    same, together = [], []
    for a, b, c in itertools.product(*hands):
        same.append((_same(a, b, 2), _same(b, c, 2)))
        together.append((_together(a, b, 2, 2), _together(b, c, 2, 2)))
    for pairs in (same, together):
        assert np.cov(np.array(pairs, dtype=float).T, bias=True)[0, 1] == pytest.approx(0.0)


def test_the_chance_of_a_repeat_is_the_birthday_count() -> None:
    """Four deals of a deck of 5 into one seat of 2 (10 deals): 1 - 10*9*8*7 / 10^4; two
    kinds of deal never repeat one another."""
    log_m = between_hands.log_deals([[2]], n=5)
    assert np.exp(log_m[0]) == pytest.approx(comb(5, 2))
    one = between_hands.repeat_chance([4], log_m)
    assert one == pytest.approx(1 - 10 * 9 * 8 * 7 / 10**4)
    both = between_hands.repeat_chance([4, 3], [log_m[0], np.log(20.0)])
    assert both == pytest.approx(1 - (10 * 9 * 8 * 7 / 10**4) * (20 * 19 * 18 / 20**3))
    assert between_hands.repeat_chance([12], log_m) == 1.0  # more deals than there are
    boards = between_hands.log_deals([[5, 5]])
    assert np.exp(boards[0]) == pytest.approx(comb(52, 5) * comb(47, 5), rel=1e-9)


@pytest.mark.parametrize(("n", "m"), [(4, 5), (6, 3), (3, 10), (5, 2)])
def test_the_repeats_have_the_occupancy_moments_of_every_sequence_of_deals(n: int, m: int) -> None:
    repeats = [n - len(set(s)) for s in itertools.product(range(m), repeat=n)]
    mean, variance = between_hands.repeat_moments([n], [np.log(m)])
    assert (mean, variance) == pytest.approx((np.mean(repeats), np.var(repeats)))


def test_where_repeats_are_expected_their_count_is_tested_not_their_being() -> None:
    """One board over 100,000 hands repeats about 1,900 times if fair: one repeat is no
    news, 2,300 are; two whole deals alike are news at once."""
    board = between_hands.log_deals([[5, 0]])
    mean, variance = between_hands.repeat_moments([100_000], board)
    chance = between_hands.repeat_chance([100_000], board)
    assert 1_850 < mean < 1_950 and chance == 1.0
    assert between_hands.repeats_p_value(1, chance, mean, variance) == pytest.approx(1.0)
    assert between_hands.repeats_p_value(2_300, chance, mean, variance) < 1e-15
    deal = between_hands.log_deals([[7, 7, 10]])
    mean, variance = between_hands.repeat_moments([1_000], deal)
    tiny = between_hands.repeat_chance([1_000], deal)
    assert mean < 1e-15 and between_hands.repeats_p_value(1, tiny, mean, variance) == tiny
    assert between_hands.repeat_chance([1], deal) == 0.0  # never -0


def _table(rng: np.random.Generator, hands: int, tables: int) -> Sequence:
    """Fair hands of Taiwanese tables whose seats come and go (2 to 6 of them, 7 cards
    each), every hand a fresh shuffle: boards first, then the seats dealt in."""
    n = hands * tables
    decks = np.argsort(rng.random((n, 52)), axis=1)
    masks = np.zeros((n, 8), dtype=np.uint64)
    bit = np.left_shift(np.uint64(1), decks.astype(np.uint64))
    masks[:, 0] = np.bitwise_or.reduce(bit[:, :5], axis=1)
    masks[:, 1] = np.bitwise_or.reduce(bit[:, 5:10], axis=1)
    seated = rng.random((n, 6)) < 0.7
    seated[:, :2] = True
    place = 10 + 7 * (np.cumsum(seated, axis=1) - 1)
    for s in range(6):
        cards = np.take_along_axis(bit, place[:, s : s + 1] + np.arange(7), axis=1)
        masks[:, 2 + s] = np.where(seated[:, s], np.bitwise_or.reduce(cards, axis=1), 0)
    ids = pa.array([f"h{i}" for i in range(n)])
    boards = decks[:, :10].astype(np.int8)
    return Sequence(np.repeat(np.arange(tables), hands), ids, ids, boards, masks)


def test_fair_tables_are_flagged_between_hands_at_the_rate_promised() -> None:
    rng = np.random.default_rng(3)
    runs, rejected = 300, np.zeros(2)
    for _ in range(runs):
        tests = list(between_tests(_table(rng, 60, 5), "t"))
        rejected += [t.verdict.p_value is not None and t.verdict.p_value < 0.05 for t in tests]
    band = np.asarray(stats.binom.ppf([1e-4, 1 - 1e-4], runs, 0.05))
    assert ((band[0] <= rejected) & (rejected <= band[1])).all(), rejected


def test_a_deck_barely_moved_from_the_last_is_found_and_a_deal_repeated_is_named() -> None:
    rng = np.random.default_rng(4)
    seq = _table(rng, 300, 2)
    sticky = seq.masks.copy()
    sticky[1::10] = sticky[0::10]  # a tenth of the hands dealt as the one before
    moved = Sequence(seq.table, seq.hand_id, seq.variant, seq.boards, sticky)
    same, together = between_tests(moved, "t")
    assert same.verdict.p_value is not None and same.verdict.p_value < 1e-10
    assert together.verdict.p_value is not None and together.verdict.p_value < 1e-10
    deal, boards = repeat_tests(moved, "t")
    assert boards.verdict.statistic == 60 and boards.test == "repeated boards"
    assert deal.verdict.statistic == 60 and "h0 and h1" in deal.detail
    assert deal.verdict.p_value is not None and deal.verdict.p_value < 1e-20
    fair = next(repeat_tests(seq, "t"))
    assert fair.verdict.statistic == 0 and fair.verdict.p_value == 1.0
