"""Taiwanese Poker (rules.md): rows of 1, 2 and 4 on two boards, an Omaha bottom, 1/2/3
points a row and 8 for a Home Run; Taiwanese Jokers adds two wild jokers."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from pipeline.core.evaluator import Plays
from pipeline.core.games.game import (
    HOME_RUN,
    HOME_RUN_NONE,
    HOME_RUN_OPPONENT,
    HOME_RUN_SEAT,
    Decision,
    Row,
    Variant,
    row_masks,
)
from pipeline.core.games.game import (
    ROWS as DECIDED_ROWS,
)
from pipeline.core.games.pairs import Ints, Pairs, pairs_of

ROWS = (
    Row("top", 1, Plays.ANY, 1),
    Row("middle", 2, Plays.ANY, 2),
    Row("bottom", 4, Plays.EXACTLY_TWO, 3),
)

TAIWANESE = Variant(
    "taiwanese",
    ROWS,
    boards=2,
    board_size=5,
    jokers=0,
    home_run_bonus=8,
    min_players=2,
    max_players=6,
    seats=6,
    floor_points=60,
)
TAIWANESE_JOKERS = replace(TAIWANESE, name="taiwanese_jokers", jokers=2)


@dataclass(frozen=True)
class HandRules:
    """Per hand, what its profile deals and pays (house-rules.md 2.1)."""

    boards: Ints  # boards dealt (the layout holds the most; the others count for nothing)
    row_points: Ints  # (hands, rows): each row's points on each board
    home_run_bonus: Ints  # 0: no Home Run

    @property
    def shared(self) -> bool:
        """Whether every hand plays the same values (the usual batch: one profile)."""
        return bool(
            (self.boards == self.boards[0]).all()
            and (self.row_points == self.row_points[0]).all()
            and (self.home_run_bonus == self.home_run_bonus[0]).all()
        )

    def of(self, hand: Ints) -> tuple[Ints, Ints, Ints]:
        """Per item of `hand` (a hand's index each): its boards, row points and bonus,
        broadcastable (one value each when every hand shares them)."""
        if len(self.boards) and self.shared:
            return self.boards[:1], self.row_points[:1], self.home_run_bonus[:1]
        return self.boards[hand], self.row_points[hand], self.home_run_bonus[hand]

    @classmethod
    def contract(cls, variant: Variant, hands: int) -> HandRules:
        """`hands` hands dealt as the contract deals `variant`."""
        points = np.array([row.points for row in variant.rows], dtype=np.int64)
        return cls(
            np.full(hands, variant.boards, np.int64),
            np.tile(points, (hands, 1)),
            np.full(hands, variant.home_run_bonus, np.int64),
        )


def pair_points(values: npt.NDArray[np.int16], hand: Ints, seat: Ints, rules: HandRules) -> Pairs:
    """Pair points from row values (players, boards, rows): each row won scores its points
    on each board the hand deals, and a sweep of them all the Home Run bonus (the
    contract: 1/2/3 a row on two boards, +8)."""
    a, b = pairs_of(hand, seat)
    boards, row_points, home_run_bonus = rules.of(hand[a])
    compare = np.sign(values[a].astype(np.int32) - values[b].astype(np.int32))  # (pairs, B, R)
    swept = compare.reshape(len(a), -1)
    if (boards < compare.shape[1]).any():  # a board a hand does not deal counts for nothing
        dealt = np.arange(compare.shape[1]) < boards[:, None]  # (pairs, B)
        compare *= dealt[:, :, None]
        played = np.repeat(dealt, compare.shape[2], axis=1)
        a_sweeps = ((swept == 1) | ~played).all(axis=1)
        b_sweeps = ((swept == -1) | ~played).all(axis=1)
    else:
        a_sweeps, b_sweeps = (swept == 1).all(axis=1), (swept == -1).all(axis=1)
    points = (compare * row_points[:, None, :]).sum(axis=(1, 2), dtype=np.int64)
    a_sweeps &= home_run_bonus > 0  # no bonus: no Home Run
    b_sweeps &= home_run_bonus > 0
    bonus = home_run_bonus * (a_sweeps.astype(np.int64) - b_sweeps)
    points += bonus
    home_run = np.select([a_sweeps, b_sweeps], [HOME_RUN_SEAT, HOME_RUN_OPPONENT], HOME_RUN_NONE)
    won, lost = row_masks(swept)
    zero = np.zeros(len(a), np.int64)
    decided = np.where(bonus != 0, HOME_RUN, DECIDED_ROWS).astype(np.int64)
    decision = Decision(decided, zero, won, lost, bonus, None, None)
    return Pairs(hand[a], a, b, points, home_run.astype(np.int64), decision)
