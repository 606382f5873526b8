"""`rules infer`: which rules each table was dealt by, and where a table changed them.

The hands are read, checked and held once (parse and the checks that do not depend on
the rules); each candidate the search asks about is then scored and settled over them
in the same vectorized stages as a verify (`audit_batch`), with every hand forced onto
the candidate. A hand is exact under a candidate when the audit finds no divergence in
it. What a hand names in its own `rules` field is not believed here (it is what is
being checked), only kept to name the profile written for it.
"""

from __future__ import annotations

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
    Split,
    best_split,
    candidate,
    read_row_points,
    search,
)
from pipeline.core.rules import GAMES, STANDARD, Profile, RuleBook, standard_profiles
from pipeline.helpers.columns import ints, is_null, whole
from pipeline.helpers.progress import Progress
from pipeline.ingest import decode, read_blocks, validate

Flags = npt.NDArray[np.bool_]
Ints = npt.NDArray[np.int64]

TAIWANESE = {"taiwanese", "taiwanese_jokers"}
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
    quarantined: Counter[str] = field(default_factory=Counter)
    memo: dict[str, Flags] = field(default_factory=dict)

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

    def exact(self, profile: Profile) -> Flags:
        """Per hand of the pool: exact under `profile` (False for hands of other games)."""
        if profile.digest not in self.memo:
            out = np.zeros(len(self), dtype=bool)
            for batch, own, offset in self.batches:
                out[offset : offset + len(batch)] = _exact(batch, own, profile)
            self.memo[profile.digest] = out
        return self.memo[profile.digest]


def read_pool(paths: Sequence[Path], progress: Progress | None = None) -> Pool:
    """Every record of `paths` read and checked once; the quarantined counted by check."""
    pool = Pool()
    seen: set[str] = set()
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
            if progress is not None:
                progress.advance(sum(len(b) for b in batches) + len(rejects))
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
    book = RuleBook(standard_profiles() + (replace(profile, name="candidate"),))
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
    for table_id, hands in _tables(pool):
        parts = _segments(pool, table_id, hands, _seeds(pool, hands, book), depth=3)
        segments += parts
        changes += [Change(table_id, a, b) for a, b in zip(parts, parts[1:], strict=False)]
        if progress is not None:
            progress.advance(len(hands))
    return segments, changes


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
    pool: Pool, table_id: str, hands: Ints, seeds: list[Profile], depth: int
) -> list[Segment]:
    found = search(seeds, lambda p: int(pool.exact(p)[hands].sum()))
    whole_fit = Segment(table_id, hands, found)
    if depth == 0 or len(hands) < 2:
        return [whole_fit]
    flags = {d: (p, pool.exact(p)[hands]) for d, (p, _) in found.fits.items()}
    missed = hands[~flags[found.best.digest][1]]
    if len(missed):  # what the rest of the hands fit, if another candidate
        other = search([found.best, *seeds], lambda p: int(pool.exact(p)[missed].sum()))
        flags |= {d: (p, pool.exact(p)[hands]) for d, (p, _) in other.fits.items()}
    split = best_split(flags, found.exact)
    if split is None:
        return [whole_fit]
    return _segments(
        pool, table_id, hands[: split.at], [split.before, *seeds], depth - 1
    ) + _segments(pool, table_id, hands[split.at :], [split.after, *seeds], depth - 1)


def row_points(pool: Pool, hands: Ints, game: int, boards: int) -> RowPoints:
    """Row points and Home Run bonus read from the recorded points of `hands`' pairs
    decided by their rows (audited once under the contract's values)."""
    wanted = np.zeros(len(pool), dtype=bool)
    wanted[hands] = True
    won, lost, points = [], [], []
    probe = candidate(game, {"boards": boards})
    for batch, own, offset in pool.batches:
        mine = wanted[offset : offset + len(batch)] & (batch.hands.game == game)
        if not mine.any():
            continue
        audit = audit_batch(force(batch, own, probe))
        settled = audit.settlements
        local = ints(pc.index_in(settled["hand_id"], value_set=batch.hands.hand_id))
        by_rows = pc.equal(settled["decided"], "rows").to_numpy(zero_copy_only=False)
        recorded = batch.settlements
        key = recorded.hand * 64 + recorded.seat * 8 + recorded.opponent
        ours = local * 64 + ints(settled["seat"]) * 8 + ints(settled["opponent"])
        at = np.searchsorted(key, ours, sorter=np.argsort(key))
        order = np.argsort(key)
        at = order[np.minimum(at, len(key) - 1)] if len(key) else at
        found = (key[at] == ours) if len(key) else np.zeros(len(ours), bool)
        keep = by_rows & found & mine[local]
        won.append(ints(settled["rows_won"])[keep])
        lost.append(ints(settled["rows_lost"])[keep])
        points.append(recorded.points[at[keep]])
    if not points:
        return RowPoints(None, None)
    return read_row_points(
        np.concatenate(won), np.concatenate(lost), boards, np.concatenate(points)
    )
