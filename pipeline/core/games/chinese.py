"""Closed Chinese Poker (chinese-family.md): 13 cards set 3/5/5 with no boards, fouls,
1-6 or 2-4 scoring, seed-table royalties, naturals and surrender.

What is Chinese about a hand, over whole columns: the foul of each setting, each
row's royalty, the naturals 13 cards make, and the points between every pair.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

from pipeline.core.evaluator import Category, Plays, category_of, first_rank_of, three_ranks_of
from pipeline.core.evaluator.values import low_only_values, parse_value
from pipeline.core.games.game import (
    BOTH_FOULED,
    BOTH_SURRENDER,
    BY_BOTH,
    FOUL,
    HOME_RUN_NONE,
    HOME_RUN_OPPONENT,
    HOME_RUN_SEAT,
    OVERALL_POINT,
    ROWS,
    SCOOP,
    Decision,
    Family,
    Layout,
    Row,
    Variant,
    row_masks,
    who,
)
from pipeline.core.games.game import (
    NATURAL as DECIDED_NATURAL,
)
from pipeline.core.games.game import (
    SURRENDER as DECIDED_SURRENDER,
)
from pipeline.helpers.encoding import N_RANKS, N_SUITS, card_code, rank_of, suit_of

Ints = npt.NDArray[np.int64]
Flags = npt.NDArray[np.bool_]

CHINESE = Variant(
    "chinese",
    (
        Row("top", 3, Plays.ALONE, 1),
        Row("middle", 5, Plays.ALONE, 1),
        Row("bottom", 5, Plays.ALONE, 1),
    ),
    boards=0,
    board_size=0,
    jokers=0,
    home_run_bonus=0,
    min_players=2,
    max_players=4,
    seats=6,
    floor_points=0,
    family=Family.chinese,
    layout=Layout.chinese,
    table_prefix="C",
)


class Scoring(StrEnum):
    """The closed game's scoring methods (chinese-family.md 5), in the order of their codes."""

    one_six = "1-6"
    two_four = "2-4"


SCORING = tuple(s.value for s in Scoring)  # the methods, by code
DECLARATIONS = ("play", "surrender", "natural")  # by code
PLAY, SURRENDER, NATURAL = 0, 1, 2
# Naturals by code (0: none): the contract's five (4.4), then the others a house may pay
# (house-rules.md 2.4). Every one is known in any hand; what it pays is its profile's.
NATURALS = (
    "three_flushes",
    "three_straights",
    "six_and_a_half_pairs",
    "dragon",
    "pure_dragon",
    "four_triplets",
    "full_colored",
    "all_low_or_high",
    "three_quads",
    "three_straight_flushes",
    "twelve_royals",
)
# The contract's points by code (-1: a natural it does not pay).
NATURAL_POINTS = np.array([0, 3, 4, 6, 36, 108, -1, -1, -1, -1, -1, -1], dtype=np.int64)
DEFAULT_SURRENDER_POINTS = 3
ROYAL = len(Category) + 1  # a royalty table's column of an ace-high straight flush


@dataclass(frozen=True)
class ChineseRules:
    """What a closed Chinese hand plays and pays (house-rules.md 2.2), per item (a
    profile, indexed by code): the defaults of the hand's fields, and the house's rules."""

    two_four: Flags  # the method of hands without a `scoring` field
    surrender_points: Ints  # for hands without the field
    surrender: Flags  # surrender allowed
    royalties: Ints  # (items, rows, ROYAL + 1): by category, then the royal flush
    natural_points: Ints  # (items, 1 + naturals): -1 where not paid
    naturals_sum: Flags  # both declare: A's points less B's (else the higher wins)
    middle_low: Flags  # Low in the Middle (house-rules.md 2.3)
    home_run: Flags  # a scoop of everyone (3+ players) doubles those pairs' points
    wheel_second: Flags  # 5432A ranks just below the ace-high straight (flush)


