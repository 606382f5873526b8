"""Open-Face Chinese (`ofc`) and Pineapple (`pineapple_ofc`), chinese-family.md 4.2, 5 and 6:
the rows of closed Chinese placed street by street, 1-6 scoring with the open-face
royalties (which offset), and Fantasyland earned from one hand for the next.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import numpy.typing as npt

from pipeline.core.evaluator import Category, category_of, ranks_of
from pipeline.core.games.chinese import CHINESE, PairPoints, played_decision, rows_played
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


def royalties(values: npt.NDArray[np.int16]) -> Ints:
    """Each row's open-face royalty (players, rows: top, middle, bottom), as if not fouled."""
    out = np.zeros(values.shape, dtype=np.int64)
    category = category_of(values)
    first_rank = ranks_of(values)[..., 0].astype(np.int64)
    for r, (name, table) in enumerate((("middle", _MIDDLE), ("bottom", _BOTTOM)), start=1):
        lookup = np.zeros(len(Category) + 1, dtype=np.int64)
        for cat, points in table.items():
            lookup[cat] = points
        royal = (category[:, r] == Category.straight_flush) & (first_rank[:, r] == ACES)
        out[:, r] = np.where(royal, _ROYAL[name], lookup[category[:, r]])
    top_cat, top_rank = category[:, 0], first_rank[:, 0]
    out[:, 0] = np.select(
        [top_cat == Category.three_of_a_kind, (top_cat == Category.pair) & (top_rank >= SIXES)],
        [10 + top_rank, top_rank - SIXES + 1],
        0,
    )
    return out


def pair_points(
    a: Ints, b: Ints, values: npt.NDArray[np.int16], foul: Flags, royalty: Ints
) -> PairPoints:
    """What player a wins from player b: 1 a row, 3 more for a scoop, royalties offsetting;
    a fouled hand loses every row to one that did not foul, and earns no royalty."""
    wins, won_a, won_b = rows_played(a, b, values, foul)
    foul_a, foul_b = foul[a], foul[b]
    scoop = 3 * ((won_a == 3).astype(np.int64) - (won_b == 3))
    roy_a = np.where(foul_a[:, None], 0, royalty[a])
    roy_b = np.where(foul_b[:, None], 0, royalty[b])
    both = foul_a & foul_b
    points = np.where(both, 0, won_a - won_b + scoop + roy_a.sum(axis=1) - roy_b.sum(axis=1))
    swept = [(won_a == 3) & ~both, (won_b == 3) & ~both]
    home_run = np.select(swept, [HOME_RUN_SEAT, HOME_RUN_OPPONENT], HOME_RUN_NONE)
    decision = played_decision(wins, who(foul_a, foul_b), scoop, (roy_a, roy_b))
    return PairPoints(points.astype(np.int64), home_run.astype(np.int64), decision)


def fantasyland_next(
    values: npt.NDArray[np.int16], foul: Flags, in_fantasyland: Flags, pineapple: Flags
) -> tuple[Flags, Ints]:
    """Per player: whether the next hand at the table is in Fantasyland, and the cards it
    deals then (13 in OFC; in Pineapple 14 to 17 for an entry by the top, 14 for a stay).
    The caller clears both where the table does not play Fantasyland."""
    category = category_of(values)
    top_rank = ranks_of(values)[:, 0, 0].astype(np.int64)
    trips_top = category[:, 0] == Category.three_of_a_kind
    queens_up = (category[:, 0] == Category.pair) & (top_rank >= QUEENS)
    stay = (
        trips_top
        | (category[:, 1] >= Category.full_house)
        | (category[:, 2] >= Category.four_of_a_kind)
    )
    earned = ~foul & np.where(in_fantasyland, stay, trips_top | queens_up)
    entry_cards = np.where(trips_top, 17, 14 + np.clip(top_rank - QUEENS, 0, 2))
    cards = np.where(pineapple, np.where(in_fantasyland, 14, entry_cards), 13)
    return earned, np.where(earned, cards, 0)
