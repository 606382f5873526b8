"""`rules infer`: which rules each table was dealt by, and where a table changed them.

The hands are read, checked and held once (parse and the checks that do not depend on
the rules); each candidate the search asks about is then scored and settled over them
in the same vectorized stages as a verify (`audit_batch`), with every hand forced onto
the candidate. A hand is exact under a candidate when the audit finds no divergence in
it. What a hand names in its own `rules` field is not believed here (it is what is
being checked), only kept to name the profile written for it.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.core.audit import audit_batch
from pipeline.core.batch import HandBatch
from pipeline.core.inference import (
    RowPoints,
    Search,
    best_split,
    candidate,
    hand_rules,
    read_row_points,
    search,
    with_value,
)
from pipeline.core.rules import GAMES, Profile, RuleBook, standard_profiles
from pipeline.helpers.columns import ints, is_null, whole
from pipeline.helpers.progress import Progress
from pipeline.ingest import decode, validate
from pipeline.ingest.sources import read_blocks

Flags = npt.NDArray[np.bool_]
Ints = npt.NDArray[np.int64]

TAIWANESE = {"taiwanese", "taiwanese_jokers"}
FLOORS = tuple(range(0, 201, 10))  # the floors the catalogue knows, in points
# While reading, a Taiwanese hand dealt one board is checked under a one-board profile
# of its game (else its board count would quarantine it); the search decides the rest.
ONE_BOARD = {
    f"one_board_{game.name}": code for code, game in enumerate(GAMES) if game.name in TAIWANESE
}
READING = RuleBook(
    standard_profiles()
    + tuple(Profile(name, code, {"boards": 1}) for name, code in ONE_BOARD.items())
)


@dataclass(frozen=True)
class Own:
    """What each hand of a batch says itself, which a candidate does not override."""

    has_scoring: Flags
    two_four: Flags
    has_surrender: Flags
    surrender_points: Ints
    boards: Ints  # how many boards the hand was dealt (0 in games without boards)
    named: list[str | None]  # its `rules` field


@dataclass(frozen=True)
class Floors:
    """The dealt-in players of a batch, for the floor: their hand (in the pool), id and
    stacks, and the hand's point value (cents)."""

    hand: Ints
    player: Any  # the ids as read (a batch's), or codes (the pool's)
    start: Ints
    end: Ints
    point_value: Ints
    first: Ints | None = None  # the pool's: where each hand's players begin


