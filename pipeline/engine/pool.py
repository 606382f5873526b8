"""The hands of `rules infer`, read and checked once, and scored under any candidate.

Parsing and the checks that do not depend on the rules run once; each candidate the
search asks about is then scored and settled over the held batches by the same
vectorized stages as a verify, every hand forced onto the candidate. A hand is exact
under a candidate when it has no divergence under it. What a hand names in its own
`rules` field is not believed here (it is what is being checked), only kept to name the
profile written for its table.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.core.audit import divergent_hands, evaluated
from pipeline.core.batch import HandBatch
from pipeline.core.inference import hand_rules
from pipeline.core.rules import GAMES, Profile, RuleBook, standard_profiles
from pipeline.core.showdown import Showdown
from pipeline.helpers.columns import ints, is_null, whole
from pipeline.helpers.progress import Progress
from pipeline.ingest import decode, validate
from pipeline.ingest.sources import read_blocks

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
    shown: list[Showdown] = field(default_factory=list)  # each batch evaluated, once
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
        self.shown.append(evaluated(batch))
        hands = batch.hands
        self.table_id += hands.table_id.to_pylist()
        self.hand_no += hands.hand_no.tolist()
        self.started_at += hands.started_at.tolist()
        self.game += hands.game.tolist()
        self.boards += own.boards.tolist()
        self.named += own.named

    def exact(self, profile: Profile) -> Flags:
        """Per hand of the pool: exact under `profile` (False for hands of other games)."""
        key = hand_rules(profile).digest  # the table rules' keys change no hand's audit
        if key not in self.memo:
            out = np.zeros(len(self), dtype=bool)
            for (batch, own, offset), shown in zip(self.batches, self.shown, strict=True):
                out[offset : offset + len(batch)] = _exact(batch, own, shown, profile)
            self.memo[key] = out
        return self.memo[key]


def ranges(first: Ints, hands: Ints) -> Ints:
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


def _exact(batch: HandBatch, own: Own, shown: Showdown, profile: Profile) -> Flags:
    """Per hand of `batch`: of the profile's game, and without divergence under it."""
    ok = batch.hands.game == profile.game
    if profile.variant.name in TAIWANESE:
        ok &= own.boards == profile.value("boards")
    if not ok.any():
        return ok
    return ok & ~divergent_hands(force(batch, own, profile), shown)


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
