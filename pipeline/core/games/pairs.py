"""Every pair of dealt-in players of every hand, and what one won from the other.

Players arrive grouped by hand and ordered by seat; pairs are formed per hand size
(2 to 6 players: five shapes), never per hand in a Python loop. Each game's rule fills
a pair's points (`taiwanese.pair_points`, `chinese.pair_points`, `open_face.pair_points`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from pipeline.core.games.game import Decision

Ints = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Pairs:
    """Every pair (a, b) of players of a hand, a seated before b, with what a won from b."""

    hand: Ints
    a: Ints  # player index (into the batch's players)
    b: Ints
    points: Ints  # what a won from b (negative when a lost)
    home_run: Ints  # HOME_RUN_NONE, HOME_RUN_SEAT (a scored it) or HOME_RUN_OPPONENT
    decision: Decision | None = None  # how the points were decided (what money needs not)

    def __len__(self) -> int:
        return len(self.hand)


def pairs_of(hand: Ints, seat: Ints) -> tuple[Ints, Ints]:
    """Indices (a, b) of every pair of players in the same hand, a in a lower seat than b.

    `hand` must be sorted (players grouped by hand); within a hand any seat order.
    """
    n = len(hand)
    if n == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    starts = np.flatnonzero(np.r_[True, hand[1:] != hand[:-1]])
    sizes = np.diff(np.r_[starts, n])
    a_parts, b_parts = [], []
    for size in np.unique(sizes):
        local = np.array(list(itertools.combinations(range(size), 2)), dtype=np.int64)
        if local.size == 0:
            continue
        first = starts[sizes == size]
        a_parts.append((first[:, None] + local[None, :, 0]).ravel())
        b_parts.append((first[:, None] + local[None, :, 1]).ravel())
    a = np.concatenate(a_parts) if a_parts else np.empty(0, np.int64)
    b = np.concatenate(b_parts) if b_parts else np.empty(0, np.int64)
    swap = seat[a] > seat[b]
    a, b = np.where(swap, b, a), np.where(swap, a, b)
    order = np.lexsort((seat[b], seat[a], hand[a]))
    return a[order], b[order]


def player_points(pairs: Pairs, n_players: int) -> Ints:
    """Each player's hand points: the sum over their opponents."""
    return sum_by(pairs.a, pairs.points, n_players) - sum_by(pairs.b, pairs.points, n_players)


def sum_by(index: Ints, values: Ints, n: int) -> Ints:
    """Integer sums of `values` grouped by `index` (0..n-1), exact (no float weights)."""
    out = np.zeros(n, dtype=np.int64)
    np.add.at(out, index, values)
    return out
