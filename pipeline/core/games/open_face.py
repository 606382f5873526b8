"""Open-Face Chinese (`ofc`) and Pineapple (`pineapple_ofc`), chinese-family.md 4.2, 5 and 6:
the rows of closed Chinese placed street by street, 1-6 scoring with the open-face
royalties (which offset), and Fantasyland earned from one hand for the next.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from pipeline.core.evaluator import Category, category_of, first_rank_of
from pipeline.core.games.chinese import CHINESE, ROYAL, PairPoints, played_decision, rows_played
from pipeline.core.games.game import (
    HOME_RUN_NONE,
    HOME_RUN_OPPONENT,
    HOME_RUN_SEAT,
    Family,
    Streets,
    Variant,
    who,
)

Ints = npt.NDArray[np.int64]
Flags = npt.NDArray[np.bool_]

OFC = replace(
    CHINESE,
    name="ofc",
    family=Family.open_face,
    streets=Streets(first=5, later=8, later_dealt=1, later_placed=1, fantasyland_dealt=(13, 13)),
    table_prefix="O",
)
PINEAPPLE = replace(
    CHINESE,
    name="pineapple_ofc",
    family=Family.open_face,
    max_players=3,
    streets=Streets(first=5, later=4, later_dealt=3, later_placed=2, fantasyland_dealt=(14, 17)),
    table_prefix="P",
)
OPEN_FACE: tuple[Variant, ...] = (OFC, PINEAPPLE)

# Royalties by row and category (section 4.2); the top's come from its ranks.
_BOTTOM = {
    Category.straight: 2,
    Category.flush: 4,
    Category.full_house: 6,
    Category.four_of_a_kind: 10,
    Category.straight_flush: 15,
}
_MIDDLE = {
    Category.three_of_a_kind: 2,
    Category.straight: 4,
    Category.flush: 8,
    Category.full_house: 12,
    Category.four_of_a_kind: 20,
    Category.straight_flush: 30,
}
_ROYAL = {"middle": 50, "bottom": 25}
SIXES, QUEENS, KINGS, ACES = 4, 10, 11, 12  # ranks: 0 is a two
# The columns of a row's royalty table: each category, no value (nothing), and an
# ace-high straight flush (a royal flush).
NO_VALUE = len(Category)
TRIPS = 13  # the column of an entry by three of a kind in a table of entry cards


@dataclass(frozen=True)
class OpenFaceRules:
    """What an open-face hand pays and deals (house-rules.md 2.5), per item (a profile, a
    player or a pair: `at` picks them): the royalty tables, the scoop bonus, the cap, and
    Fantasyland's entry, cards and stay."""

    top_pair: Ints  # (items, 13): a pair on top, by rank
    top_trips: Ints  # (items, 13): three of a kind on top, by rank
    middle: Ints  # (items, ROYAL + 1): by category (NO_VALUE: 0)
    bottom: Ints
    scoop_bonus: Ints
    cap: Ints  # the most a pair moves either way (a large number: no cap)
    entry_rank: Ints  # the lowest top pair that enters Fantasyland
    entry_cards: Ints  # (items, 14): the cards an entry deals, by the top's pair rank or TRIPS
    stay_from: Ints  # (items, 3): per row, the category from which a hand in Fantasyland stays
    stay_cards: Ints

    @property
    def fantasyland_dealt(self) -> tuple[Ints, Ints]:
        """Per item, the fewest and most cards a Fantasyland street may deal."""
        entries = np.where(
            np.arange(14) >= np.minimum(self.entry_rank, TRIPS)[:, None], self.entry_cards, 99
        )
        low = np.minimum(entries.min(axis=1), self.stay_cards)
        high = np.maximum(np.where(entries == 99, 0, entries).max(axis=1), self.stay_cards)
        return low, high


NO_CAP = 1 << 40


