"""A player's setting and row values as a few 64-bit words: how the store keeps them.

Card codes take 6 bits (ten to a word), hand values 15 bits (four to a word), the
first in the lowest bits. A Taiwanese player's 7 cards and 6 values fit in three
words, a Chinese player's 13 cards and 3 values in three. DuckDB stores words for
less than fixed-size lists of small integers: the row values of 200,000 Taiwanese
hands went in with 0.41 CPU-s as words, 0.70 as lists. The store's `rows` view reads
them back (`unpacked_sql`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt


@dataclass(frozen=True)
class Packing:
    name: str  # the columns are name_1, name_2, ...
    bits: int
    per_word: int

    def words(self, count: int) -> int:
        """How many words `count` items take."""
        return -(-count // self.per_word)

    def columns(self, count: int) -> list[str]:
        return [f"{self.name}_{w + 1}" for w in range(self.words(count))]

    def pack(self, items: npt.NDArray[np.integer]) -> dict[str, npt.NDArray[np.int64]]:
        """(players, count) items, each in 0 .. 2**bits - 1, as each player's words."""
        items = np.asarray(items, dtype=np.int64)
        if items.size and (items.min() < 0 or items.max() >= 1 << self.bits):
            raise ValueError(f"{self.name}: an item outside 0 .. {(1 << self.bits) - 1}")
        shifts = self.bits * np.arange(self.per_word, dtype=np.int64)
        packed = {}
        for w, column in enumerate(self.columns(items.shape[1])):
            part = items[:, w * self.per_word : (w + 1) * self.per_word]
            packed[column] = (part << shifts[: part.shape[1]]).sum(axis=1)
        return packed

    @property
    def macro(self) -> tuple[str, str, str]:
        """The DuckDB macro `NAME_item(word, i)`: item i of one word (helpers.encoding)."""
        return f"{self.name}_item", "word, i", f"(word >> ({self.bits} * i)) & {self.mask}"

    @property
    def mask(self) -> int:
        return (1 << self.bits) - 1

    def unpacked_sql(self, alias: str, index: str, words: int) -> str:
        """SQL for item `index` (0-based, an SQL expression) of the words of `alias` (the
        macro reads it from its word)."""
        index = f"({index})"
        word = " ".join(
            f"WHEN {index} < {(w + 1) * self.per_word} THEN {alias}.{self.name}_{w + 1}"
            for w in range(words - 1)
        )
        last = f"{alias}.{self.name}_{words}"
        chosen = f"CASE {word} ELSE {last} END" if words > 1 else last
        within = f"{index} % {self.per_word}" if words > 1 else index
        return f"{self.macro[0]}({chosen}, {within})"


CARDS = Packing("cards", bits=6, per_word=10)
VALUES = Packing("values", bits=15, per_word=4)
# The value stored for a board a hand's profile does not deal (no value has this id, so
# the `rows` view shows no row for it).
NO_VALUE = (1 << VALUES.bits) - 1
