"""A validated batch of hands as columns: what the evaluation, scoring and checks consume.

Money is integer cents (int64), the rake rate an integer in billionths, times
microseconds since the epoch (UTC), cards small integer codes. Rows of the
player-level arrays point at their hand by index into the batch.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from pipeline.core.games import ROW_NAMES, Variant, per_game
from pipeline.core.rules import CONTRACT, RuleBook
from pipeline.helpers.columns import whole

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
    parsed: npt.NDArray[np.int16]  # the value it names (`parse_value`; -1: none)
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


def taken(batch: HandBatch, hands: Ints) -> tuple[HandBatch, Ints]:
    """The hands `hands` of `batch` (indices, distinct, in any order) as a batch of their
    own in that order, with their players, streets, recorded rows, settlements and
    sitting-out players, which follow their hands; and the indices of their players in
    `batch` (to take what is kept per player beside it)."""
    renumber = _renumbering(hands, len(batch))
    players = batch.players
    kept = _following(renumber, players.hand)
    settled = _following(renumber, batch.settlements.hand)
    away = _following(renumber, batch.sitting_out.hand)
    taken_players = _players(players, kept, renumber[players.hand[kept]])
    return HandBatch(
        hands=each(batch.hands, hands, len(batch)),
        game=batch.game,
        boards=batch.boards[hands],
        players=taken_players,
        rows=_recorded_rows(batch.rows, kept, len(players)),
        settlements=_renumbered(batch.settlements, settled, renumber),
        sitting_out=_renumbered(batch.sitting_out, away, renumber),
        rules=batch.rules,
    ), kept


def _renumbering(kept: Ints, n: int) -> Ints:
    """Per index of `n` items, its place among `kept`, or -1."""
    renumber = np.full(n + 1, -1, dtype=np.int64)
    renumber[kept] = np.arange(len(kept))
    return renumber


def _following(renumber: Ints, owner: Ints) -> Ints:
    """The items whose owner is kept (`renumber`: each owner's new place, or -1), in the
    order of their owners' new places, and of an owner's in their own order."""
    new = renumber[owner]
    mine = np.flatnonzero(new >= 0)
    places = new[mine]
    if len(places) and bool((places[1:] < places[:-1]).any()):  # (taken out of order)
        mine = mine[np.argsort(places, kind="stable")]
    return mine


def _renumbered(columns: Any, index: Ints, renumber: Ints) -> Any:
    """Columns with a `hand` (settlements, sitting out) at `index`, their hands renumbered."""
    taken = each(columns, index, len(columns.hand))
    return replace(taken, hand=renumber[taken.hand])


def each(columns: Any, index: Ints, n: int) -> Any:
    """A dataclass of columns of length `n` with each column's items at `index` (numpy
    arrays indexed, Arrow arrays taken, lists picked); any other field kept as it is."""
    at = pa.array(index)
    values: dict[str, Any] = {}
    for name, value in vars(columns).items():
        if isinstance(value, np.ndarray) and len(value) == n:
            values[name] = value[index]
        elif isinstance(value, (pa.Array, pa.ChunkedArray)) and len(value) == n:
            values[name] = value.take(at)
        elif isinstance(value, list) and len(value) == n:
            values[name] = [value[int(i)] for i in index]
        elif isinstance(value, (np.ndarray, pa.Array, pa.ChunkedArray, list)):
            raise ValueError(f"{name} has {len(value)} items, not {n}")
        else:
            values[name] = value
    return type(columns)(**values)


def _players(players: Players, kept: Ints, hand: Ints) -> Players:
    """The players `kept` of a batch, at their hands' new indices `hand`."""
    streets = players.streets
    renumber = _renumbering(kept, len(players))
    mine = _following(renumber, streets.player)  # their streets, in their order
    street_number = _renumbering(mine, len(streets))
    parts = {}
    for name, (codes, street) in streets.parts.items():
        on = _following(street_number, street)
        parts[name] = (codes[on], street_number[street[on]])
    return replace(
        each(players, kept, len(players)),
        hand=hand,
        setting={name: cards[kept] for name, cards in players.setting.items()},
        streets=Streets(renumber[streets.player[mine]], parts),
    )


def _recorded_rows(rows: RecordedRows, kept: Ints, n_players: int) -> RecordedRows:
    renumber = _renumbering(kept, n_players)
    mine = _following(renumber, rows.player)
    return replace(each(rows, mine, len(rows.player)), player=renumber[rows.player[mine]])


def joined(batches: list[HandBatch]) -> HandBatch:
    """Batches of one layout and one rule book as one batch, in order."""
    if len(batches) == 1:
        return batches[0]
    first = batches[0]
    hands = _starts([len(b) for b in batches])
    players = _starts([len(b.players) for b in batches])
    streets = _starts([len(b.players.streets) for b in batches])

    def shifted(columns: list[Ints], by: Ints) -> Ints:
        return np.concatenate([c + s for c, s in zip(columns, by, strict=True)])

    parts = {
        name: (
            np.concatenate([b.players.streets.parts[name][0] for b in batches]),
            shifted([b.players.streets.parts[name][1] for b in batches], streets),
        )
        for name in first.players.streets.parts
    }
    return HandBatch(
        hands=stacked([b.hands for b in batches]),
        game=first.game,
        boards=np.concatenate([b.boards for b in batches]),
        players=replace(
            stacked([b.players for b in batches]),
            hand=shifted([b.players.hand for b in batches], hands),
            setting={
                name: np.concatenate([b.players.setting[name] for b in batches])
                for name in first.players.setting
            },
            streets=Streets(shifted([b.players.streets.player for b in batches], players), parts),
        ),
        rows=replace(
            stacked([b.rows for b in batches]),
            player=shifted([b.rows.player for b in batches], players),
        ),
        settlements=replace(
            stacked([b.settlements for b in batches]),
            hand=shifted([b.settlements.hand for b in batches], hands),
        ),
        sitting_out=replace(
            stacked([b.sitting_out for b in batches]),
            hand=shifted([b.sitting_out.hand for b in batches], hands),
        ),
        rules=first.rules,
    )


def _starts(lengths: list[int]) -> Ints:
    """Where each of items of `lengths`, one after another, begins."""
    return np.cumsum([0, *lengths[:-1]]).astype(np.int64)


def stacked(items: list[Any]) -> Any:
    """Dataclasses of columns, one after another: numpy arrays concatenated, Arrow
    arrays too, lists chained; any other field the first's (set by the caller)."""
    values: dict[str, Any] = {}
    for name, value in vars(items[0]).items():
        parts = [vars(item)[name] for item in items]
        if isinstance(value, np.ndarray):
            values[name] = np.concatenate(parts)
        elif isinstance(value, (pa.Array, pa.ChunkedArray)):
            values[name] = pa.concat_arrays([whole(p) for p in parts])
        elif isinstance(value, list):
            values[name] = [x for p in parts for x in p]
        else:
            values[name] = value
    return type(items[0])(**values)