def contract_rules(variant: Variant) -> OpenFaceRules:
    """One item: the contract's values for `variant`."""

    def table(points: dict[Category, int], royal: int) -> Ints:
        out = np.zeros((1, ROYAL + 1), dtype=np.int64)
        for category, value in points.items():
            out[0, category] = value
        out[0, ROYAL] = royal if royal else out[0, Category.straight_flush]
        return out

    ranks = np.arange(13)
    pineapple = variant.streets is not None and variant.streets.progressive
    entry = np.full((1, 14), 13, dtype=np.int64)
    if pineapple:  # QQ 14, KK 15, AA 16, trips 17
        entry[0, :13] = 14 + np.clip(ranks - QUEENS, 0, 2)
        entry[0, TRIPS] = 17
    return OpenFaceRules(
        top_pair=np.where(ranks >= SIXES, ranks - SIXES + 1, 0)[None],
        top_trips=(10 + ranks)[None],
        middle=table(_MIDDLE, _ROYAL["middle"]),
        bottom=table(_BOTTOM, _ROYAL["bottom"]),
        scoop_bonus=np.array([3]),
        cap=np.array([NO_CAP]),
        entry_rank=np.array([QUEENS]),
        entry_cards=entry,
        stay_from=np.array(
            [[Category.three_of_a_kind, Category.full_house, Category.four_of_a_kind]]
        ),
        stay_cards=np.array([14 if pineapple else 13]),
    )


def royalties(values: npt.NDArray[np.int16], rules: OpenFaceRules, profile: Ints) -> Ints:
    """Each row's open-face royalty (players, rows: top, middle, bottom), as if not fouled;
    `rules` per profile, and each player's `profile`."""
    out = np.zeros(values.shape, dtype=np.int64)
    category = category_of(values).astype(np.int64)
    first_rank = first_rank_of(values).astype(np.int64)
    for r, table in ((1, rules.middle), (2, rules.bottom)):
        royal = (category[:, r] == Category.straight_flush) & (first_rank[:, r] == ACES)
        column = np.where(royal, ROYAL, category[:, r])
        out[:, r] = table[profile, column]
    top_cat, top_rank = category[:, 0], np.clip(first_rank[:, 0], 0, 12)
    pair, trips = rules.top_pair[profile, top_rank], rules.top_trips[profile, top_rank]
    out[:, 0] = np.select(
        [top_cat == Category.three_of_a_kind, top_cat == Category.pair], [trips, pair], 0
    )
    return out


def pair_points(
    a: Ints,
    b: Ints,
    values: npt.NDArray[np.int16],
    foul: Flags,
    royalty: Ints,
    rules: OpenFaceRules,
    profile: Ints,
) -> PairPoints:
    """What player a wins from player b: 1 a row, the scoop bonus (3) for all three,
    royalties offsetting, cut to the cap either way (none); a fouled hand loses every row
    to one that did not foul, and earns no royalty. `rules` per profile; `profile` per pair."""
    wins, won_a, won_b = rows_played(a, b, values, foul)
    foul_a, foul_b = foul[a], foul[b]
    scoop = rules.scoop_bonus[profile] * ((won_a == 3).astype(np.int64) - (won_b == 3))
    roy_a = np.where(foul_a[:, None], 0, royalty[a])
    roy_b = np.where(foul_b[:, None], 0, royalty[b])
    both = foul_a & foul_b
    points = np.where(both, 0, won_a - won_b + scoop + roy_a.sum(axis=1) - roy_b.sum(axis=1))
    points = np.clip(points, -rules.cap[profile], rules.cap[profile])
    swept = [(won_a == 3) & ~both, (won_b == 3) & ~both]
    home_run = np.select(swept, [HOME_RUN_SEAT, HOME_RUN_OPPONENT], HOME_RUN_NONE)
    decision = played_decision(wins, who(foul_a, foul_b), scoop, (roy_a, roy_b))
    return PairPoints(points.astype(np.int64), home_run.astype(np.int64), decision)


def fantasyland_next(
    values: npt.NDArray[np.int16],
    foul: Flags,
    in_fantasyland: Flags,
    rules: OpenFaceRules,
    profile: Ints,
) -> tuple[Flags, Ints]:
    """Per player: whether the next hand at the table is in Fantasyland, and the cards it
    deals then (an entry by the top's pair or trips, or a stay; `rules` per profile, and
    each player's `profile`). The caller clears both where the table does not play it."""
    category = category_of(values).astype(np.int64)
    top_rank = np.clip(first_rank_of(values[:, 0]).astype(np.int64), 0, 12)
    trips_top = category[:, 0] == Category.three_of_a_kind
    pair_up = (category[:, 0] == Category.pair) & (top_rank >= rules.entry_rank[profile])
    stay = ((category < NO_VALUE) & (category >= rules.stay_from[profile])).any(axis=1)
    earned = ~foul & np.where(in_fantasyland, stay, trips_top | pair_up)
    entry = rules.entry_cards[profile, np.where(trips_top, TRIPS, top_rank)]
    cards = np.where(in_fantasyland, rules.stay_cards[profile], entry)
    return earned, np.where(earned, cards, 0)