@dataclass
class Pool:
    """The verified hands of the inputs, held for scoring under each candidate."""

    batches: list[tuple[HandBatch, Own, int]] = field(default_factory=list)  # with offsets
    table_id: list[str] = field(default_factory=list)
    hand_no: list[int] = field(default_factory=list)
    started_at: list[int] = field(default_factory=list)
    game: list[int] = field(default_factory=list)
    boards: list[int] = field(default_factory=list)
    named: list[str | None] = field(default_factory=list)
    floors: list[Floors] = field(default_factory=list)  # per batch
    quarantined: Counter[str] = field(default_factory=Counter)
    memo: dict[str, Flags] = field(default_factory=dict)
    pairs_memo: dict[tuple[int, int], Pairs] = field(default_factory=dict)
    _players: Floors | None = None

    def __len__(self) -> int:
        return len(self.hand_no)

    def add(self, batch: HandBatch, own: Own) -> None:
        self.batches.append((batch, own, len(self)))
        hands = batch.hands
        self.table_id += hands.table_id.to_pylist()
        self.hand_no += hands.hand_no.tolist()
        self.started_at += hands.started_at.tolist()
        self.game += hands.game.tolist()
        self.boards += own.boards.tolist()
        self.named += own.named
        players = batch.players
        self.floors.append(
            Floors(
                hand=players.hand + len(self) - len(hands),
                player=players.player_id,
                start=players.stack_start,
                end=players.stack_end,
                point_value=hands.point_value[players.hand],
            )
        )

    def exact(self, profile: Profile) -> Flags:
        """Per hand of the pool: exact under `profile` (False for hands of other games)."""
        key = hand_rules(profile).digest  # the table rules' keys change no hand's audit
        if key not in self.memo:
            out = np.zeros(len(self), dtype=bool)
            for batch, own, offset in self.batches:
                out[offset : offset + len(batch)] = _exact(batch, own, profile)
            self.memo[key] = out
        return self.memo[key]

    def highest_floor(self, hands: Ints) -> int | None:
        """The highest floor (in points) that no player of `hands` (one table's, in
        order) contradicts: each who ended a hand below it was dealt in again with at
        least it (rules.md section 7). None when no player was dealt in twice."""
        f = self.players()
        assert f.first is not None
        rows = _ranges(f.first, hands)
        player = f.player[rows]
        order = np.argsort(player, kind="stable")  # hands are in order already
        player, start, end = player[order], f.start[rows][order], f.end[rows][order]
        again = np.r_[False, player[1:] == player[:-1]]
        if not again.any():
            return None
        worth = np.maximum(np.r_[0, end[:-1]], start)[again]
        cents = np.maximum(f.point_value[rows][order][again], 1)
        return int((worth // cents).min())

    def players(self) -> Floors:
        """Every dealt-in player of the pool, in hand order (made once)."""
        if self._players is None:
            parts = self.floors
            ids = pa.chunked_array([p.player for p in parts], pa.string())
            hand = np.concatenate([p.hand for p in parts])
            self._players = Floors(
                hand=hand,
                player=ints(pc.index_in(ids, value_set=pc.unique(ids))),
                start=np.concatenate([p.start for p in parts]),
                end=np.concatenate([p.end for p in parts]),
                point_value=np.concatenate([p.point_value for p in parts]),
                first=np.searchsorted(hand, np.arange(len(self) + 1)),
            )
        return self._players


def _ranges(first: Ints, hands: Ints) -> Ints:
    """The rows of `hands`, whose rows begin at first[hand] and end at first[hand + 1]."""
    lengths = first[hands + 1] - first[hands]
    starts = np.repeat(first[hands] - np.r_[0, lengths.cumsum()[:-1]], lengths)
    return starts + np.arange(int(lengths.sum()))


def read_pool(paths: Sequence[Path], progress: Progress | None = None) -> Pool:
    """Every record of `paths` read and checked once; the quarantined counted by check."""
    pool = Pool()
    seen: set[str] = set()
    read = 0
    for path in paths:
        for block in read_blocks(path):
            decoded = decode(block)
            table = decoded.table
            if table.num_rows:
                decoded = replace(decoded, table=_reading_rules(table))
            batches, rejects = validate(decoded, seen, READING)
            pool.quarantined.update(r.check.value for r in rejects)
            for batch in batches:
                pool.add(batch, _own(batch, table))
            read += table.num_rows + len(decoded.quarantined)
            if progress is not None:
                progress.update(read=read, verified=len(pool), file=str(path))
    return pool


def _reading_rules(table: pa.Table) -> pa.Table:
    """The `rules` column replaced: a one-board Taiwanese hand names its game's one-board
    profile, every other hand none."""
    variant = whole(table["variant"])
    boards = pc.fill_null(pc.list_value_length(table["boards"]), 0)
    names = [
        f"one_board_{v}" if v in TAIWANESE and b == 1 else None
        for v, b in zip(variant.to_pylist(), boards.to_pylist(), strict=True)
    ]
    column = pa.array(names, pa.string())
    if "rules" in table.column_names:
        return table.set_column(table.column_names.index("rules"), "rules", column)
    return table.append_column("rules", column)


def _own(batch: HandBatch, table: pa.Table) -> Own:
    at = pa.array(ints(pc.index_in(batch.hands.hand_id, value_set=whole(table["hand_id"]))))

    def column(name: str) -> pa.Array:
        if name not in table.column_names:
            return pa.nulls(len(at))
        return whole(table[name]).take(at)

    scoring = column("scoring")
    surrender = column("surrender_points")
    boards = pc.fill_null(pc.list_value_length(whole(table["boards"]).take(at)), 0)
    return Own(
        has_scoring=~is_null(scoring),
        two_four=pc.fill_null(pc.equal(scoring.cast(pa.string()), "2-4"), False).to_numpy(
            zero_copy_only=False
        ),
        has_surrender=~is_null(surrender),
        surrender_points=ints(surrender, 0),
        boards=ints(boards),
        named=column("rules").to_pylist(),
    )


def _exact(batch: HandBatch, own: Own, profile: Profile) -> Flags:
    """Per hand of `batch`: of the profile's game, and without divergence under it."""
    hands = batch.hands
    ok = hands.game == profile.game
    if profile.variant.name in TAIWANESE:
        ok &= own.boards == profile.value("boards")
    if not ok.any():
        return ok
    audit = audit_batch(force(batch, own, profile))
    bad = ints(pc.index_in(audit.divergences["hand_id"], value_set=hands.hand_id))
    ok[bad] = False
    return ok


def force(batch: HandBatch, own: Own, profile: Profile) -> HandBatch:
    """`batch` with every hand under `profile` (its own scoring and surrender points
    still win over the profile's, as in a verify)."""
    book = RuleBook((*standard_profiles(), replace(profile, name="candidate")))
    code = len(GAMES)
    hands = batch.hands
    forced = replace(
        hands,
        profile=np.full(len(hands), code, dtype=np.int64),
        two_four=np.where(own.has_scoring, own.two_four, book.chinese.two_four[code]),
        surrender_points=np.where(
            own.has_surrender, own.surrender_points, book.chinese.surrender_points[code]
        ),
    )
    return replace(batch, hands=forced, rules=book)


# --- per table --------------------------------------------------------------------------


@dataclass(frozen=True)
class Segment:
    """A run of a table's hands and the candidate that fits it."""

    table_id: str
    hands: Ints  # indices into the pool, in hand order
    fit: Search

    @property
    def profile(self) -> Profile:
        return self.fit.best


@dataclass(frozen=True)
class Change:
    table_id: str
    before: Segment
    after: Segment


def infer_tables(
    pool: Pool, book: RuleBook | None = None, progress: Progress | None = None
) -> tuple[list[Segment], list[Change]]:
    """Each table's segments (one unless its rules changed) and the changes between them."""
    segments: list[Segment] = []
    changes: list[Change] = []
    if progress is not None:
        progress.step("the rules of each table")
    for table_id, hands in _tables(pool):
        parts = _segments(pool, table_id, hands, book, [], depth=3)
        segments += [_with_floor(pool, part) for part in parts]
    segments = _shared(pool, segments)
    for a, b in itertools.pairwise(segments):
        if a.table_id == b.table_id:
            changes.append(Change(a.table_id, a, b))
    return segments, changes


def _with_floor(pool: Pool, segment: Segment) -> Segment:
    """A Taiwanese segment's floor: the highest of the catalogue no stack contradicts
    (else undetermined, and the contract's kept)."""
    fit = segment.fit
    if fit.best.variant.name not in TAIWANESE:
        return segment
    bound = pool.highest_floor(segment.hands)
    if bound is None:
        return replace(segment, fit=replace(fit, undetermined=(*fit.undetermined, "floor_points")))
    floor = max(f for f in FLOORS if f <= bound) if bound >= 0 else 0
    best = with_value(fit.best, "floor_points", floor)
    return replace(
        segment, fit=replace(fit, best=best, fits={**fit.fits, best.digest: (best, fit.exact)})
    )


def _shared(pool: Pool, segments: list[Segment]) -> list[Segment]:
    """Each segment takes the profile most segments of its game fit, where it fits the
    segment's hands as well (keys no hand told apart, a floor no stack reached): fewer
    profiles, the same fit."""
    uses = Counter(s.profile.digest for s in segments)
    profiles = {s.profile.digest: s.profile for s in segments}
    out = []
    for segment in segments:
        for digest, _ in uses.most_common():
            other = profiles[digest]
            if digest == segment.profile.digest:
                break  # its own is the most used that fits
            if other.game != segment.profile.game:
                continue
            floor = pool.highest_floor(segment.hands)
            fits_floor = floor is None or other.value("floor_points") <= floor
            if fits_floor and int(pool.exact(other)[segment.hands].sum()) >= segment.fit.exact:
                fits = {**segment.fit.fits, digest: (other, segment.fit.exact)}
                segment = replace(segment, fit=replace(segment.fit, best=other, fits=fits))
                break
        out.append(segment)
    return out


def _tables(pool: Pool) -> Iterator[tuple[str, Ints]]:
    """Each (table, game)'s hands, in hand order."""
    table = np.array(pool.table_id, dtype=object)
    key = np.array([f"{t}\x00{g}" for t, g in zip(pool.table_id, pool.game, strict=True)])
    order = np.lexsort((np.array(pool.hand_no), key))
    keys = key[order]
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    for start, end in zip(starts, np.r_[starts[1:], len(order)], strict=True):
        hands = order[start:end]
        yield str(table[hands[0]]), hands


def _seeds(pool: Pool, hands: Ints, book: RuleBook | None) -> list[Profile]:
    """Where the search starts: the contract, every profile of the rules file of the
    table's game, and (Taiwanese) the row points its recorded pairs give."""
    game = pool.game[int(hands[0])]
    boards = Counter(pool.boards[int(h)] for h in hands).most_common(1)[0][0]
    taiwanese = GAMES[game].name in TAIWANESE
    dealt = {"boards": boards} if taiwanese else {}
    seeds = [candidate(game, dealt)]
    if book is not None:
        seeds += [p for p in book.house if p.game == game]
    if taiwanese:
        read = row_points(pool, hands, game, boards)
        values: dict[str, Any] = dict(dealt)
        if read.row_points is not None:
            values["row_points"] = read.row_points
        if read.home_run_bonus is not None:
            values["home_run_bonus"] = read.home_run_bonus
        seeds.append(candidate(game, values))
    return seeds


def _segments(
    pool: Pool, table_id: str, hands: Ints, book: RuleBook | None, kept: list[Profile], depth: int
) -> list[Segment]:
    """The table's hands (in order) as segments, each with the candidate it fits; a
    segment is divided where two candidates fit its two parts better (`best_split`)."""
    seeds = [*kept, *_seeds(pool, hands, book)]
    found = search(seeds, lambda p: int(pool.exact(p)[hands].sum()))
    whole_fit = Segment(table_id, hands, found)
    if depth == 0 or len(hands) < 2:
        return [whole_fit]
    flags = {d: (p, pool.exact(p)[hands]) for d, (p, _) in found.fits.items()}
    missed = hands[~flags[found.best.digest][1]]
    if len(missed):  # what the rest of the hands fit, if another candidate
        again = [found.best, *_seeds(pool, missed, book)]
        other = search(again, lambda p: int(pool.exact(p)[missed].sum()))
        flags |= {d: (p, pool.exact(p)[hands]) for d, (p, _) in other.fits.items()}
    split = best_split(flags, found.exact)
    if split is None:
        return [whole_fit]
    before, after = hands[: split.at], hands[split.at :]
    return _segments(pool, table_id, before, book, [split.before], depth - 1) + _segments(
        pool, table_id, after, book, [split.after], depth - 1
    )


@dataclass(frozen=True)
class Pairs:
    """The pairs decided by their rows, in hand order: each one's hand (in the pool), the
    rows' bits its first player won and lost, and its recorded points."""

    hand: Ints
    won: Ints
    lost: Ints
    points: Ints
    first: Ints  # where each hand's pairs begin


def row_points(pool: Pool, hands: Ints, game: int, boards: int) -> RowPoints:
    """Row points and Home Run bonus read from the recorded points of `hands`' pairs
    decided by their rows."""
    pairs = decided_pairs(pool, game, boards)
    rows = _ranges(pairs.first, hands)
    return read_row_points(pairs.won[rows], pairs.lost[rows], boards, pairs.points[rows])


def decided_pairs(pool: Pool, game: int, boards: int) -> Pairs:
    """The pairs of every hand of `game` dealt `boards` boards, audited once under the
    contract's values (which rows each player won does not depend on the points)."""
    if (game, boards) in pool.pairs_memo:
        return pool.pairs_memo[game, boards]
    probe = candidate(game, {"boards": boards})
    hand, won, lost, points = [], [], [], []
    for batch, own, offset in pool.batches:
        mine = (batch.hands.game == game) & (own.boards == boards)
        if not mine.any():
            continue
        settled = audit_batch(force(batch, own, probe)).settlements
        local = ints(pc.index_in(settled["hand_id"], value_set=batch.hands.hand_id))
        by_rows = pc.equal(settled["decided"], "rows").to_numpy(zero_copy_only=False)
        recorded = batch.settlements
        key = recorded.hand * 64 + recorded.seat * 8 + recorded.opponent
        ours = local * 64 + ints(settled["seat"]) * 8 + ints(settled["opponent"])
        order = np.argsort(key)
        at = order[np.minimum(np.searchsorted(key, ours, sorter=order), max(len(key) - 1, 0))]
        found = key[at] == ours if len(key) else np.zeros(len(ours), bool)
        keep = by_rows & found & mine[local]
        hand.append(local[keep] + offset)
        won.append(ints(settled["rows_won"])[keep])
        lost.append(ints(settled["rows_lost"])[keep])
        points.append(recorded.points[at[keep]])
    empty = [np.zeros(0, np.int64)]
    h = np.concatenate(hand or empty)
    order = np.argsort(h, kind="stable")
    pairs = Pairs(
        h[order],
        np.concatenate(won or empty)[order],
        np.concatenate(lost or empty)[order],
        np.concatenate(points or empty)[order],
        np.searchsorted(h[order], np.arange(len(pool) + 1)),
    )
    pool.pairs_memo[game, boards] = pairs
    return pairs
