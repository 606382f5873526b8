"""Random deals of rows and boards as card codes, for tests, benchmarks and the generator."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from pipeline.core.cards import JOKER, N_STANDARD


def deal(
    rng: np.random.Generator, rows: int, row_size: int, *, jokers: int = 0
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.int8]]:
    """`rows` independent deals of a row of `row_size` cards and a five-card board.

    Each row holds exactly `jokers` jokers (0, 1 or 2); boards hold none. Cards are
    distinct within a deal.
    """
    if not 0 <= jokers <= min(2, row_size):
        raise ValueError(f"A row of {row_size} cards cannot hold {jokers} jokers.")
    standard = row_size - jokers + 5
    # The first `standard` positions of a random permutation of the deck, per row.
    order = np.argsort(rng.random((rows, N_STANDARD)), axis=1)[:, :standard].astype(np.int8)
    row = np.concatenate(
        [np.full((rows, jokers), JOKER, np.int8), order[:, : row_size - jokers]], axis=1
    )
    # Shuffle the row so jokers are not always first.
    row = np.take_along_axis(row, np.argsort(rng.random(row.shape), axis=1), axis=1)
    return row, order[:, row_size - jokers :]
