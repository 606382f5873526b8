"""Does the deal remember? The exact expectations of what two hands share under
independent fair shuffles, and the chance that a deal repeats.

Each hand's standard cards are cut among its groups (its seats, the boards, the rest) by
a shuffle of the N = 52 standard cards (given where the jokers went), independently of
every other hand. For two hands with group sizes r (the first) and c (the second):

**The same seat.** The cards a group holds in both, summed over the groups of both, is
the trace of a random table with fixed margins (the first hand's groups by the second's):

    mean = sum r_g c_g / N
    var  = (sum q_g (N - r_g)(N - c_g) + (sum q)^2 - sum q^2) / (N^2 (N - 1)),  q = r c

**Pairs held together.** The pairs of cards one player holds in both hands (whichever
players): a pair is held together in a hand with chance a = sum (r)_2 / (N)_2 over its
players ((x)_k the falling factorial), so the mean is C(N, 2) a(r) a(c). Given the second
hand, its pairs held together are a fixed set of m = sum (c)_2 / 2 pairs, T1 = sum (c)_3
ordered pairs of them sharing a card, the others disjoint; so

    var = m a (1 - a) + T1 (b - a^2) + (m (m - 1) - T1) (g - a^2)

with b = sum (r)_3 / (N)_3 and g = (sum (r)_4 + (sum (r)_2)^2 - sum (r)_2^2) / (N)_4 the
chances that three, and two disjoint pairs of, given cards are held so in the first.

**Along a table.** For consecutive hands t, t + 1, t + 2 the terms of (t, t + 1) and
(t + 1, t + 2) are uncorrelated: given hand t + 1, they are independent and their means
do not depend on it. So a table's sum over consecutive pairs has the sum of the pairs'
variances, and the statistic over many pairs is normal.

**A repeated deal.** n hands cutting the deck alike into groups deal one of M equally
likely deals each (M the multinomial of the sizes); the chance that none repeats is
prod over i < n of (1 - i / M), and hands cut differently can never repeat one another.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from scipy import special

Floats = npt.NDArray[np.float64]
N = 52  # the standard cards


def _falling(x: Floats, k: int) -> Floats:
    out = np.ones_like(x)
    for i in range(k):
        out = out * (x - i)
    return out


def same_group_moments(r: npt.ArrayLike, c: npt.ArrayLike, n: int = N) -> tuple[Floats, Floats]:
    """Per pair of hands (rows), the mean and variance of the cards each group holds in
    both, summed over groups: `r` and `c` (pairs, groups) the groups' sizes in the first
    and the second hand, aligned by group (0 where a group has no cards)."""
    r, c = (np.asarray(x, dtype=np.float64) for x in (r, c))
    q = r * c
    mean = q.sum(axis=1) / n
    total = q.sum(axis=1)
    spread = (q * (n - r) * (n - c)).sum(axis=1) + total**2 - (q**2).sum(axis=1)
    return mean, spread / (n**2 * (n - 1))


def together_moments(r: npt.ArrayLike, c: npt.ArrayLike, n: int = N) -> tuple[Floats, Floats]:
    """Per pair of hands, the mean and variance of the pairs of cards one player holds in
    both: `r` and `c` (pairs, players) the players' sizes in the first and the second hand
    (any order, 0 for none)."""
    r, c = (np.asarray(x, dtype=np.float64) for x in (r, c))
    a_first = _falling(r, 2).sum(axis=1) / (n * (n - 1))
    a_second = _falling(c, 2).sum(axis=1) / (n * (n - 1))
    mean = n * (n - 1) / 2 * a_first * a_second
    two = _falling(r, 2)
    three = _falling(r, 3).sum(axis=1) / (n * (n - 1) * (n - 2))
    four = (_falling(r, 4).sum(axis=1) + two.sum(axis=1) ** 2 - (two**2).sum(axis=1)) / (
        n * (n - 1) * (n - 2) * (n - 3)
    )
    m = _falling(c, 2).sum(axis=1) / 2
    sharing = _falling(c, 3).sum(axis=1)
    a = a_first
    variance = m * a * (1 - a) + sharing * (three - a**2) + (m * (m - 1) - sharing) * (four - a**2)
    return mean, variance


def log_deals(sizes: npt.ArrayLike, n: int = N) -> Floats:
    """Per way of cutting the deck (rows: the groups' sizes, the rest left out), the log
    of the number of distinct deals: n! / (prod k_g! (n - sum k)!)."""
    k = np.asarray(sizes, dtype=np.float64)
    rest = n - k.sum(axis=1)
    return special.gammaln(n + 1) - special.gammaln(k + 1).sum(axis=1) - special.gammaln(rest + 1)


def repeat_chance(hands: npt.ArrayLike, log_outcomes: npt.ArrayLike) -> float:
    """The exact chance that some deal repeats among `hands[i]` deals of each of a set of
    kinds of `exp(log_outcomes[i])` equally likely deals each (kinds never repeat one
    another): 1 - prod over kinds and i < n of (1 - i / M)."""
    log_none = 0.0
    for count, log_m in zip(np.asarray(hands), np.asarray(log_outcomes), strict=True):
        if np.log(max(int(count), 1)) > log_m:  # more deals than there are
            return 1.0
        i = np.arange(1, int(count), dtype=np.float64)
        log_none += float(np.log1p(-np.exp(np.log(i) - log_m)).sum())
    return max(0.0, float(-np.expm1(log_none)))


def repeat_moments(hands: npt.ArrayLike, log_outcomes: npt.ArrayLike) -> tuple[float, float]:
    """The mean and variance of the number of deals that repeat an earlier one (n minus the
    distinct deals) among `hands[i]` deals of each kind of M = `exp(log_outcomes[i])`
    equally likely deals, kinds independent: the classical occupancy moments, written to
    stay exact in floating point however large M is. The mean sums each deal's chance of
    repeating one before it, 1 - (1 - 1/M)^i; with a = (1 - 1/M)^n the variance is
    M^2 a^2 expm1(n log1p(-1/(M-1)^2)) - M a expm1(n log1p(-1/(M-1)))."""
    mean, variance = 0.0, 0.0
    for count, log_m in zip(np.asarray(hands), np.asarray(log_outcomes), strict=True):
        n, m = int(count), float(np.exp(log_m))
        if n < 2:
            continue
        step = np.log1p(-1 / m)
        mean += float(-np.expm1(np.arange(n, dtype=np.float64) * step).sum())
        a = np.exp(n * step)
        if m < 1e4:  # small: the textbook form, m (m-1) (1-2/m)^n + m a - m^2 a^2
            b = (1 - 2 / m) ** n
            variance += max(m * (m - 1) * b + m * a - m**2 * a**2, 0.0)
            continue
        wide = m**2 * a**2 * np.expm1(n * np.log1p(-1 / (m - 1) ** 2))
        variance += max(float(wide - m * a * np.expm1(n * np.log1p(-1 / (m - 1)))), 0.0)
    return mean, variance


def repeats_p_value(repeats: int, chance: float, expected: float, variance: float) -> float:
    """The chance of at least `repeats` repeated deals if fair. While fewer than one is
    expected, the exact chance of any (`repeat_chance`) when there is one or more; where
    repeats are expected (one board over many hands), the count's upper tail, normal with
    its exact occupancy mean and variance. Which is used depends on the deals' number
    and kinds only, never on what was dealt."""
    if repeats == 0:
        return 1.0
    if expected < 1.0 or variance <= 0:
        return chance
    return float(special.ndtr(-(repeats - 0.5 - expected) / np.sqrt(variance)))
