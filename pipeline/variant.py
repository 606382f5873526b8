"""What is Taiwanese about the game: its rows, their sizes and points, its boards and decks.

Another game of the family (Chinese Poker, Open-Face) is another `Variant`; the
evaluator, the scoring and the money stay as they are.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.evaluator import Plays


@dataclass(frozen=True)
class Row:
    """One row of a setting: its name, how many cards it holds and plays, what it scores."""

    name: str
    size: int
    plays: Plays
    points: int


@dataclass(frozen=True)
class Variant:
    """A game: its rows (in the order a setting lists them), boards, deck and Home Run."""

    name: str
    rows: tuple[Row, ...]
    boards: int
    board_size: int
    jokers: int
    home_run_bonus: int

    @property
    def cards_per_player(self) -> int:
        return sum(row.size for row in self.rows)

    def row(self, name: str) -> Row:
        return next(row for row in self.rows if row.name == name)


TAIWANESE_ROWS = (
    Row("top", 1, Plays.ANY, 1),
    Row("middle", 2, Plays.ANY, 2),
    Row("bottom", 4, Plays.EXACTLY_TWO, 3),
)

TAIWANESE = Variant("taiwanese", TAIWANESE_ROWS, boards=2, board_size=5, jokers=0, home_run_bonus=8)
TAIWANESE_JOKERS = Variant(
    "taiwanese_jokers", TAIWANESE_ROWS, boards=2, board_size=5, jokers=2, home_run_bonus=8
)

VARIANTS: dict[str, Variant] = {v.name: v for v in (TAIWANESE, TAIWANESE_JOKERS)}
