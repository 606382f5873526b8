"""A validated batch of hands as columns: what the evaluation, scoring and checks consume.

Money is integer cents (int64), the rake rate an integer in billionths, times
microseconds since the epoch (UTC), cards small integer codes. Rows of the
player-level arrays point at their hand by index into the batch.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from pipeline.core.games import ROW_NAMES, Variant, per_game
from pipeline.core.rules import CONTRACT, RuleBook

Ints = npt.NDArray[np.int64]
Codes = npt.NDArray[np.int8]
Flags = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class Hands:
    hand_id: pa.Array
    table_id: pa.Array
    hand_no: Ints
    started_at: Ints  # microseconds since the epoch, UTC
    variant: pa.Array
    currency: pa.Array
    point_value: Ints
    rake_rate: Ints  # billionths
    rake_cap: Ints
    rake_total: Ints  # recorded; see has_rake_total
    has_rake_total: Flags
    has_settlements: Flags
    source: pa.Array
    digest: pa.Array  # the SHA-256 of the record as read (ingest/digests.py)
    two_four: Flags  # chinese: scored 2-4 (else 1-6)
    surrender_points: Ints  # chinese
    game: Ints  # the index of the hand's game in pipeline.core.games.VARIANTS
    fantasyland_rule: Flags  # open-face: the table plays Fantasyland
    profile: Ints  # the house-rules profile it is audited under: a code of the batch's RuleBook

    def __len__(self) -> int:
        return len(self.hand_no)

    def open_face(self) -> Flags:
        """Per hand: whether its game is an open-face one."""
        return per_game(lambda g: g.open_face)[self.game]


@dataclass(frozen=True)
class Players:
    hand: Ints
    seat: Ints
    player_id: pa.Array
    stack_start: Ints
    add_on: Ints
    timed_out: Flags
    setting: dict[str, Codes]  # per row name, (players, the row's size)
    declared: Ints  # chinese: a code of pipeline.core.games.chinese.DECLARATIONS (0: play)
    natural: Ints  # chinese: 1 + the index of the natural declared in NATURALS, 0 for none
    fouled: Flags  # the family's recorded foul; see has_fouled
    has_fouled: Flags
    fantasyland: Flags  # open-face: dealt in Fantasyland (as recorded)
    fantasyland_next: Flags  # open-face: recorded; see has_fantasyland_next
    has_fantasyland_next: Flags
    streets: Streets  # open-face: what each street dealt, placed and discarded
    points: Ints  # recorded
    won: Ints
    rake: Ints
    net: Ints
    stack_end: Ints

    def __len__(self) -> int:
        return len(self.hand)


STREET_PARTS = ("dealt", *ROW_NAMES, "discard")


@dataclass(frozen=True)
class Streets:
    """The open-face players' streets as card codes, read once for the checks and the store.

    `player`: each street's player, streets in order (so non-decreasing). `parts`: per
    part of a street (STREET_PARTS), its cards' codes and the street each belongs to.
    """

    player: Ints
    parts: dict[str, tuple[Codes, Ints]]

    def __len__(self) -> int:
        return len(self.player)

    def per_player(self, n_players: int) -> Ints:
        """How many streets each of `n_players` players has."""
        return np.bincount(self.player, minlength=n_players)

    def firsts(self) -> Ints:
        """Where each player's streets begin, for the players with streets, in order."""
        return np.flatnonzero(np.diff(self.player, prepend=-1))

    def numbers(self) -> Ints:
        """Each street's place among its player's streets, from 0."""
        return places_in_runs(self.player)


def places_in_runs(keys: Ints) -> Ints:
    """Each item's place (from 0) in the run of equal keys it belongs to (keys grouped)."""
    if not len(keys):
        return np.zeros(0, np.int64)
    first = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    return np.arange(len(keys)) - np.repeat(first, np.diff(np.r_[first, len(keys)]))


@dataclass(frozen=True)
class RecordedRows:
    """The recorded evaluation, one entry per (player, board, row) that was recorded."""

    player: Ints
    board: Ints  # 0 or 1
    row: Ints  # index into ROW_NAMES
    value: pa.Array  # text as recorded
    joker_as: pa.Array  # list<string> as recorded (null when absent)
    royalty: Ints  # the family's recorded royalty; see has_royalty
    has_royalty: Flags


@dataclass(frozen=True)
class Settlements:
    hand: Ints
    seat: Ints
    opponent: Ints
    points: Ints
    home_run: Ints  # a code of pipeline.core.games (index into HOME_RUN_NAMES)
    amount: Ints


@dataclass(frozen=True)
class SittingOut:
    hand: Ints
    seat: Ints
    player_id: pa.Array
    stack: Ints
    reason: pa.Array


@dataclass(frozen=True)
class HandBatch:
    hands: Hands
    game: Variant  # the rows and boards every hand of the batch shares
    boards: Codes  # (hands, boards, board size)
    players: Players
    rows: RecordedRows
    settlements: Settlements
    sitting_out: SittingOut
    rules: RuleBook = CONTRACT  # the profiles `hands.profile` indexes

    def __len__(self) -> int:
        return len(self.hands)
