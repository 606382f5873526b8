"""What the jokers became: the first substitutes, in card order, that reach a row's value.

Card order is 2c 2d 2h 2s 3c ... As (the code order), and two jokers list the
lexicographically first pair. The value is already known; here it is only
explained, without trying substitutes one by one:

* when the rank part wins, the tables give the first rank (pair) that reaches it,
  and each joker takes the first suit of its rank still free (in neither the row
  nor the board);
* when a flush wins, its five ranks are known, so the ranks it lacks in the flush
  suit are exactly what the jokers must become; a joker that is not needed takes
  the first free card of the deck.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from pipeline.core.evaluator import memo
from pipeline.core.evaluator.tables import multisets
from pipeline.core.evaluator.values import FIVE_CARD_VALUES, ranks_of
from pipeline.helpers.encoding import card_code

Codes = npt.NDArray[np.int8]


@memo.table
def _free_suits() -> tuple[Codes, Codes]:
    """For a 4-bit mask of taken suits: the first and the second free suit (-1: none)."""
    first = np.full(16, -1, dtype=np.int8)
    second = np.full(16, -1, dtype=np.int8)
    for taken in range(16):
        free = [s for s in range(4) if not taken >> s & 1]
        first[taken] = free[0] if free else -1
        second[taken] = free[1] if len(free) > 1 else -1
    return first, second


@memo.table
def _value_rank_mask() -> npt.NDArray[np.int32]:
    """13-bit mask of the ranks of each value (meaningful for flushes: five distinct ranks)."""
    ranks = ranks_of(np.arange(-1, FIVE_CARD_VALUES))[1:].astype(np.int32)
    return np.bitwise_or.reduce(np.left_shift(1, ranks), axis=1).astype(np.int32)


def _lowest_bit(x: npt.NDArray[np.uint64]) -> npt.NDArray[np.int8]:
    """Index of the lowest set bit of each (nonzero) mask."""
    low = x & (~x + np.uint64(1))
    return np.bitwise_count(low - np.uint64(1)).astype(np.int8)


def _first_free(
    used: npt.NDArray[np.uint64], rank: npt.NDArray[np.integer], which: int = 0
) -> Codes:
    """The code of the first (which=0) or second (1) free card of each rank."""
    taken = (used >> card_code(rank.astype(np.uint64), np.uint64(0))) & np.uint64(15)
    suit = _free_suits()[which][taken.astype(np.intp)]
    return card_code(rank.astype(np.int8), suit).astype(np.int8)


def substitutes(
    *,
    jokers: int,
    value: npt.NDArray[np.int16],
    rank_value: npt.NDArray[np.int16],
    rank_arg: npt.NDArray[np.int8],
    used: npt.NDArray[np.uint64],
    flush_suit: npt.NDArray[np.int8],
    suited: npt.NDArray[np.int32],
) -> Codes:
    """The first substitutes reaching `value`, shape (rows, jokers), ascending per row.

    `used` masks the row's standard cards and the board's; `suited` masks the ranks
    held in the flush suit by both; `rank_arg` is the tables' first rank (pair).
    """
    n = len(value)
    out = np.empty((n, jokers), dtype=np.int8)
    by_rank = value == rank_value
    if jokers == 1:
        out[:, 0] = _first_free(used, rank_arg)
    else:
        pair = multisets(2).ranks[rank_arg]
        out[:, 0] = _first_free(used, pair[:, 0])
        same = pair[:, 0] == pair[:, 1]
        out[:, 1] = np.where(same, _first_free(used, pair[:, 0], 1), _first_free(used, pair[:, 1]))

    flush = np.flatnonzero(~by_rank)
    if flush.size:
        out[flush] = _flush_substitutes(
            jokers, value[flush], used[flush], flush_suit[flush], suited[flush]
        )
    return out


def _flush_substitutes(
    jokers: int,
    value: npt.NDArray[np.int16],
    used: npt.NDArray[np.uint64],
    flush_suit: npt.NDArray[np.int8],
    suited: npt.NDArray[np.int32],
) -> Codes:
    needed = (_value_rank_mask()[value] & ~suited).astype(np.uint64)
    n_needed = np.bitwise_count(needed)
    low = _lowest_bit(np.where(needed == 0, np.uint64(1), needed))
    low_card = card_code(low, flush_suit).astype(np.int8)
    free = ~used & np.uint64((1 << 52) - 1)
    first = _lowest_bit(free)
    if jokers == 1:
        return np.where(n_needed == 0, first, low_card)[:, None]
    second = _lowest_bit(free & (free - np.uint64(1)))
    high = needed & ~(needed & (~needed + np.uint64(1)))
    high_card = card_code(_lowest_bit(np.where(high == 0, np.uint64(1), high)), flush_suit)
    c1 = np.where(n_needed == 2, low_card, first)
    c2 = np.select(
        [n_needed == 0, n_needed == 2, first == low_card],
        [second, high_card.astype(np.int8), second],
        default=low_card,
    )
    return np.stack([c1, c2], axis=1).astype(np.int8)
