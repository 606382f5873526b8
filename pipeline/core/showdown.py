"""Every row of every player's setting, evaluated on every board of its hand, in one pass."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from pipeline.core.evaluator import evaluate, read_boards
from pipeline.core.evaluator.alone import five_card_values, three_card_values
from pipeline.core.games import Variant


@dataclass(frozen=True)
class Showdown:
    """Values, shape (players, boards, rows), and joker substitutes (players, boards, rows, 2)."""

    value: npt.NDArray[np.int16]
    joker_as: npt.NDArray[np.int8]


def showdown(
    variant: Variant,
    boards: npt.NDArray[np.int8],
    settings: dict[str, npt.NDArray[np.int8]],
    hand_of_player: npt.NDArray[np.integer],
) -> Showdown:
    """Evaluate each player's rows (`settings[row.name]`, shape (players, row.size)).

    `boards` is (hands, variant.boards, board_size); player i sits at hand
    `hand_of_player[i]`. Each board is read once, whatever the number of players.
    """
    if variant.boards == 0:
        return _alone(variant, settings)
    n_hands = boards.shape[0]
    features = read_boards(boards.reshape(n_hands * variant.boards, variant.board_size))
    n_players = len(hand_of_player)
    value = np.empty((n_players, variant.boards, len(variant.rows)), dtype=np.int16)
    joker_as = np.empty((n_players, variant.boards, len(variant.rows), 2), dtype=np.int8)
    first_board = np.asarray(hand_of_player, dtype=np.intp) * variant.boards
    for b in range(variant.boards):
        on_board = features.take(first_board + b)
        for r, row in enumerate(variant.rows):
            result = evaluate(settings[row.name], on_board, plays=row.plays)
            value[:, b, r] = result.value
            joker_as[:, b, r] = result.joker_as
    return Showdown(value, joker_as)


def _alone(variant: Variant, settings: dict[str, npt.NDArray[np.int8]]) -> Showdown:
    """Rows valued on their own (no boards): shape (players, 1, rows), no jokers."""
    n_players = len(settings[variant.rows[0].name])
    value = np.empty((n_players, 1, len(variant.rows)), dtype=np.int16)
    for r, row in enumerate(variant.rows):
        cards = settings[row.name]
        value[:, 0, r] = three_card_values(cards) if row.size == 3 else five_card_values(cards)
    return Showdown(value, np.full((*value.shape, 2), -1, dtype=np.int8))
