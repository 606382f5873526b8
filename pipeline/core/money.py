"""Money in integer cents: pair amounts limited by stacks, won, rake with its cap, net, stacks.

rules.md section 6, over whole columns. Rates are integers in billionths, so every
step is integer arithmetic; products that could pass 2**63 are done in Python
integers for those rows only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from pipeline.core.games.pairs import Pairs, sum_by

Ints = npt.NDArray[np.int64]
RATE_ONE = 10**9
_SAFE = 2**62


def mul_div_floor(a: Ints, b: Ints, c: Ints) -> tuple[Ints, Ints]:
    """floor(a * b / c) and its remainder, exactly, for a, b >= 0 and c > 0."""
    a, b, c = np.broadcast_arrays(
        np.asarray(a, np.int64), np.asarray(b, np.int64), np.asarray(c, np.int64)
    )
    small = (a == 0) | (b <= _SAFE // np.maximum(a, 1))
    quotient = np.zeros(a.shape, dtype=np.int64)
    remainder = np.zeros(a.shape, dtype=np.int64)
    product = a[small] * b[small]
    quotient[small], remainder[small] = np.divmod(product, c[small])
    big = np.flatnonzero(~small)
    for i in big:  # beyond int64: rare, exact in Python integers
        q, r = divmod(int(a[i]) * int(b[i]), int(c[i]))
        quotient[i], remainder[i] = q, r
    return quotient, remainder


@dataclass(frozen=True)
class Settlement:
    """Per pair: the amount a received from b. Per player: won, rake, net, stack_end."""

    amount: Ints
    won: Ints
    rake: Ints
    net: Ints
    stack_end: Ints


def settle(
    pairs: Pairs,
    player_hand: Ints,
    seat: Ints,
    stack_start: Ints,
    point_value: Ints,
    rake_rate: Ints,
    rake_cap: Ints,
    table_stakes: bool = False,
) -> Settlement:
    """Settle every pair and player of a batch.

    `point_value`, `rake_rate` (billionths) and `rake_cap` are per hand; the player
    arrays are per player, `player_hand` giving each player's hand. With
    `table_stakes` (the Chinese family), no player pays more than their stack_start.
    """
    n_players = len(player_hand)
    gross = np.abs(pairs.points) * point_value[pairs.hand]
    limit = np.minimum(stack_start[pairs.a], stack_start[pairs.b])
    amount = np.sign(pairs.points) * np.minimum(gross, limit)
    if table_stakes:
        amount = _within_stakes(amount, pairs, seat, stack_start)
    won = sum_by(pairs.a, amount, n_players) - sum_by(pairs.b, amount, n_players)
    rake = rake_of(won, player_hand, seat, rake_rate, rake_cap)
    net = won - rake
    return Settlement(amount, won, rake, net, stack_start + net)


def _within_stakes(amount: Ints, pairs: Pairs, seat: Ints, stack_start: Ints) -> Ints:
    """chinese-family.md 7.2: a player whose losing pairs pay more than their stack_start
    pays it all, shared over those pairs in proportion (largest remainder, ties: the
    lower opponent seat)."""
    payer = np.where(amount > 0, pairs.b, pairs.a)
    receiver = np.where(amount > 0, pairs.a, pairs.b)
    paid = np.abs(amount)
    owed = sum_by(payer, paid, len(stack_start))
    over = np.flatnonzero((paid > 0) & (owed[payer] > stack_start[payer]))
    if over.size == 0:
        return amount
    cut = largest_remainder(
        stack_start[payer[over]], paid[over], owed[payer[over]], payer[over], seat[receiver[over]]
    )
    out = amount.copy()
    out[over] = np.sign(amount[over]) * cut
    return out


def largest_remainder(total: Ints, weight: Ints, weight_sum: Ints, group: Ints, tie: Ints) -> Ints:
    """`total` (the same for every member of a group) shared in proportion to `weight`:
    each member gets floor(total x weight / weight_sum), and the units still missing go
    one each to the largest discarded fractions, ties to the lower `tie`.

    >>> largest_remainder(np.array([10, 10, 10]), np.array([1, 1, 1]), np.array([3, 3, 3]),
    ...                   np.array([0, 0, 0]), np.array([3, 1, 2])).tolist()
    [3, 4, 3]
    """
    share, fraction = mul_div_floor(total, weight, weight_sum)
    groups, first = np.unique(group, return_index=True)
    missing = total[first] - (sum_by(np.searchsorted(groups, group), share, len(groups)))
    # Rank each group's members by discarded fraction (largest first), then tie. Fractions
    # compare within a group only, where they share the denominator weight_sum.
    order = np.lexsort((tie, -fraction, group))
    ranked = group[order]
    rank = np.arange(len(order)) - np.searchsorted(ranked, ranked, side="left")
    extra = np.zeros(len(order), dtype=np.int64)
    extra[order] = (rank < missing[np.searchsorted(groups, ranked)]).astype(np.int64)
    return share + extra


def rake_of(won: Ints, player_hand: Ints, seat: Ints, rake_rate: Ints, rake_cap: Ints) -> Ints:
    """Each winner's rake: floor(rate x won), or the hand's cap shared in proportion to won.

    When the uncapped rakes pass the cap, each winner pays floor(cap x won / total
    won), and the cents still missing go one each to the largest discarded
    fractions (ties: lower seat first).
    """
    n_hands = len(rake_rate)
    winner = won > 0
    uncapped = np.zeros_like(won)
    uncapped[winner] = mul_div_floor(
        won[winner], rake_rate[player_hand[winner]], np.full(int(winner.sum()), RATE_ONE)
    )[0]
    total_uncapped = sum_by(player_hand, uncapped, n_hands)
    capped = winner & (total_uncapped > rake_cap)[player_hand]
    rake = np.where(capped, 0, uncapped)
    if capped.any():
        hand = player_hand[capped]
        total_won = sum_by(player_hand, np.where(winner, won, 0), n_hands)
        rake[capped] = largest_remainder(
            rake_cap[hand], won[capped], total_won[hand], hand, seat[capped]
        )
    return rake


def money_text(cents: int) -> str:
    """Cents as the decimal text of hand-history.md.

    >>> money_text(1250), money_text(-5)
    ('12.50', '-0.05')
    """
    sign = "-" if cents < 0 else ""
    return f"{sign}{abs(cents) // 100}.{abs(cents) % 100:02d}"


def cents_of(text: str) -> int:
    """The cents of a plain decimal text with at most two decimals, exactly.

    >>> cents_of("12.5"), cents_of("-0.05"), cents_of("3")
    (1250, -5, 300)
    """
    whole, _, fraction = text.lstrip("-").partition(".")
    cents = int(whole) * 100 + int((fraction + "00")[:2])
    return -cents if text.startswith("-") else cents