def contract_rules() -> ChineseRules:
    """One item: the contract's values (chinese-family.md 4)."""
    table = np.zeros((1, 3, ROYAL + 1), dtype=np.int64)
    for r, name in enumerate(("top", "middle", "bottom")):
        for category, points in _SEED[name].items():
            table[0, r, category] = points
        table[0, r, ROYAL] = table[0, r, Category.straight_flush]
    return ChineseRules(
        two_four=np.array([False]),
        surrender_points=np.array([DEFAULT_SURRENDER_POINTS]),
        surrender=np.array([True]),
        royalties=table,
        natural_points=NATURAL_POINTS[None],
        naturals_sum=np.array([False]),
        middle_low=np.array([False]),
        home_run=np.array([False]),
        wheel_second=np.array([False]),
    )


# Seed-table royalties (section 4.1), by row and category.
_SEED = {
    "top": {Category.three_of_a_kind: 3},
    "middle": {Category.straight_flush: 5, Category.four_of_a_kind: 4, Category.full_house: 2},
    "bottom": {Category.straight_flush: 5, Category.four_of_a_kind: 4},
}


def fouled(
    values: npt.NDArray[np.int16], keys: Ints | None = None, middle_low: Flags | None = None
) -> Flags:
    """Per setting (players, 3 rows: top, middle, bottom values): whether it fouls.

    The middle against the bottom by value (by `keys`, `strength`'s, where given); the
    top against the middle by category, then its three ranks against the middle's first
    three (equal is no foul). Where `middle_low` (Low in the Middle), the top against the
    bottom so, and the middle takes no part.
    """
    low = np.zeros(len(values), dtype=bool) if middle_low is None else middle_low
    top, middle = values[:, 0], np.where(low, values[:, 2], values[:, 1])
    top_cat, mid_cat = category_of(top).astype(np.int64), category_of(middle).astype(np.int64)
    top_ranks, mid_ranks = three_ranks_of(top), three_ranks_of(middle)
    top_over = (top_cat > mid_cat) | ((top_cat == mid_cat) & (top_ranks > mid_ranks))
    order = values if keys is None else keys
    return top_over | (~low & (order[:, 1] > order[:, 2]))


def royalties(values: npt.NDArray[np.int16], rules: ChineseRules, profile: Ints) -> Ints:
    """Each row's royalty (players, rows), as if the setting did not foul: `rules` per
    profile (4.1's seed table in the contract), and each player's `profile`."""
    category = category_of(values).astype(np.int64)  # no value: len(Category), which pays 0
    royal = (category == Category.straight_flush) & (first_rank_of(values) == ACE)
    column = np.where(royal, ROYAL, category)
    return rules.royalties[profile[:, None], np.arange(values.shape[1])[None, :], column]


def strength(values: npt.NDArray[np.int16], wheel_second: Flags, middle_low: Flags) -> Ints:
    """Row values (players, rows) as keys that order them as a hand's profile does, the
    higher key winning: where `wheel_second` (per player), a 5432A straight or straight
    flush ranks just below the ace-high one; where `middle_low`, the lower middle wins."""
    keys = values.astype(np.int64) * 2
    if wheel_second.any():
        keys = np.where(wheel_second[:, None], _wheel_second()[values.astype(np.int64)], keys)
    if middle_low.any():
        low = -_low_keys()[values[:, 1].astype(np.int64)]
        keys[:, 1] = np.where(middle_low, low, keys[:, 1])
    return keys


def as_low_middle(values: npt.NDArray[np.int16], middle_low: Flags) -> npt.NDArray[np.int16]:
    """Row values (players, rows) with each `middle_low` player's middle valued as Low in
    the Middle does (house-rules.md 2.3): a 5432A is no straight, but a high card or flush."""
    if not middle_low.any():
        return values
    straight, straight_flush = parse_value(["straight:5432A", "straight_flush:5432A"])
    high_card, flush = low_only_values()
    middle = values[:, 1]
    low = np.where(middle == straight, high_card, np.where(middle == straight_flush, flush, middle))
    out = values.copy()
    out[:, 1] = np.where(middle_low, low, middle)
    return out


@cache
def _low_keys() -> Ints:
    """Every value's key as Low in the Middle orders middles: a 5432A high card (flush)
    just below A6432, the lowest ace-high one of its category."""
    keys = np.arange(1 << 15, dtype=np.int64) * 2
    for value, above in zip(low_only_values(), ("high_card:A6432", "flush:A6432"), strict=True):
        keys[value] = 2 * int(parse_value([above])[0]) - 1
    return keys


