"""A candidate's memo holds only the span of hands it was scored on, and answers as an
array of every hand of the pool would: what was set, else -1."""

from __future__ import annotations

import numpy as np

from pipeline.engine.pool import Memo


def test_a_memo_answers_as_an_array_of_every_hand() -> None:
    rng = np.random.default_rng(1)
    for _ in range(2000):
        size = int(rng.integers(1, 300))
        memo, every = Memo(size), np.full(size, -1, dtype=np.int16)
        for _ in range(int(rng.integers(1, 12))):  # runs of hands set, any way along
            first = int(rng.integers(0, size))
            span = np.arange(first, min(size, first + int(rng.integers(1, 80))))
            hands = rng.choice(span, size=int(rng.integers(0, len(span) + 1)), replace=False)
            counts = rng.integers(0, 100, len(hands)).astype(np.int16)
            memo[hands], every[hands] = counts, counts
            asked = rng.integers(0, size, int(rng.integers(0, 30)))
            assert (memo[asked] == every[asked]).all()
            assert memo.first >= 0 and memo.first + len(memo.counts) <= size


def test_a_memo_of_one_table_holds_its_hands_and_one_scored_along_grows_by_doubling() -> None:
    memo = Memo(200_000)
    memo[np.arange(5000, 5100)] = np.zeros(100, dtype=np.int16)
    assert len(memo.counts) == 100
    grown = Memo(200_000)
    sizes = set()
    for first in range(0, 200_000, 100):  # table after table
        grown[np.arange(first, first + 100)] = np.ones(100, dtype=np.int16)
        sizes.add(len(grown.counts))
    assert len(sizes) <= 12 and (grown[np.arange(200_000)] == 1).all()
