"""The vectorized row evaluator: every row of many players against its board, in one call.

A row plays either any of its cards (the top and middle rows, like Hold'em) or
exactly two of them with exactly three of the board (the bottom row, like Omaha).
Rows are numpy arrays of card codes; jokers (code 52) are wild per board. The
work is a handful of array lookups per row: see `tables.py` for why that suffices.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np
import numpy.typing as npt

from pipeline.core.cards import JOKER
from pipeline.core.evaluator import tables
from pipeline.core.evaluator.boards import (
    BoardFeatures,
    card_mask,
    columns,
    rank_bit_in_suit,
    read_boards,
)
from pipeline.core.evaluator.jokers import substitutes
from pipeline.core.evaluator.tables import RANK_KEY, board_stride, multisets


class Plays(Enum):
    """How many of its own cards a row must play."""

    ANY = "any"  # best five of row + board (Hold'em)
    EXACTLY_TWO = "exactly_two"  # two of the row with three of the board (Omaha)
    ALONE = "alone"  # all of the row's cards on their own, no board (the Chinese family)


@dataclass(frozen=True)
class Evaluation:
    """Per row: the best value and, for rows holding jokers, what the jokers became."""

    value: npt.NDArray[np.int16]
    joker_as: npt.NDArray[np.int8]  # (rows, 2): first substitute(s) reaching the value; -1 unused


@dataclass(frozen=True)
class _RowParts:
    """Per row: the rank part and flush part of its value, and the rank-part argument."""

    rank_value: npt.NDArray[np.int16]
    rank_arg: npt.NDArray[np.int8]
    flush_value: npt.NDArray[np.int16]


def evaluate(
    cards: npt.ArrayLike,
    boards: npt.ArrayLike | BoardFeatures,
    board_of_row: npt.ArrayLike | None = None,
    *,
    plays: Plays = Plays.ANY,
) -> Evaluation:
    """Evaluate rows of cards against boards.

    `cards` is (rows, k): k = 1 or 2 with Plays.ANY, k = 4 with Plays.EXACTLY_TWO.
    `boards` is (boards, 5) card codes or their `read_boards` features; row i is
    scored against board `board_of_row[i]` (default: board i).
    """
    cards = np.asarray(cards, dtype=np.int8)
    features = boards if isinstance(boards, BoardFeatures) else read_boards(boards)
    if board_of_row is not None:
        features = features.take(np.asarray(board_of_row))
    size = _row_size(cards, len(features), plays)
    rank_tables = (
        tables.omaha_rank_tables()
        if plays is Plays.EXACTLY_TWO
        else tables.holdem_rank_tables(size)
    )
    cols = columns(cards)
    key_sum, jokers_held, suited = _read_rows(cols, features)
    stride = board_stride()

    def parts(rows: slice | npt.NDArray[np.intp], jokers: int) -> _RowParts:
        real = multisets(size - jokers).index_of_sum[key_sum[rows]]
        flat = real * stride + features.index[rows]
        arg = rank_tables.arg[jokers]
        return _RowParts(
            rank_value=rank_tables.value[jokers][flat],
            rank_arg=arg[flat] if arg is not None else np.zeros(len(flat), np.int8),
            flush_value=_flush_value(plays, jokers, suited[rows], features.suited[rows]),
        )

    plain = parts(slice(None), 0)
    value = np.maximum(plain.rank_value, plain.flush_value)
    joker_as = np.full((len(cards), 2), -1, dtype=np.int8)
    for jokers in (1, 2):
        rows = np.flatnonzero(jokers_held == jokers)
        if rows.size == 0:
            continue
        wild = parts(rows, jokers)
        value[rows] = np.maximum(wild.rank_value, wild.flush_value)
        joker_as[rows, :jokers] = substitutes(
            jokers=jokers,
            value=value[rows],
            rank_value=wild.rank_value,
            rank_arg=wild.rank_arg,
            used=card_mask(cols[:, rows]) | features.take(rows).used(),
            flush_suit=features.flush_suit[rows],
            suited=suited[rows] | features.suited[rows],
        )
    return Evaluation(value, joker_as)


def _row_size(cards: npt.NDArray[np.int8], n_boards: int, plays: Plays) -> int:
    """The cards a row holds, when rows of that size play that way on as many boards."""
    size = cards.shape[1] if cards.ndim == 2 else 0
    if (plays is Plays.ANY and size not in (1, 2)) or (plays is Plays.EXACTLY_TWO and size != 4):
        raise ValueError(f"A row playing {plays.value} of its cards cannot hold {size} cards.")
    if n_boards != len(cards):
        raise ValueError(f"{len(cards)} rows but {n_boards} boards to score them against.")
    return size


def _read_rows(
    cols: npt.NDArray[np.intp], features: BoardFeatures
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int8], npt.NDArray[np.int32]]:
    """Per row: the sum of its rank keys, its jokers, and its ranks in the board's flush suit."""
    key_sum = RANK_KEY[cols[0] >> 2].copy()
    jokers_held = (cols[0] == JOKER).astype(np.int8)
    offset = (features.flush_suit.astype(np.intp) + 1) * (JOKER + 1)
    suited = rank_bit_in_suit()[offset + cols[0]]
    for col in cols[1:]:
        key_sum += RANK_KEY[col >> 2]
        jokers_held += col == JOKER
        suited |= rank_bit_in_suit()[offset + col]
    return key_sum, jokers_held, suited


def _flush_value(
    plays: Plays,
    jokers: int,
    row_suited: npt.NDArray[np.int32],
    board_suited: npt.NDArray[np.int32],
) -> npt.NDArray[np.int16]:
    """The best flush a row makes in the board's flush suit (NO_VALUE where none)."""
    if plays is Plays.ANY:
        return tables.holdem_flush_tables()[jokers][row_suited | board_suited]
    omaha = tables.omaha_flush_tables()
    board = omaha.board_index[board_suited]  # no flush suit: mask 0, the sentinel
    flat = omaha.hole_index[row_suited] * omaha.board_stride + board
    if jokers == 0:
        return omaha.plain[flat]
    value = omaha.one_joker[flat]
    if jokers == 2:
        np.maximum(value, omaha.two_jokers[board], out=value)
    return value