@cache
def _wheel_second() -> Ints:
    """Every value's key with the wheel second (a value's own key: twice its number)."""
    keys = np.arange(1 << 15, dtype=np.int64) * 2
    for category in (Category.straight, Category.straight_flush):
        wheel, broadway = parse_value([f"{category.name}:5432A", f"{category.name}:AKQJT"])
        keys[wheel] = 2 * int(broadway) - 1
    return keys


ACE = 12


def _rank_key(counts: npt.NDArray[np.integer]) -> npt.NDArray[np.int64]:
    """A number per row of 13 rank counts (each 0 to 4), equal exactly when the counts are."""
    return (counts.astype(np.int64) * 5 ** np.arange(13, dtype=np.int64)).sum(axis=-1)


def _three_straight_keys() -> npt.NDArray[np.int64]:
    """Every rank-count vector of a 3-card straight and two 5-card straights."""
    threes = [(12, 0, 1)] + [(r, r + 1, r + 2) for r in range(11)]  # A23 .. QKA
    fives = [(12, 0, 1, 2, 3)] + [tuple(range(r, r + 5)) for r in range(9)]  # A2345 .. TJQKA
    keys = set()
    for three in threes:
        for first, second in itertools.combinations_with_replacement(fives, 2):
            counts = np.zeros(13, dtype=np.int64)
            for rank in (*three, *first, *second):
                counts[rank] += 1
            keys.add(int(_rank_key(counts)))
    return np.array(sorted(keys), dtype=np.int64)


_THREE_STRAIGHTS = _three_straight_keys()
# Suit counts, largest first, that split into flushes of 3, 5 and 5 cards.
_THREE_FLUSHES = np.array([[5, 5, 3, 0], [8, 5, 0, 0], [10, 3, 0, 0], [13, 0, 0, 0]])


