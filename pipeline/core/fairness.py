"""Was the deal fair? The tests of the fairness report, on counts the store has made.

**Cards by seat.** A fair deal cuts a uniformly shuffled deck of D cards into groups of
known sizes: each dealt seat, the boards, and the rest (never dealt). Whatever a card's
category (its suit, its rank, the card itself), the counts of a hand, group by category,
form a random table with fixed margins (the group sizes, and the deck's count of each
category), so over hands, with a_g = k_g / D the share of group g and b_c the share of
category c in the deck:

    E[n_gc] = sum over hands of k_g * b_c
    Cov(n_gc, n_g'c') = D^2 / (D - 1) * (sum over hands of diag(a) - a a') x (diag(b) - b b')

a Kronecker product. The residuals R = n - E lie in the range of that covariance, so
R's quadratic form in a generalized inverse of it,

    T = (D - 1) / D^2 * trace(M^+ R diag(1/b) R'),   M = sum over hands of diag(a) - a a',

is chi-square with rank(M) * (categories - 1) degrees of freedom for many hands. When
every hand has the same groups, T is Pearson's statistic of the table times (D - 1) / D;
when seats come and go, or Fantasyland deals more cards, M accounts for it exactly.
(`tests/core/test_fairness.py` checks E and Cov against every deal of a small deck.)

**Deal order.** Given the cards a player was dealt, a fair shuffle deals them in a
uniformly random order. The number of consecutive pairs of one suit (or rank) in that
order then has an exact mean and variance (`order_moments`), and their sum over
player-hands is normal for many hands.

**Premium outcomes.** A player's hands with a Home Run, a scoop, a natural or a
Fantasyland entry against the other players of the same hands (`premium_evidence`):
one-sided (is the player favoured?), valid however long each player stayed.

The chi-square tails come from scipy, the players' p-values from Ville's inequality; `holm`
decides which are flagged at a family-wise rate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import special, stats

Floats = npt.NDArray[np.float64]

# Below these the tests give "insufficient data": a category-by-group cell expected
# fewer than five times (Cochran's rule for the chi-square approximation), a deal order
# with fewer than this many pairs, a player with fewer than five premium outcomes to
# expect.
MIN_EXPECTED = 5.0
MIN_PAIRS = 200
# The odds ratios the premium test weighs alike: how much more often than their share an
# insider might see premium outcomes.
ODDS = np.array([1.5, 2.0, 3.0, 5.0])


@dataclass(frozen=True)
class Verdict:
    """One test's outcome: its statistic, degrees of freedom and p-value, or the reason
    it could not be made (`insufficient`)."""

    sample: int
    statistic: float | None = None
    df: int | None = None
    p_value: float | None = None
    insufficient: str | None = None
    groups: tuple[str, ...] = ()  # the groups a partition test compared, after merging


@dataclass(frozen=True)
class Deals:
    """How the hands cut one deck into groups, summed over hands.

    `sizes[g]` sums group g's cards over hands, and `spread` is M above. Build it with
    `from_patterns` from each distinct way a hand cut the deck and how many hands did.
    """

    deck: int
    groups: tuple[str, ...]
    hands: int
    sizes: Floats  # (G,)
    spread: Floats  # (G, G)

    @classmethod
    def from_patterns(
        cls, deck: int, groups: Sequence[str], patterns: Floats, hands: npt.ArrayLike
    ) -> Deals:
        """`patterns` (P, G): the cards of each group in a way of cutting the deck (the
        last group, the rest, may be left 0: it is what the others leave); `hands` (P,):
        how many hands cut it so."""
        k = np.array(patterns, dtype=np.float64)
        k[:, -1] = deck - k[:, :-1].sum(axis=1)
        if (k < 0).any():
            raise ValueError("a way of cutting the deck deals more cards than it holds")
        weight = np.asarray(hands, dtype=np.float64)
        a = k / deck
        spread = np.diag(weight @ a) - np.einsum("p,pg,ph->gh", weight, a, a)
        return cls(deck, tuple(groups), int(weight.sum()), weight @ k, spread)

    @classmethod
    def pooled(cls, parts: Sequence[tuple[Deals, Floats]]) -> tuple[Deals, Floats]:
        """Several games' deals of one deck as one, with their observed counts (G, C):
        groups matched by name (the rest last), hands independent, so sizes and spreads
        add."""
        names = sorted({g for d, _ in parts for g in d.groups[:-1]}, key=_group_order)
        groups = (*names, parts[0][0].groups[-1])
        place = {g: i for i, g in enumerate(groups)}
        sizes, spread = np.zeros(len(groups)), np.zeros((len(groups), len(groups)))
        observed = np.zeros((len(groups), parts[0][1].shape[1]))
        for deals, counts in parts:
            at = np.array([place[g] for g in deals.groups[:-1]] + [len(groups) - 1])
            sizes[at] += deals.sizes
            spread[np.ix_(at, at)] += deals.spread
            observed[at] += counts
        hands = sum(d.hands for d, _ in parts)
        return cls(parts[0][0].deck, groups, hands, sizes, spread), observed

    def merged(self, into: npt.NDArray[np.int64]) -> Deals:
        """Group g merged into group into[g] (into numbers the groups that remain, the
        rest last): a fair deal still cuts the deck into the groups that remain."""
        fold = _fold(into)
        groups = [
            "+".join(g for g, i in zip(self.groups, into, strict=True) if i == j)
            for j in range(fold.shape[1])
        ]
        return Deals(
            self.deck, tuple(groups), self.hands, self.sizes @ fold, fold.T @ self.spread @ fold
        )


def expected(deals: Deals, in_deck: Floats) -> Floats:
    """(G, C): each group's expected count of each category; `in_deck` (C,) counts each
    category in the deck."""
    return np.outer(deals.sizes, np.asarray(in_deck, dtype=np.float64) / deals.deck)


def partition_test(deals: Deals, observed: Floats, in_deck: Floats) -> Verdict:
    """Did the groups receive each category as a fair deal would? `observed` (G, C),
    the rest's row included: for every category, the groups' counts add up to the
    deck's count of it times the hands.

    Groups expected to receive some category fewer than MIN_EXPECTED times are merged
    first (`merge_small`); with fewer than two groups left there is no test.
    """
    b = np.asarray(in_deck, dtype=np.float64) / deals.deck
    deals, observed = merge_small(deals, np.asarray(observed, dtype=np.float64), in_deck)
    sample = int(observed.sum() - observed[-1].sum())
    if len(deals.groups) < 2:
        return Verdict(sample, insufficient="insufficient data")
    residual = observed - expected(deals, in_deck)
    inverse = np.linalg.pinv(deals.spread, hermitian=True)
    groups = deals.groups
    d = deals.deck
    statistic = float((d - 1) / d**2 * np.trace(inverse @ (residual / b) @ residual.T))
    df = int(np.linalg.matrix_rank(deals.spread, hermitian=True)) * (int((b > 0).sum()) - 1)
    if df == 0:
        return Verdict(sample, insufficient="insufficient data")
    return Verdict(sample, statistic, df, float(stats.chi2.sf(statistic, df)), groups=groups)


@dataclass(frozen=True)
class Cell:
    """The most extreme cell's test: its verdict, the standardized residuals z (G, C) after
    merging (0 where not tested), how many cells were tested, and which is furthest."""

    verdict: Verdict
    z: Floats
    tested: int
    furthest: tuple[int, int]


def cell_test(
    deals: Deals,
    observed: Floats,
    in_deck: Floats,
    *,
    favoured: bool = False,
    only: str | None = None,
) -> Cell:
    """The one group and category furthest from a fair deal: the largest standardized
    residual |z| (each cell's own variance under the exact covariance) among the cells
    expected at least MIN_EXPECTED times, the rest's row left out, two-sided, Bonferroni-
    corrected for the number of those cells (conservative: the cells are correlated).
    With two categories a group's cells mirror each other: only the first is counted.

    `favoured`: the largest excess z instead, one-sided. A group's size is fixed, so a
    group dealt too few of one category is dealt too many of others: for a favoured
    seat the excess is where the signal is (a deficit spread over the others is each
    seat's own test's to find). `only`: the cells of that group alone (a player's).

    A cell's tail is not the normal's: counts of a few expected are skewed (23 dealt where
    8.5 are expected is +5 sd, a normal tail of 3e-7 where the count's own is near 1e-5).
    Each cell's count, a sum over hands of small hypergeometric counts, is read as the
    binomial of its exact mean and variance (`_matched_tail`); the cell of least tail is
    the most extreme."""
    deals, observed = merge_small(deals, np.asarray(observed, dtype=np.float64), in_deck)
    sample = int(observed.sum() - observed[-1].sum())
    z, shown = _cells(deals, observed, in_deck)
    columns = 1 if z.shape[1] == 2 else z.shape[1]
    shown = shown[:-1, :columns] if len(deals.groups) >= 2 else np.zeros((0, 0), dtype=bool)
    if only is not None:
        shown = shown & (np.array(deals.groups[:-1]) == only)[:, None]
    tested = int(shown.sum())
    if tested == 0:
        verdict = Verdict(sample, insufficient="insufficient data", groups=deals.groups)
        return Cell(verdict, z, 0, (0, 0))
    mean = expected(deals, in_deck)[:-1, :columns]
    sd = _sd(deals, in_deck)[:-1, :columns]
    upper, lower = _matched_tail(observed[:-1, :columns], mean, sd**2)
    tail = upper if favoured else np.minimum(2 * np.minimum(upper, lower), 1.0)
    tail = np.where(shown, tail, np.inf)
    g, c = (int(i) for i in np.unravel_index(np.argmin(tail), tail.shape))
    p = min(1.0, tested * float(tail[g, c]))
    verdict = Verdict(sample, float(z[g, c]), None, p, groups=deals.groups)
    return Cell(verdict, z, tested, (g, c))


def _matched_tail(x: Floats, mean: Floats, variance: Floats) -> tuple[Floats, Floats]:
    """P(X >= x) and P(X <= x) for X binomial with the given mean and variance (less than
    the mean: q = 1 - variance / mean, n = mean / q, n real), by the regularized incomplete
    beta function; the normal's where the variance is not below the mean."""
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.clip(1 - variance / mean, 1e-12, 1.0)
        n = mean / q
        upper = np.where(
            x <= 0, 1.0, special.betainc(np.maximum(x, 1e-12), np.maximum(n - x + 1, 1e-12), q)
        )
        lower = np.where(x >= n, 1.0, special.betainc(np.maximum(n - x, 1e-12), x + 1, 1 - q))
        normal = variance >= mean
        z = (x - mean) / np.sqrt(variance)
        upper = np.where(normal | (x > n + 1), stats.norm.sf(z), upper)
        lower = np.where(normal, stats.norm.cdf(z), lower)
    return upper, lower


def group_tests(deals: Deals, observed: Floats, in_deck: Floats) -> list[Verdict]:
    """One test per group (the rest left out, after merging): did this group receive each
    category as a fair deal would? Its row of residuals has covariance
    D^2 / (D - 1) * M_gg * (diag(b) - b b'), so its quadratic form
    (D - 1) / (D^2 M_gg) * sum over c of R_gc^2 / b_c is chi-square with C - 1 degrees of
    freedom (the row sums to 0: the group's size is fixed). A group expected to receive
    some category fewer than MIN_EXPECTED times is insufficient."""
    b = np.asarray(in_deck, dtype=np.float64) / deals.deck
    deals, observed = merge_small(deals, np.asarray(observed, dtype=np.float64), in_deck)
    residual = observed - expected(deals, in_deck)
    fewest = expected(deals, in_deck)[:, b > 0].min(axis=1)
    df = int((b > 0).sum()) - 1
    verdicts = []
    d = deals.deck
    for g in range(len(deals.groups) - 1):
        spread, sample = float(deals.spread[g, g]), int(observed[g].sum())
        if fewest[g] < MIN_EXPECTED or spread <= 0 or df < 1 or len(deals.groups) < 2:
            verdicts.append(Verdict(sample, insufficient="insufficient data", groups=deals.groups))
            continue
        row = residual[g, b > 0]
        statistic = float((d - 1) / (d**2 * spread) * (row**2 / b[b > 0]).sum())
        p = float(stats.chi2.sf(statistic, df))
        verdicts.append(Verdict(sample, statistic, df, p, groups=deals.groups))
    return verdicts


def standardized(deals: Deals, observed: Floats, in_deck: Floats) -> Floats:
    """(observed - expected) over each cell's own standard deviation under a fair deal;
    0 where fewer than MIN_EXPECTED are expected."""
    return _cells(deals, observed, in_deck)[0]


def _cells(deals: Deals, observed: Floats, in_deck: Floats) -> tuple[Floats, npt.NDArray[np.bool_]]:
    """The standardized residuals, and which cells are expected at least MIN_EXPECTED times
    (with a variance): the cells tested."""
    exp, sd = expected(deals, in_deck), _sd(deals, in_deck)
    shown = (exp >= MIN_EXPECTED) & (sd > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(shown, (observed - exp) / sd, 0.0), shown


def _sd(deals: Deals, in_deck: Floats) -> Floats:
    """Each cell's standard deviation under a fair deal (its own variance)."""
    b = np.asarray(in_deck, dtype=np.float64) / deals.deck
    d = deals.deck
    spread = np.maximum(np.diag(deals.spread), 0.0)  # rounding can leave -1e-16
    return np.sqrt(d**2 / (d - 1) * np.outer(spread, b * (1 - b)))


def _group_order(name: str) -> tuple[int, str]:
    """Seats in order, then the boards (and any other group) by name."""
    number = name.removeprefix("seat ")
    return (int(number), "") if number.isdigit() else (1 << 30, name)


def merge_small(deals: Deals, observed: Floats, in_deck: Floats) -> tuple[Deals, Floats]:
    """While a group is expected to receive some category fewer than MIN_EXPECTED times,
    merge the group expected to receive fewest into the next fewest (the rest stays last,
    whatever it absorbs)."""
    while len(deals.groups) >= 2:
        fewest = expected(deals, in_deck).min(axis=1)
        if fewest.min() >= MIN_EXPECTED:
            break
        small, other = np.argsort(fewest, kind="stable")[:2]
        last = len(fewest) - 1
        kept = max(small, other) if last in (small, other) else other
        gone = small if kept == other else other
        into = np.arange(len(fewest))
        into[gone] = kept
        into = np.unique(into, return_inverse=True)[1]
        deals, observed = deals.merged(into), _fold(into).T @ observed
    return deals, observed


def _fold(into: npt.NDArray[np.int64]) -> Floats:
    """(G, groups that remain): 1 where group g goes."""
    fold = np.zeros((len(into), int(into.max()) + 1))
    fold[np.arange(len(into)), into] = 1.0
    return fold


def order_moments(
    n: npt.ArrayLike, s2: npt.ArrayLike, s3: npt.ArrayLike, s4: npt.ArrayLike, q: npt.ArrayLike
) -> tuple[Floats, Floats]:
    """Mean and variance of the number of consecutive pairs of one category in a uniformly
    random order of a player's n cards, per player: from the falling factorial sums of
    the category counts m, s2 = sum m(m-1), s3 = sum m(m-1)(m-2), s4 = sum m(m-1)(m-2)(m-3),
    and q = sum (m(m-1))^2.

    Over the n - 1 places, a place holds a pair with chance p = s2 / n(n-1); two places
    that share a card both do with chance s3 / n(n-1)(n-2), two apart with chance
    (s4 + s2^2 - q) / n(n-1)(n-2)(n-3).
    """
    n, s2, s3, s4, q = (np.asarray(x, dtype=np.float64) for x in (n, s2, s3, s4, q))
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(n >= 2, s2 / (n * (n - 1)), 0.0)
        three = np.where(n >= 3, s3 / (n * (n - 1) * (n - 2)), 0.0)
        four = np.where(n >= 4, (s4 + s2**2 - q) / (n * (n - 1) * (n - 2) * (n - 3)), 0.0)
    places = np.maximum(n - 1, 0)
    mean = places * p
    variance = (
        places * p * (1 - p)
        + 2 * np.maximum(n - 2, 0) * (three - p**2)
        + np.maximum(n - 2, 0) * np.maximum(n - 3, 0) * (four - p**2)
    )
    return mean, variance


def order_test(pairs: int, observed: float, mean: float, variance: float) -> Verdict:
    """Consecutive pairs of one category, observed against their exact mean and variance
    summed over player-hands: (observed - mean)^2 / variance, chi-square with 1 degree of
    freedom (two-sided: too many pairs, or too few)."""
    if pairs < MIN_PAIRS or variance <= 0:
        return Verdict(pairs, insufficient="insufficient data")
    statistic = (observed - mean) ** 2 / variance
    return Verdict(pairs, float(statistic), 1, float(stats.chi2.sf(statistic, 1)))


def premium_evidence(chance: npt.ArrayLike, hit: npt.ArrayLike, starts: npt.ArrayLike) -> Floats:
    """Per player, a p-value for "more premium outcomes than a fair deal gives them",
    valid however long they played.

    The rows are each player's hands in doubt (some of the players compared had the
    outcome, not all), in the order played, each player's from `starts` on; `chance` is
    had / players, the player's chance when a hand's outcomes fall on its players alike,
    and `hit` whether it came. Against each odds ratio of ODDS, the likelihood ratio of
    the hits so far is a martingale under a fair deal, and so is their average; by Ville's
    inequality the chance that it ever reaches 1/p is at most p, so p = 1 / its highest
    value is a p-value whatever decided how long the player stayed.

    A fixed-sample test is not: players who lose leave (they bust), so the hands a player
    is seen in depend on their results, and the survivors' counts run high. The exact
    binomial tail of each player's hands flagged 5 of 99 fair 15,000-hand Taiwanese
    histories at a promised 1% (scripts/fairness_power.py); this one holds the rate.
    """
    p = np.asarray(chance, dtype=np.float64)[:, None]
    came = np.asarray(hit, dtype=bool)[:, None]
    starts = np.asarray(starts, dtype=np.int64)
    if len(starts) == 0:
        return np.ones(0)
    q = ODDS * p / (1 - p + ODDS * p)
    step = np.where(came, np.log(q / p), np.log1p(-q) - np.log1p(-p))
    total = np.cumsum(step, axis=0)
    before = np.vstack([np.zeros((1, len(ODDS))), total])[starts]
    run = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(p)]))
    evidence = special.logsumexp(total - before[run], axis=1, b=1 / len(ODDS))
    best = np.maximum(np.maximum.reduceat(evidence, starts), 0.0)
    return np.exp(-best)


def holm(
    p_values: Sequence[float | None],
    alpha: float,
    weights: Sequence[float] | None = None,
    untested: float = 0.0,
) -> list[bool | None]:
    """Which tests are flagged at family-wise error rate `alpha`: Holm's step-down, weighted
    (each test's share of the rate; equal shares by default); None where a test was not
    made.

    At each step the test of least p / weight is flagged when p <= alpha * weight / the
    weight of the tests not yet flagged. `untested` is the weight of hypotheses of the
    family left untested for a reason that depends on the data (a player who left too
    soon to be tested left because of their results): it stays in the family, never
    flagged, and keeps the rate."""
    shares = [1.0] * len(p_values) if weights is None else list(weights)
    made = sorted(
        (p / w, p, w, i)
        for i, (p, w) in enumerate(zip(p_values, shares, strict=True))
        if p is not None
    )
    flagged: list[bool | None] = [None if p is None else False for p in p_values]
    remaining = sum(w for _, _, w, _ in made) + untested
    for _, p, w, i in made:
        if p > alpha * w / remaining:
            break
        flagged[i] = True
        remaining -= w
    return flagged
