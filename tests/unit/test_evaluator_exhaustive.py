"""Every five-card and every seven-card hand, against the known counts and a scalar evaluator."""

import itertools

import numpy as np
import pytest

from pipeline.core.evaluator import Plays, category_of, evaluate, evaluate_boards, read_boards
from tests.scalar import five

# straight flush, four of a kind, full house, flush, straight, trips, two pair, pair, high card
FIVE_CARD_COUNTS = [40, 624, 3744, 5108, 10200, 54912, 123552, 1098240, 1302540]
SEVEN_CARD_COUNTS = [
    41584,
    224848,
    3473184,
    4047644,
    6180020,
    6461620,
    31433400,
    58627800,
    23294460,
]


@pytest.fixture(scope="module")
def all_fives() -> np.ndarray:
    return np.array(list(itertools.combinations(range(52), 5)), dtype=np.int8)


def test_all_five_card_hands(all_fives: np.ndarray) -> None:
    values = evaluate_boards(all_fives)
    assert len(values) == 2_598_960
    assert len(np.unique(values)) == 7462
    assert np.bincount(category_of(values), minlength=9)[::-1].tolist() == FIVE_CARD_COUNTS

    # The same order as the scalar evaluator: one scalar key per value, rising with it.
    keys = [five(tuple(hand)) for hand in all_fives.tolist()]
    key_of_value: dict[int, tuple[int, ...]] = {}
    for value, key in zip(values.tolist(), keys, strict=True):
        assert key_of_value.setdefault(value, key) == key
    ordered = [key_of_value[v] for v in sorted(key_of_value)]
    assert all(a < b for a, b in itertools.pairwise(ordered))


@pytest.mark.slow
def test_all_seven_card_hands_as_middle_rows(all_fives: np.ndarray) -> None:
    """All 133,784,560 hands: the two lowest cards as the row, the other five as the board."""
    boards = read_boards(all_fives)
    first_with = np.searchsorted(all_fives[:, 0], np.arange(53))
    counts = np.zeros(9, dtype=np.int64)
    for low, high in itertools.combinations(range(52), 2):
        start = first_with[high + 1]
        n = len(all_fives) - start
        if n == 0:
            continue
        rows = np.broadcast_to(np.array([low, high], dtype=np.int8), (n, 2))
        value = evaluate(rows, boards.take(np.arange(start, len(all_fives))), plays=Plays.ANY).value
        counts += np.bincount(category_of(value), minlength=9)
    assert counts.sum() == 133_784_560
    assert counts[::-1].tolist() == SEVEN_CARD_COUNTS
