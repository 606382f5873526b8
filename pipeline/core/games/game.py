"""What a game of the family is, as data: its rows, boards, deck, players and seats.

The evaluator, the scoring, the money, the store and the checks read every count
from here instead of writing 7 or 2 again; another game is another `Variant`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import numpy as np
import numpy.typing as npt

from pipeline.core.evaluator import Plays

Ints = npt.NDArray[np.int64]

HOME_RUN_NONE, HOME_RUN_SEAT, HOME_RUN_OPPONENT = 0, 1, 2
HOME_RUN_NAMES = (None, "seat", "opponent")  # who of a pair scored it, as recorded, by code
# Who of a pair a decision names (its natural, surrender or foul): the Home Run's codes,
# and both.
BY_BOTH = 3
BY_NAMES = (*HOME_RUN_NAMES, "both")

# How a pair's settlement was decided (settlements.decided), by code, in the order the
# rules are tried: a natural, a surrender, a foul, then the rows and their bonus.
DECIDED = (
    "natural",
    "both_surrender",
    "surrender",
    "both_fouled",
    "foul",
    "home_run",  # Taiwanese: one player won every row on both boards
    "scoop",  # the family: one player won every row
    "overall_point",  # closed Chinese 2-4: one player won two rows
    "rows",
)
(NATURAL, BOTH_SURRENDER, SURRENDER, BOTH_FOULED, FOUL, HOME_RUN, SCOOP, OVERALL_POINT, ROWS) = (
    range(len(DECIDED))
)


@dataclass(frozen=True)
class Decision:
    """How each pair's points were decided, as the rule that settled it saw it (the seat
    is the pair's first player, the opponent its second)."""

    decided: Ints  # code into DECIDED
    by: Ints  # whose natural, surrender or foul: HOME_RUN_SEAT, HOME_RUN_OPPONENT or BY_BOTH
    rows_won: Ints  # bit k set where the seat won row k (board by board, rows in order)
    rows_lost: Ints  # bit k set where the opponent won it
    bonus: Ints  # the points of a Home Run, scoop or overall point, from the seat's side
    royalties: Ints | None  # (pairs, rows) royalty points counted for the seat (the family)
    opponent_royalties: Ints | None  # and for the opponent


def who(seat: npt.NDArray[np.bool_], opponent: npt.NDArray[np.bool_]) -> Ints:
    """Per pair: which of the two a condition holds for (0 neither, or seat, opponent, both)."""
    return seat.astype(np.int64) * HOME_RUN_SEAT + opponent.astype(np.int64) * HOME_RUN_OPPONENT


def row_masks(wins: Ints) -> tuple[Ints, Ints]:
    """The rows each side of a pair won, as bits, from per-row signs (pairs, k): +1 where
    the seat won, -1 where the opponent did."""
    bits = np.int64(1) << np.arange(wins.shape[1], dtype=np.int64)
    return (wins > 0) @ bits, (wins < 0) @ bits


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
