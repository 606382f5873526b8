"""The house rules a simulated table is dealt by (house-rules.md): a profile of a rules file,
or the contract; each simulator reads its game's values from here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pipeline.core.games import CODES, Variant
from pipeline.core.games.chinese import ChineseRules
from pipeline.core.games.open_face import OpenFaceRules
from pipeline.core.games.taiwanese import HandRules
from pipeline.core.rules import CONTRACT, RuleBook


@dataclass(frozen=True)
class House:
    """A profile's code in `book`; `named`: whether hands name it (a rules file's)."""

    book: RuleBook
    code: int
    named: bool

    @classmethod
    def contract(cls, game: Variant) -> House:
        return cls(CONTRACT, CODES[game.name], False)

    @property
    def name(self) -> str:
        return self.book.profiles[self.code].name

    @property
    def game(self) -> str:
        return self.book.profiles[self.code].variant.name

    @property
    def floor_points(self) -> int:
        return int(self.book.floor_points[self.code])

    @property
    def cover_points(self) -> int:
        return int(self.book.cover_points[self.code])

    @property
    def boards(self) -> int:
        return int(self.book.boards[self.code])

    def hand_rules(self, hands: int) -> HandRules:
        """What `hands` Taiwanese hands are dealt and paid by."""
        one = np.full(hands, self.code)
        book = self.book
        return HandRules(book.boards[one], book.row_points[one], book.home_run_bonus[one])

    @property
    def chinese(self) -> ChineseRules:
        return self.book.chinese

    @property
    def open_face(self) -> OpenFaceRules:
        return self.book.open_face

    def profile(self, n: int) -> np.ndarray:
        """Its code for `n` items (players or pairs), to index the rules with."""
        return np.full(n, self.code, dtype=np.int64)

    def record(self) -> dict[str, Any]:
        """What a hand record says of its rules: the profile's name, when a file's."""
        return {"rules": self.name} if self.named else {}