def naturals_made(cards: npt.NDArray[np.int8]) -> Flags:
    """Per player's 13 cards (players, 13), which naturals they make: (players, 1 +
    naturals), indexed by natural code (column 0, no natural, is always true)."""
    n = len(cards)
    codes = cards.astype(np.int64)
    owner = np.arange(n)[:, None]
    ranks = np.bincount((owner * N_RANKS + rank_of(codes)).ravel(), minlength=n * N_RANKS)
    ranks = ranks.reshape(n, N_RANKS)
    suits = np.bincount((owner * N_SUITS + suit_of(codes)).ravel(), minlength=n * N_SUITS)
    suits = suits.reshape(n, N_SUITS)
    by_size = -np.sort(-suits, axis=1)
    dragon = (ranks == 1).all(axis=1)
    rank = rank_of(codes)
    red = (suits[:, 1] + suits[:, 2]) == 13  # diamonds and hearts (suits "cdhs")
    masks = (np.uint64(1) << codes.astype(np.uint64)).sum(axis=1, dtype=np.uint64)
    return np.stack(
        [
            np.ones(n, dtype=bool),
            (by_size[:, None, :] == _THREE_FLUSHES[None]).all(axis=2).any(axis=1),
            _among(_rank_key(ranks), _THREE_STRAIGHTS),
            (ranks // 2).sum(axis=1) == 6,
            dragon,
            dragon & (suits.max(axis=1) == 13),
            (ranks >= 3).sum(axis=1) == 4,  # four_triplets
            red | (suits[:, 1] + suits[:, 2] == 0),  # full_colored
            (rank <= 6).all(axis=1) | (rank >= 6).all(axis=1),  # all_low_or_high: 8 is rank 6
            (ranks == 4).sum(axis=1) == 3,  # three_quads
            _among(masks, _three_straight_flushes()),
            (rank >= 9).all(axis=1),  # twelve_royals: jacks and up
        ],
        axis=1,
    )


def _among(values: npt.NDArray[Any], keys: npt.NDArray[Any]) -> Flags:
    """Which `values` are among the sorted `keys`: a binary search (np.isin hashes the
    keys again on every call, which costs a small batch more than its hands)."""
    at = np.minimum(np.searchsorted(keys, values), len(keys) - 1)
    return keys[at] == values


@cache
def _three_straight_flushes() -> npt.NDArray[np.uint64]:
    """Every 13 cards (as a mask of card codes, rank * 4 + suit) that split into a
    three-card straight flush and two five-card ones (3-card straights as 4.4's)."""
    threes = [(12, 0, 1)] + [(r, r + 1, r + 2) for r in range(11)]
    fives = [(12, 0, 1, 2, 3)] + [tuple(range(r, r + 5)) for r in range(9)]

    def masks(runs: Sequence[tuple[int, ...]]) -> list[int]:
        return [sum(1 << card_code(r, suit) for r in run) for run in runs for suit in range(4)]

    found = set()
    five = masks(fives)
    for three in masks(threes):
        for i, first in enumerate(five):
            if first & three:
                continue
            for second in five[i:]:
                if not second & (three | first):
                    found.add(three | first | second)
    return np.array(sorted(found), dtype=np.uint64)


@dataclass(frozen=True)
class PairPoints:
    points: Ints
    home_run: Ints
    decision: Decision


def rows_played(
    a: Ints, b: Ints, values: npt.NDArray[np.integer], foul: Flags
) -> tuple[Ints, Ints, Ints]:
    """Per pair and row, +1 where a wins it, -1 where b does (a fouled hand loses every
    row to one that did not foul); and how many rows each won."""
    wins = np.sign(values[a].astype(np.int64) - values[b].astype(np.int64))  # (pairs, 3)
    foul_a, foul_b = foul[a], foul[b]
    wins = np.where((foul_b & ~foul_a)[:, None], 1, np.where((foul_a & ~foul_b)[:, None], -1, wins))
    return wins, (wins > 0).sum(axis=1), (wins < 0).sum(axis=1)


def played_decision(
    wins: Ints, foul_by: Ints, bonus: Ints, royalties: tuple[Ints, Ints]
) -> Decision:
    """How a pair that played its rows was decided: by both fouls, a foul, a scoop, an
    overall point, or the rows alone."""
    both = foul_by == BY_BOTH
    swept = (np.abs(wins).sum(axis=1) == 3) & (np.abs(wins.sum(axis=1)) == 3)
    decided = np.select(
        [both, foul_by > 0, swept & (bonus != 0), bonus != 0],
        [BOTH_FOULED, FOUL, SCOOP, OVERALL_POINT],
        ROWS,
    )
    won, lost = row_masks(np.where(both[:, None], 0, wins))
    nothing = np.where(both, 0, 1)
    return Decision(
        decided,
        foul_by,
        won,
        lost,
        bonus * nothing,
        royalties[0] * nothing[:, None],
        royalties[1] * nothing[:, None],
    )


def pair_points(
    a: Ints,
    b: Ints,
    values: npt.NDArray[np.integer],
    foul: Flags,
    royalty: Ints,
    declared: Ints,
    natural: Ints,
    two_four: Flags,
    surrender_points: Ints,
    naturals_sum: Flags,
    home_run: Flags,
) -> PairPoints:
    """What player a wins from player b in each pair, by the first case of section 4.1.

    Per player: row values (players, 3) or keys that order them (`strength`), foul, row
    royalties (players, 3), the declaration as settled (PLAY, SURRENDER or NATURAL) and
    the natural's base points (0 unless a natural is settled). Per pair, from the hand's
    profile (house-rules.md 2.2): its method (`two_four`), surrender points, whether two
    naturals settle by their sum (else the higher wins), and whether a player who scoops
    every other of a hand of three or more doubles those pairs' rows-and-method points.
    """
    nat_a, nat_b = natural[a], natural[b]
    gave_a, gave_b = declared[a] == SURRENDER, declared[b] == SURRENDER
    played = _played(a, b, values, foul, royalty, two_four)
    natural_by, gave_by = who(nat_a > 0, nat_b > 0), who(gave_a, gave_b)
    points = np.select(
        [natural_by == BY_BOTH, natural_by > 0, gave_by == BY_BOTH, gave_by > 0],
        [
            np.where(
                naturals_sum,
                nat_a - nat_b,
                np.where(nat_a > nat_b, nat_a, np.where(nat_b > nat_a, -nat_b, 0)),
            ),
            nat_a - nat_b,
            0,
            np.where(gave_a, -surrender_points, surrender_points),
        ],
        played.points,
    )
    by_rows = (natural_by == 0) & (gave_by == 0)
    points = points + _doubled(a, b, played.decision, by_rows & home_run)
    return PairPoints(
        points,
        np.where(by_rows, played.home_run, HOME_RUN_NONE),
        _declared(played.decision, by_rows, natural_by, gave_by),
    )


_BITS_SET = np.array([0, 1, 1, 2, 1, 2, 2, 3], dtype=np.int64)  # rows won, by mask


def _doubled(a: Ints, b: Ints, decision: Decision, may: Flags) -> Ints:
    """The Home Run that doubles (house-rules.md 2.2): in a hand of three or more, a
    player who won all three rows against every other player (played pairs, a foul's
    scoop included) has those pairs' rows-and-method points counted again; `may`: the
    pairs played under a profile that plays it. What each pair adds, from a's side."""
    if not may.any():
        return np.zeros(len(a), dtype=np.int64)
    players = int(max(a.max(), b.max())) + 1
    opponents = np.bincount(a, minlength=players) + np.bincount(b, minlength=players)
    seat_scoops = may & (decision.rows_won == 7)
    opponent_scoops = may & (decision.rows_lost == 7)
    scoops = np.bincount(a[seat_scoops], minlength=players)
    scoops += np.bincount(b[opponent_scoops], minlength=players)
    everyone = (scoops == opponents) & (opponents >= 2)
    double = (seat_scoops & everyone[a]) | (opponent_scoops & everyone[b])
    method = _BITS_SET[decision.rows_won] - _BITS_SET[decision.rows_lost] + decision.bonus
    return np.where(double, method, 0)


def _declared(played: Decision, by_rows: Flags, natural_by: Ints, gave_by: Ints) -> Decision:
    """The decision of pairs settled by a declaration (a natural, a surrender) before any
    row is played; the rows' own elsewhere."""
    decided = np.select(
        [natural_by > 0, gave_by == BY_BOTH, gave_by > 0],
        [DECIDED_NATURAL, BOTH_SURRENDER, DECIDED_SURRENDER],
        played.decided,
    )
    kept = by_rows.astype(np.int64)
    assert played.royalties is not None and played.opponent_royalties is not None
    return Decision(
        decided,
        np.where(natural_by > 0, natural_by, np.where(gave_by > 0, gave_by, played.by)),
        played.rows_won * kept,
        played.rows_lost * kept,
        played.bonus * kept,
        played.royalties * kept[:, None],
        played.opponent_royalties * kept[:, None],
    )


def _played(
    a: Ints, b: Ints, values: npt.NDArray[np.integer], foul: Flags, royalty: Ints, two_four: Flags
) -> PairPoints:
    """Both play: fouls, rows, the scoop or overall point, and royalties."""
    wins, won_a, won_b = rows_played(a, b, values, foul)
    foul_a, foul_b = foul[a], foul[b]
    bonus = np.where(
        two_four,
        (won_a >= 2).astype(np.int64) - (won_b >= 2),
        3 * ((won_a == 3).astype(np.int64) - (won_b == 3)),
    )
    roy_a = np.where(foul_a[:, None], 0, royalty[a])
    roy_b = np.where(foul_b[:, None], 0, royalty[b])
    both = (roy_a > 0) & (roy_b > 0)
    paid_a = np.where(both, np.where(wins > 0, roy_a, 0), roy_a)
    paid_b = np.where(both, np.where(wins < 0, roy_b, 0), roy_b)
    points = won_a - won_b + bonus + (paid_a - paid_b).sum(axis=1)
    points = np.where(foul_a & foul_b, 0, points)
    home_run = np.select(
        [won_a == 3, won_b == 3], [HOME_RUN_SEAT, HOME_RUN_OPPONENT], HOME_RUN_NONE
    )
    decision = played_decision(wins, who(foul_a, foul_b), bonus, (paid_a, paid_b))
    return PairPoints(
        points.astype(np.int64),
        np.where(foul_a & foul_b, HOME_RUN_NONE, home_run),
        decision,
    )
