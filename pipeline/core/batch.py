"""A validated batch of hands as columns: what the evaluation, scoring and checks consume.

Money is integer cents (int64), the rake rate an integer in billionths, times
microseconds since the epoch (UTC), cards small integer codes. Rows of the
player-level arrays point at their hand by index into the batch.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
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
    """Hands and what belongs to them: players, settlements and sitting-out players
    (by `hand`), recorded rows and streets (by player), streets' parts (by street).
    Each such column of owners is non-decreasing: an owner's items lie together, in
    their owners' order (as decoded, taken and joined)."""

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

    @cached_property
    def firsts(self) -> Firsts:
        """Where each owner's items begin (made once: a batch is taken from many times)."""
        players, streets = self.players, self.players.streets
        return Firsts(
            players=_firsts(players.hand, len(self)),
            settlements=_firsts(self.settlements.hand, len(self)),
            sitting_out=_firsts(self.sitting_out.hand, len(self)),
            rows=_firsts(self.rows.player, len(players)),
            streets=_firsts(streets.player, len(players)),
            parts={
                name: _firsts(street, len(streets)) for name, (_, street) in streets.parts.items()
            },
        )


@dataclass(frozen=True)
class Firsts:
    """Per owner in a batch, where its items begin, and one more: where the last ends
    (an owner's items are firsts[owner] up to firsts[owner + 1])."""

    players: Ints  # per hand
    settlements: Ints
    sitting_out: Ints
    rows: Ints  # per player
    streets: Ints
    parts: dict[str, Ints]  # per street, by part


def _firsts(owner: Ints, n: int) -> Ints:
    """Where the items of each of `n` owners begin in `owner` (non-decreasing), and the end."""
    return np.concatenate([np.zeros(1, dtype=np.int64), np.cumsum(np.bincount(owner, minlength=n))])


def taken(batch: HandBatch, hands: Ints) -> tuple[HandBatch, Ints]:
    """The hands `hands` of `batch` (indices in any order, a hand as many times as it is
    named) as a batch of their own in that order, with their players, streets, recorded
    rows, settlements and sitting-out players, which follow their hands; and the indices
    of their players in `batch` (to take what is kept per player beside it). The cost is
    that of the hands taken, not of the batch: each owner's items are found where they
    begin (`HandBatch.firsts`)."""
    firsts = batch.firsts
    kept, player_hand = _following(firsts.players, hands)
    settled, settled_hand = _following(firsts.settlements, hands)
    away, away_hand = _following(firsts.sitting_out, hands)
    return HandBatch(
        hands=each(batch.hands, hands, len(batch)),
        game=batch.game,
        boards=batch.boards[hands],
        players=_players(batch.players, firsts, kept, player_hand),
        rows=_recorded_rows(batch.rows, firsts.rows, kept),
        settlements=_renumbered(batch.settlements, settled, settled_hand),
        sitting_out=_renumbered(batch.sitting_out, away, away_hand),
        rules=batch.rules,
    ), kept


def _following(firsts: Ints, kept: Ints) -> tuple[Ints, Ints]:
    """The items of the owners `kept` (in any order, repeated as named), in the order of their
    owners in `kept` and of an owner's in their own order; and each one's owner's place
    in `kept`. `firsts`: where each owner's items begin (`Firsts`)."""
    lengths = firsts[kept + 1] - firsts[kept]
    return spans(firsts[kept], lengths), np.repeat(np.arange(len(kept), dtype=np.int64), lengths)


def spans(first: Ints, lengths: Ints) -> Ints:
    """The indices first[i], first[i] + 1, ... (lengths[i] of them) of each i, in order."""
    before = np.concatenate([np.zeros(1, dtype=np.int64), np.cumsum(lengths)[:-1]])
    return np.repeat(first - before[: len(first)], lengths) + np.arange(int(lengths.sum()))


def _renumbered(columns: Any, index: Ints, hand: Ints) -> Any:
    """Columns with a `hand` (settlements, sitting out) at `index`, at their hands' new
    indices `hand`."""
    return replace(each(columns, index, len(columns.hand)), hand=hand)


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


def _players(players: Players, firsts: Firsts, kept: Ints, hand: Ints) -> Players:
    """The players `kept` of a batch, at their hands' new indices `hand`."""
    mine, street_player = _following(firsts.streets, kept)  # their streets, in order
    parts = {}
    for name, (codes, _) in players.streets.parts.items():
        on, street_of = _following(firsts.parts[name], mine)
        parts[name] = (codes[on], street_of)
    return replace(
        each(players, kept, len(players)),
        hand=hand,
        setting={name: cards[kept] for name, cards in players.setting.items()},
        streets=Streets(street_player, parts),
    )


def without_streets(batch: HandBatch) -> HandBatch:
    """`batch` with its open-face players' streets left out (for what reads them once:
    scoring does not)."""
    streets = batch.players.streets
    none = Streets(
        streets.player[:0],
        {name: (codes[:0], at[:0]) for name, (codes, at) in streets.parts.items()},
    )
    return replace(batch, players=replace(batch.players, streets=none))


def _recorded_rows(rows: RecordedRows, firsts: Ints, kept: Ints) -> RecordedRows:
    mine, player = _following(firsts, kept)
    return replace(each(rows, mine, len(rows.player)), player=player)


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
