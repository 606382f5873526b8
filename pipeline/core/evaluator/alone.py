"""Rows valued on their own, without a board: three-card tops and five-card rows.

The Chinese Poker family plays no boards: a top is three cards (no straights or
flushes), a middle or bottom five. Both are one lookup by the rank multiset, and
for five cards a second by the ranks of a flush, over whole columns.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from pipeline.core.evaluator import memo
from pipeline.core.evaluator.boards import evaluate_boards
from pipeline.core.evaluator.tables import RANK_KEY, multisets
from pipeline.core.evaluator.values import (
    FIVE_CARD_VALUES,
    NO_VALUE,
    classify_three,
    three_card_classes,
)


@memo.table
def _three_card_value() -> npt.NDArray[np.int16]:
    """The value of every multiset of three ranks, by its index in `multisets(3)`."""
    strength = {key: FIVE_CARD_VALUES + i for i, key in enumerate(three_card_classes())}
    values = [
        strength[classify_three(tuple(int(r) for r in ranks))] for ranks in multisets(3).ranks
    ]
    return np.array([*values, NO_VALUE], dtype=np.int16)


def three_card_values(cards: npt.ArrayLike) -> npt.NDArray[np.int16]:
    """The value of each three-card top, shape (rows, 3) of card codes (no jokers).

    >>> from pipeline.core.cards import parse
    >>> from pipeline.core.evaluator import value_text
    >>> value_text(three_card_values(parse(["8h", "Kd", "8c"]).reshape(1, 3))).tolist()
    ['pair:88K']
    """
    codes = np.asarray(cards, dtype=np.intp)
    if codes.ndim != 2 or codes.shape[1] != 3:
        raise ValueError(f"Tops are rows of three cards; got an array of shape {codes.shape}.")
    key = RANK_KEY[codes >> 2].sum(axis=1)
    return _three_card_value()[multisets(3).index_of_sum[key]]


def five_card_values(cards: npt.ArrayLike) -> npt.NDArray[np.int16]:
    """The value of each row of five cards on their own, shape (rows, 5) (no jokers)."""
    return evaluate_boards(cards)
