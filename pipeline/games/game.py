"""What a game of the family is, as data: its rows, boards, deck, players and seats.

The evaluator, the scoring, the money, the store and the checks read every count
from here instead of writing 7 or 2 again; another game is another `Variant`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from pipeline.evaluator import Plays

HOME_RUN_NONE, HOME_RUN_SEAT, HOME_RUN_OPPONENT = 0, 1, 2
HOME_RUN_NAMES = (None, "seat", "opponent")  # who of a pair scored it, as recorded, by code


class Family(StrEnum):
    """Whose scoring a game plays."""

    taiwanese = "taiwanese"
    chinese = "chinese"  # closed Chinese Poker
    open_face = "open_face"


class Layout(StrEnum):
    """Whose rows and boards a game deals (a batch of hands holds one layout)."""

    taiwanese = "taiwanese"  # 1, 2 and 4 cards against two boards
    chinese = "chinese"  # 3, 5 and 5 cards, no boards


@dataclass(frozen=True)
class Streets:
    """How an open-face game deals, in and out of Fantasyland (chinese-family.md 5)."""

    first: int  # cards dealt (and placed) on the first street
    later: int  # streets after the first
    later_dealt: int
    later_placed: int
    fantasyland_dealt: tuple[int, int]  # the fewest and most cards a Fantasyland street deals

    @property
    def progressive(self) -> bool:
        """Whether Fantasyland deals more cards for a stronger top (Pineapple's 14-17)."""
        return self.fantasyland_dealt[0] != self.fantasyland_dealt[1]


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
    jokers: int  # the most jokers one hand may hold (0: the deck has none)
    home_run_bonus: int
    min_players: int
    max_players: int
    seats: int  # seats are numbered 1 to this
    floor_points: int  # a player below this many points is not dealt in again (0: no floor)
    family: Family = Family.taiwanese
    layout: Layout = Layout.taiwanese
    streets: Streets | None = None  # open-face games: how each street deals
    table_prefix: str = "G"  # the simulator's table ids begin with it

    @property
    def open_face(self) -> bool:
        """Whether its cards are dealt and placed street by street."""
        return self.streets is not None

    @property
    def cards_per_player(self) -> int:
        return sum(row.size for row in self.rows)

    @property
    def row_names(self) -> tuple[str, ...]:
        return tuple(row.name for row in self.rows)

    @property
    def row_sizes(self) -> dict[str, int]:
        return {row.name: row.size for row in self.rows}

    @property
    def values_per_player(self) -> int:
        """Row values of one player: every row on every board (one set without boards)."""
        return max(self.boards, 1) * len(self.rows)

    @property
    def max_pair_points(self) -> int:
        """The most one player can win from another in a hand: every row on every board,
        and the Home Run."""
        return max(self.boards, 1) * sum(row.points for row in self.rows) + self.home_run_bonus

    @property
    def cover_points(self) -> int:
        """What a dealt-in player must be able to pay each opponent."""
        return self.max_pair_points

    def row(self, name: str) -> Row:
        return next(row for row in self.rows if row.name == name)
