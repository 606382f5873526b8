"""What a row's evaluation needs to know of a board, computed once per board.

Card arrays are walked one column (one card position) at a time: a contiguous
gather per column is far cheaper than numpy reductions along a short axis.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from pipeline.core.cards import JOKER
from pipeline.core.evaluator import memo
from pipeline.core.evaluator.tables import RANK_KEY, flush_best, multisets, rank5
from pipeline.helpers.encoding import rank_of, suit_of

NO_SUIT = -1
_SUIT_DIGIT = 8  # suit counts packed as octal digits: up to 7 cards of a suit
_SUIT_SHIFT = 19  # above every rank key sum of five cards (< 2**19)


@memo.table
def card_bit() -> npt.NDArray[np.uint64]:
    """Per card code (and the joker, 52): its bit in a 52-bit card mask (0 for the joker)."""
    bits = np.zeros(JOKER + 1, dtype=np.uint64)
    bits[:JOKER] = np.left_shift(np.uint64(1), np.arange(JOKER, dtype=np.uint64))
    return bits


@memo.table
def rank_bit_in_suit() -> npt.NDArray[np.int32]:
    """Row (flush suit + 1) x card code -> the card's rank bit if it is of that suit, else 0."""
    table = np.zeros((5, JOKER + 1), dtype=np.int32)
    codes = np.arange(JOKER)
    for suit in range(4):
        table[suit + 1, codes] = np.where(suit_of(codes) == suit, 1 << rank_of(codes), 0)
    return table.ravel()


@memo.table
def _rank_and_suit_key() -> npt.NDArray[np.int32]:
    """Per card code: its rank key, plus its suit as an octal digit above bit 19.

    Summed over a board, the low 19 bits hash its rank multiset and the high bits
    count each suit: one gather per card gives both.
    """
    key = np.zeros(JOKER + 1, dtype=np.int32)
    codes = np.arange(JOKER)
    key[:JOKER] = RANK_KEY[rank_of(codes)] + (_SUIT_DIGIT ** suit_of(codes) << _SUIT_SHIFT)
    return key


@memo.table
def _flush_suit_of_counts() -> npt.NDArray[np.int8]:
    """Packed suit counts -> the suit held three or more times, else NO_SUIT."""
    packed = np.arange(_SUIT_DIGIT**4)
    counts = np.stack([(packed // _SUIT_DIGIT**s) % _SUIT_DIGIT for s in range(4)], axis=1)
    return np.where(counts.max(axis=1) >= 3, counts.argmax(axis=1), NO_SUIT).astype(np.int8)


def columns(cards: npt.ArrayLike) -> npt.NDArray[np.intp]:
    """Card codes as contiguous columns (one per card position), ready to index tables."""
    return np.ascontiguousarray(np.asarray(cards).T, dtype=np.intp)


@dataclass(frozen=True)
class BoardFeatures:
    """Per board: its rank multiset, the one suit that can make a flush with it, its cards."""

    index: npt.NDArray[np.int32]  # rank multiset index (see tables.multisets(5))
    flush_suit: npt.NDArray[np.int8]  # the suit held three or more times, else NO_SUIT
    suited: npt.NDArray[np.int32]  # 13-bit mask of the ranks held in flush_suit
    cards: npt.NDArray[np.int8]  # (boards, 5) the cards themselves

    def __len__(self) -> int:
        return len(self.index)

    def take(self, rows: npt.NDArray[np.integer]) -> BoardFeatures:
        return BoardFeatures(
            self.index[rows], self.flush_suit[rows], self.suited[rows], self.cards[rows]
        )

    def used(self) -> npt.NDArray[np.uint64]:
        """52-bit mask of each board's cards (needed only where a joker is resolved)."""
        return card_mask(columns(self.cards))


def card_mask(cols: npt.NDArray[np.intp]) -> npt.NDArray[np.uint64]:
    """52-bit mask of the standard cards of each row, from `columns(...)` (jokers left out)."""
    bits = card_bit()
    mask = bits[cols[0]].copy()
    for col in cols[1:]:
        mask |= bits[col]
    return mask


def read_boards(boards: npt.ArrayLike) -> BoardFeatures:
    """Features of boards given as card codes, shape (n, 5); boards hold no jokers."""
    cards = np.asarray(boards)
    if cards.ndim != 2 or cards.shape[1] != 5:
        raise ValueError(f"Boards are rows of five cards; got an array of shape {cards.shape}.")
    cols = columns(cards)
    key = _rank_and_suit_key()
    packed = key[cols[0]].copy()
    for col in cols[1:]:
        packed += key[col]
    flush_suit = _flush_suit_of_counts()[packed >> _SUIT_SHIFT]
    offset = (flush_suit.astype(np.intp) + 1) * (JOKER + 1)
    bit_in_suit = rank_bit_in_suit()
    suited = bit_in_suit[offset + cols[0]]
    for col in cols[1:]:
        suited |= bit_in_suit[offset + col]
    index = multisets(5).index_of_sum[packed & ((1 << _SUIT_SHIFT) - 1)]
    return BoardFeatures(index, flush_suit, suited, cards.astype(np.int8, copy=False))


def evaluate_boards(boards: npt.ArrayLike) -> npt.NDArray[np.int16]:
    """The value of each board's five cards on their own (any five cards, in fact)."""
    features = read_boards(boards)
    rank_value = rank5()[features.index]
    flush_value = flush_best()[np.where(np.bitwise_count(features.suited) == 5, features.suited, 0)]
    return np.maximum(rank_value, flush_value)
