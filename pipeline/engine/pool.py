"""The hands of `rules infer`, read and checked once, and scored under any candidate.

Parsing and the checks that do not depend on the rules run once; each candidate the
search asks about is then scored and settled over the held batches by the same
vectorized stages as a verify, every hand forced onto the candidate. A hand is exact
under a candidate when it has no divergence under it. What a hand names in its own
`rules` field is not believed here (it is what is being checked), only kept to name the
profile written for its table.
"""

from __future__ import annotations

import json
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import overload

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.core.audit import Unruled, divergent_hands, evaluated, never_exact, unruled
from pipeline.core.batch import HandBatch, each, joined, spans, stacked, taken, without_streets
from pipeline.core.inference import hand_rules
from pipeline.core.money import cents_of
from pipeline.core.rules import GAMES, Profile, RuleBook, standard_profiles
from pipeline.core.showdown import Showdown
from pipeline.helpers.columns import ints, is_null, whole
from pipeline.helpers.kept import Kept
from pipeline.helpers.progress import Progress
from pipeline.ingest import FilePart, decode, validate
from pipeline.ingest.decode import Decoded
from pipeline.ingest.quarantine import QuarantineCheck, Quarantined
from pipeline.ingest.sources import read_blocks

Flags = npt.NDArray[np.bool_]
Ints = npt.NDArray[np.int64]
COUNT = np.int16  # a hand's divergences as the memo holds them (`_counted`)
Counts = npt.NDArray[np.int16]

# The games dealt on boards (Taiwanese Poker and Taiwanese Jokers), by name.
BOARDED = frozenset(game.name for game in GAMES if game.boards)
# Some hands of a batch are taken to be scored alone when they are at most this share
# of it (a batch's fixed cost is a few milliseconds; a hand's a few microseconds); a few
# sets of hands are kept so taken, since the search asks about the same hands again.
PART_OF_BATCH = 0.5
TOGETHER = 16384  # the most hands candidates are scored on in one pass (`score_each`)
PARTS_KEPT = 32
# The hands are held table by table, a game's in batches of at least this many (but
# the last), a table in one batch (`by_table`).
HELD_BATCH = 8192
REPEATS = (QuarantineCheck.duplicate_hand, QuarantineCheck.conflicting_hand)
# While reading, a Taiwanese hand dealt one board is checked under a one-board profile
# of its game (else its board count would quarantine it); the search decides the rest.
ONE_BOARD = {f"one_board_{game.name}": code for code, game in enumerate(GAMES) if game.boards}
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
    named: npt.NDArray[np.object_]  # its `rules` field (text or None)


@dataclass
class Pool:
    """The verified hands of the inputs, held for scoring under each candidate."""

    batches: list[tuple[HandBatch, Own, int]] = field(default_factory=list)  # with offsets
    shown: list[Showdown] = field(default_factory=list)  # each batch evaluated, once
    unruled: list[Unruled] = field(default_factory=list)  # and what no profile changes
    never: list[Flags] = field(default_factory=list)  # and the hands none makes exact
    hand_id: list[str] = field(default_factory=list)
    table_id: list[str] = field(default_factory=list)
    hand_no: list[int] = field(default_factory=list)
    started_at: list[int] = field(default_factory=list)
    game: list[int] = field(default_factory=list)
    boards: list[int] = field(default_factory=list)
    named: list[str | None] = field(default_factory=list)
    quarantined: Counter[str] = field(default_factory=Counter)
    # The players of quarantined records, by table: (hand_no, player_id, stack_end in
    # cents, None when unreadable). The table rules read a player's previous stack there.
    set_aside: dict[str, list[tuple[int, str, int | None]]] = field(default_factory=dict)
    # Divergences per hand of the pool, by candidate (-1: not scored yet; `_memo`).
    memo: dict[str, Memo] = field(default_factory=dict)
    scored: dict[str, Profile] = field(default_factory=dict)  # each candidate as scored
    # Hands taken from their batches to be scored as one batch, by hands (kept a while).
    parts: OrderedDict[bytes, Scorable] = field(default_factory=OrderedDict)
    # Each hand's place in the order read (the hands are held table by table: `by_table`).
    read_at: Ints = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    _games: Ints | None = None  # `games`, made once
    _never: Flags | None = None  # `never_exact`, made once
    # While many searches take turns (`infer.py: Turns`): given what a search asks to be
    # scored, holds it to be scored with the others' and returns once it is (True), or
    # returns False (score it now).
    defer: Callable[[Sequence[tuple[Profile, Ints]]], bool] | None = None

    def __len__(self) -> int:
        return len(self.hand_no)

    def add(self, batch: HandBatch, own: Own, shown: Showdown, found: Unruled) -> None:
        """A batch, what its hands say themselves, its evaluation and what its audit
        finds under any profile (`unruled`)."""
        self.batches.append((batch, own, len(self)))
        self.shown.append(shown)
        self.unruled.append(found)
        self.never.append(never_exact(batch, found))
        hands = batch.hands
        self.hand_id += hands.hand_id.to_pylist()
        self.table_id += hands.table_id.to_pylist()
        self.hand_no += hands.hand_no.tolist()
        self.started_at += hands.started_at.tolist()
        self.game += hands.game.tolist()
        self.boards += own.boards.tolist()
        self.named += own.named.tolist()

    def games(self) -> Ints:
        """Per hand of the pool: its game's code."""
        if self._games is None or len(self._games) != len(self):
            self._games = np.array(self.game, dtype=np.int64)
        return self._games

    def exact(self, profile: Profile, hands: Ints) -> Flags:
        """Per hand of `hands` (of the pool): exact under `profile`."""
        return self.divergences(profile, hands) == 0

    def never_exact(self) -> Flags:
        """Per hand of the pool: whether no profile makes it exact (`never_exact`): a
        table's hands that some profile may make exact bound what any search can gain."""
        if self._never is None or len(self._never) != len(self):
            self._never = np.concatenate(self.never) if self.never else np.zeros(0, dtype=bool)
        return self._never

    def sat_out(self) -> Flags:
        """Per hand of the pool: whether some player sat out of it."""
        flags = np.zeros(len(self), dtype=bool)
        for batch, _, offset in self.batches:
            flags[batch.sitting_out.hand + offset] = True
        return flags

    def divergences(self, profile: Profile, hands: Ints, floor: bool = False) -> Ints:
        """Per hand of `hands` (of the pool): the divergences under `profile` (at least
        one for a hand of another game). A candidate scores each hand once, and only the
        hands asked about: a table's own reading costs its own hands, not the pool's.
        The search's candidates are scored under the highest floor (`hand_rules`); with
        `floor`, under the profile's own."""
        scored = profile if floor else self._scored(profile)  # the keys read after set apart
        found = self._memo(scored.digest)
        mine = found[hands]
        if (
            (mine < 0).any()
            and not floor
            and self.defer is not None
            and self.defer([(profile, hands)])
        ):
            mine = found[hands]  # (scored with other searches' asks)
        if not (mine < 0).any():
            return mine.astype(np.int64)
        missing = np.unique(hands[mine < 0])
        starts = np.array([offset for _, _, offset in self.batches], dtype=np.int64)
        batch_of = np.searchsorted(starts, missing, side="right") - 1
        counts = np.bincount(batch_of, minlength=len(self.batches))
        sizes = np.array([len(batch) for batch, _, _ in self.batches])
        whole_batches = np.flatnonzero(counts > PART_OF_BATCH * sizes)
        for b in whole_batches.tolist():  # most of a batch: all of it, at little more cost
            (batch, own, offset), shown, fixed = self.batches[b], self.shown[b], self.unruled[b]
            found[np.arange(offset, offset + len(batch))] = _counted(
                _divergences(batch, own, shown, fixed, scored)
            )
        rest = missing[~np.isin(batch_of, whole_batches)]
        of = self.games()[rest]
        for game in np.unique(of).tolist():  # the others taken from their batches, as one
            mine = rest[of == game]  # (a game's: a batch holds one game's hands)
            found[mine] = _counted(_divergences(*self._part(mine), scored))
        return found[hands].astype(np.int64)

    def score_together(self, profiles: Sequence[Profile], hands: Ints) -> None:
        """Score on `hands` the `profiles` not yet scored on some of them, in one pass
        (`score_each`)."""
        self.score_each([(profile, hands) for profile in profiles])

    def score_each(self, asks: Sequence[tuple[Profile, Ints]]) -> None:
        """Score each candidate of `asks` on its hands where it is not yet scored, in
        passes of at most TOGETHER hands of one game (their parts held one after another,
        one rule book for all): a small part costs a pass more than its hands do. As
        `divergences`, under the highest floor."""
        if self.defer is not None and self.defer(asks):
            return
        by_game: dict[int, list[tuple[Profile, Ints]]] = {}
        games = self.games()
        for profile, hands in asks:  # (a pass holds hands of one game)
            of = games[hands]
            for game in np.unique(of).tolist():
                by_game.setdefault(game, []).append((profile, hands[of == game]))
        for mine in by_game.values():
            sizes = np.cumsum([len(hands) for _, hands in mine])
            first = 0
            while first < len(mine):  # the asks that fit in a pass, one at least
                before = int(sizes[first - 1]) if first else 0
                end = max(first + 1, int(np.searchsorted(sizes, before + TOGETHER, side="right")))
                self._score_together(mine[first:end])
                first = end

    def _score_together(self, asks: Sequence[tuple[Profile, Ints]]) -> None:
        """Score each candidate of `asks` on its hands where it is not yet scored, in
        one pass."""
        todo: dict[str, tuple[Profile, Ints]] = {}
        for profile, hands in asks:
            scored = self._scored(profile)
            missing = self.unscored(profile, hands)
            if scored.digest in todo:
                missing = np.concatenate([todo[scored.digest][1], missing])
            todo[scored.digest] = (scored, missing)
        todo = {d: (p, np.unique(h)) for d, (p, h) in todo.items() if len(h)}
        if len(todo) == 1:  # one candidate: as `divergences` scores it (whole batches)
            self.divergences(*next(iter(todo.values())))
        if len(todo) < 2:
            return
        each_hands = [h for _, h in todo.values()]
        part = self._held(np.concatenate(each_hands))  # (a hand asked twice, held twice)
        together = _stacked(part, [p for p, _ in todo.values()], [len(h) for h in each_hands])
        for (digest, (_, hands)), divergences in zip(todo.items(), together, strict=True):
            self._memo(digest)[hands] = _counted(divergences)

    def unscored(self, profile: Profile, hands: Ints) -> Ints:
        """Those of `hands` that `profile` is not scored on yet."""
        found = self.memo.get(self._scored(profile).digest)
        return hands if found is None else hands[found[hands] < 0]

    def _scored(self, profile: Profile) -> Profile:
        """`profile` as the search's candidates are scored (`hand_rules`), made once."""
        if profile.digest not in self.scored:
            self.scored[profile.digest] = hand_rules(profile)
        return self.scored[profile.digest]

    def _memo(self, digest: str) -> Memo:
        """The divergences per hand of the pool under a candidate, as scored so far (a
        small type: the search asks about thousands of candidates)."""
        if digest not in self.memo:
            self.memo[digest] = Memo(len(self))
        return self.memo[digest]

    def _part(self, hands: Ints) -> Scorable:
        """The pool's hands `hands` (ascending) held as one batch to score (`_held`);
        kept, since the search asks about the same hands under many candidates."""
        key = hands.tobytes()
        if key in self.parts:
            self.parts.move_to_end(key)
        else:
            self.parts[key] = self._held(hands)
            if len(self.parts) > PARTS_KEPT:
                self.parts.popitem(last=False)
        return self.parts[key]

    def _held(self, hands: Ints) -> Scorable:
        """The pool's hands `hands` (in any order, a hand as often as it is named) as one
        batch to score, with what each says, its evaluation and what no profile changes,
        taken from each batch."""
        distinct = np.unique(hands)
        joined = self._joined(distinct)
        if len(distinct) == len(hands) and (distinct == hands).all():
            return joined
        return _taken(joined, np.searchsorted(distinct, hands))

    def _joined(self, hands: Ints) -> Scorable:
        """The pool's hands `hands` (ascending) taken from each batch, joined as one."""
        starts = np.array([offset for _, _, offset in self.batches], dtype=np.int64)
        batch_of = np.searchsorted(starts, hands, side="right") - 1
        pieces = []
        for b in np.unique(batch_of).tolist():
            (batch, own, offset), shown, fixed = self.batches[b], self.shown[b], self.unruled[b]
            pieces.append(_taken((batch, own, shown, fixed), hands[batch_of == b] - offset))
        batches, owns, values, fixed = zip(*pieces, strict=True)
        return (
            joined(list(batches)),
            stacked(list(owns)),
            Showdown(
                np.concatenate([v.value for v in values]),
                np.concatenate([v.joker_as for v in values]),
            ),
            stacked(list(fixed)),
        )


# The rule books of the candidates scored last (a book's tables are made on first use,
# and the search scores a candidate on many parts of the hands).
BOOKS_KEPT = 64
_books: Kept[RuleBook] = Kept(BOOKS_KEPT)


def _book(profile: Profile) -> RuleBook:
    """The rule book that holds `profile`, after the standard profiles (kept a while)."""
    return _books.get(
        profile.digest,
        lambda: RuleBook((*standard_profiles(), profile.named("candidate"))),
    )


# A batch ready to score: its hands, what each says, its evaluation, what no profile changes.
Scorable = tuple[HandBatch, "Own", Showdown, Unruled]


def _taken(scorable: Scorable, hands: Ints) -> Scorable:
    """The hands `hands` (indices) of a batch ready to score, as one."""
    batch, own, shown, fixed = scorable
    part, players = taken(batch, hands)
    value = Showdown(shown.value[players], shown.joker_as[players])
    return (
        part,
        each(own, hands, len(batch)),
        value,
        Unruled(fixed.rows[hands], *(column[players] for column in fixed.per_player())),
    )


def ranges(first: Ints, hands: Ints) -> Ints:
    """The rows of `hands`, whose rows begin at first[hand] and end at first[hand + 1]."""
    return spans(first[hands], first[hands + 1] - first[hands])


@dataclass(frozen=True)
class _Read:
    """One block read, checked and evaluated, ready for the pool."""

    batches: list[Scorable]
    rejects: list[str]  # the checks of its quarantined records (but repeats)
    repeats: list[tuple[str, str | None]]  # its repeated hands' ids and digests
    aside: list[Appearance]  # their players
    records: int
    ids: set[str]  # the hand ids it verified


def _read(block: FilePart, seen: set[str]) -> _Read:
    """A block decoded, checked under the reading profiles (its hands' own `rules` set
    aside) and evaluated; `seen`: hand ids verified before it (gains its own)."""
    decoded = decode(block, threads=False)
    records = decoded.table.num_rows + len(decoded.quarantined)
    before = set(seen)
    held, rejects, aside = [], [], []
    repeats: list[tuple[str, str | None]] = []
    for part in _by_game(decoded):  # a candidate is of one game: score only its hands
        table = part.table
        part = replace(part, table=_reading_rules(table))
        batches, quarantined = validate(part, seen, READING)
        rejects += [r.check.value for r in quarantined if r.check not in REPEATS]
        repeats += [(str(r.hand_id), r.digest) for r in quarantined if r.check in REPEATS]
        aside += appearances(quarantined)
        for batch in batches:  # held without its streets, which `unruled` reads once
            shown = evaluated(batch)
            fixed = unruled(batch, shown)
            held.append((without_streets(batch), _own(batch, table), shown, fixed))
    return _Read(held, rejects, repeats, aside, records, seen - before)


@dataclass(frozen=True)
class Appearance:
    """A player of a quarantined record, as the table rules read it."""

    hand_id: str
    table_id: str
    hand_no: int
    player_id: str
    stack_end: int | None  # cents


def appearances(rejects: Sequence[Quarantined]) -> list[Appearance]:
    """The players of quarantined records, where their JSON gives a table and hand
    number (`table_rules.QUARANTINE_APPEARANCES`, which verify reads): a loop over the
    quarantined records only. A hand read again is not one of them."""
    out = []
    for reject in rejects:
        if reject.hand_id is None or reject.raw is None or reject.check in REPEATS:
            continue
        try:
            record = json.loads(reject.raw)
            table_id, hand_no = record["table_id"], int(record["hand_no"])
            players = [(p["player_id"], p.get("stack_end")) for p in record["players"]]
        except (ValueError, TypeError, KeyError, AttributeError):
            continue
        for player_id, end in players:
            if isinstance(table_id, str) and isinstance(player_id, str):
                out.append(Appearance(reject.hand_id, table_id, hand_no, player_id, _cents(end)))
    return out


def _cents(text: object) -> int | None:
    try:
        return cents_of(str(text)) if text is not None else None
    except (ValueError, ArithmeticError):
        return None


def _by_game(decoded: Decoded) -> list[Decoded]:
    """The decoded records of each game apart (the rejects with the first); a block of
    one game, the usual case, as it is."""
    table = decoded.table
    if not table.num_rows:
        return [decoded]
    variant = whole(table["variant"])
    games = pc.unique(variant).to_pylist()
    if len(games) == 1:
        return [decoded]
    parts = []
    for i, game in enumerate(games):
        rows = np.flatnonzero(pc.equal(variant, game).to_numpy(zero_copy_only=False))
        parts.append(
            Decoded(
                table.take(pa.array(rows)),
                [decoded.sources[r] for r in rows],
                _Some(decoded.raws, rows),
                [decoded.digests[r] for r in rows],
                decoded.quarantined if i == 0 else [],
            )
        )
    return parts


class _Some(Sequence[bytes | str]):
    """Some of a block's raw records, taken only when one is asked for (a reject's)."""

    def __init__(self, raws: Sequence[bytes | str], rows: Ints) -> None:
        self._raws, self._rows = raws, rows

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, i: int) -> bytes | str: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[bytes | str]: ...
    def __getitem__(self, i: int | slice) -> bytes | str | Sequence[bytes | str]:
        if isinstance(i, slice):
            return [self._raws[int(r)] for r in self._rows[i]]
        return self._raws[int(self._rows[i])]


def read_pool(paths: Sequence[Path], progress: Progress | None = None, workers: int = 2) -> Pool:
    """Every record of `paths` read, checked and evaluated once, `workers` blocks at a
    time, in input order; the quarantined counted by check. A block is read as if no
    hand came before it; one whose hand ids meet those of an earlier block (a hand
    repeated across blocks) is read again, in order, so its repeats are quarantined."""
    pool = Pool()
    verified: set[str] = set()
    aside: list[Appearance] = []
    repeats: list[tuple[str, str | None]] = []
    read = 0
    pending: deque[tuple[Path, FilePart, Future[_Read]]] = deque()

    def settle(path: Path, block: FilePart, future: Future[_Read]) -> None:
        nonlocal read
        done = future.result()
        if not verified.isdisjoint(done.ids):
            done = _read(block, verified)
        verified.update(done.ids)
        for batch, own, shown, found in done.batches:
            pool.add(batch, own, shown, found)
        pool.quarantined.update(done.rejects)
        repeats.extend(done.repeats)
        aside.extend(done.aside)
        read += done.records
        if progress is not None:
            progress.update(read=read, verified=len(pool), file=str(path))

    with ThreadPoolExecutor(workers, thread_name_prefix="infer-read") as threads:
        try:
            for path in paths:
                for block in read_blocks(path):
                    pending.append((path, block, threads.submit(_read, block, set())))
                    if len(pending) > workers:
                        settle(*pending.popleft())
            while pending:
                settle(*pending.popleft())
        finally:
            for _, _, future in pending:
                future.cancel()
    pool.quarantined.update(_repeats(pool, repeats))
    pool = by_table(pool)
    for a in aside:  # a hand verified in another record is not one set aside
        if a.hand_id not in verified:
            pool.set_aside.setdefault(a.table_id, []).append((a.hand_no, a.player_id, a.stack_end))
    return pool


def by_table(pool: Pool) -> Pool:
    """`pool`'s hands held table by table, in hand order (of equals, in the order read),
    a game's in batches of HELD_BATCH hands or more, each table in one: the search asks
    about one table's hands at a time, which are then taken from one batch rather than
    from every batch of the input they are spread over. `read_at` keeps the order read."""
    tables = np.unique(np.array(pool.table_id, dtype=object), return_inverse=True)[1]
    games = np.array(pool.game, dtype=np.int64)
    order = np.lexsort((np.arange(len(pool)), np.array(pool.hand_no), tables, games))
    held = Pool(quarantined=pool.quarantined, set_aside=pool.set_aside)
    for game in np.unique(games).tolist():
        mine = order[games[order] == game]
        ascending = np.sort(mine)
        whole = pool._joined(ascending)
        at = np.searchsorted(ascending, mine)  # each hand's place in the whole
        new_table = np.r_[True, tables[mine][1:] != tables[mine][:-1]]
        starts = np.flatnonzero(new_table)
        first = 0
        for start in [*starts[1:].tolist(), len(mine)]:
            if start - first >= HELD_BATCH or start == len(mine):
                held.add(*_taken(whole, at[first:start]))
                first = start
    held.read_at = order
    return held


def _repeats(pool: Pool, repeats: list[tuple[str, str | None]]) -> Counter[str]:
    """The repeated hands by check, as a verify tells them (`storage/repeats.py`): one
    with the digest of the record read first is `duplicate_hand`, one with other
    content `conflicting_hand`."""
    if not repeats:
        return Counter()
    digests = dict(
        zip(
            pool.hand_id,
            (d for b, _, _ in pool.batches for d in b.hands.digest.to_pylist()),
            strict=True,
        )
    )
    return Counter(
        (
            REPEATS[0] if digest is None or digests.get(hand_id) in (None, digest) else REPEATS[1]
        ).value
        for hand_id, digest in repeats
    )


def _reading_rules(table: pa.Table) -> pa.Table:
    """The `rules` column replaced: a one-board Taiwanese hand names its game's one-board
    profile, every other hand none."""
    variant = whole(table["variant"])
    boards = pc.fill_null(pc.list_value_length(table["boards"]), 0)
    names = [
        f"one_board_{v}" if v in BOARDED and b == 1 else None
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
        named=np.array(column("rules").to_pylist(), dtype=object),
    )


def _divergences(
    batch: HandBatch, own: Own, shown: Showdown, fixed: Unruled, profile: Profile
) -> Ints:
    """Per hand of `batch`: its divergences under `profile` (1 for a hand of another
    game, or dealt other than the profile's boards: it cannot be exact under it)."""
    of = _playable(batch.hands.game, own.boards, profile)
    if not of.any():
        return np.ones(len(batch), dtype=np.int64)
    found = divergent_hands(force(batch, own, profile), shown, fixed)
    return np.where(of, found, 1)


def _counted(found: Ints) -> Counts:
    """Divergences per hand as the memo holds them (a hand has far fewer than the most
    the type holds; more would still count as many)."""
    return np.minimum(found, np.iinfo(COUNT).max).astype(COUNT)


class Memo:
    """A candidate's divergences per hand of the pool, as scored so far (-1: not yet),
    held over the span of the hands it was scored on: most candidates are one table's
    (read from its records, or a step of its search), and the pool holds a table's
    hands together; thousands of them would not each hold every hand."""

    def __init__(self, size: int) -> None:
        self.size = size  # the pool's hands
        self.first = 0  # the first hand held
        self.counts: Counts = np.zeros(0, dtype=COUNT)

    def __getitem__(self, hands: Ints) -> Counts:
        at = hands - self.first
        inside = (at >= 0) & (at < len(self.counts))
        if inside.all():
            return self.counts[at]
        out = np.full(len(hands), -1, dtype=COUNT)
        out[inside] = self.counts[at[inside]]
        return out

    def __setitem__(self, hands: Ints, counts: Counts) -> None:
        if not len(hands):
            return
        self._hold(int(hands.min()), int(hands.max()) + 1)
        self.counts[hands - self.first] = counts

    def _hold(self, start: int, end: int) -> None:
        """Hold hands `start` to `end` at least; grown twice as wide at least, so that
        a candidate scored table after table is not copied at every table."""
        first, last = self.first, self.first + len(self.counts)
        if len(self.counts) and first <= start and end <= last:
            return
        rightwards = not len(self.counts) or end > last  # (the way it grows)
        if len(self.counts):
            start, end = min(start, first), max(end, last)
        grow = max(end - start, 2 * len(self.counts))
        if rightwards:
            end = min(self.size, start + grow)
            start = max(0, end - grow)
        else:
            start = max(0, end - grow)
            end = min(self.size, start + grow)
        counts = np.full(end - start, -1, dtype=COUNT)
        if len(self.counts):
            counts[first - start : last - start] = self.counts
        self.first, self.counts = start, counts


def _stacked(scorable: Scorable, profiles: list[Profile], sizes: list[int]) -> list[Ints]:
    """Per profile: the divergences of its hands (the next `sizes` of the batch, in turn)
    under it, as `_divergences` finds them, in one pass with one rule book for all."""
    batch, own, shown, fixed = scorable
    named = (p.named(f"candidate {i}") for i, p in enumerate(profiles))
    book = RuleBook((*standard_profiles(), *named))
    codes = np.repeat(len(GAMES) + np.arange(len(profiles), dtype=np.int64), sizes)
    found = divergent_hands(_forced(batch, own, book, codes), shown, fixed)
    at = np.cumsum([0, *sizes])
    return [
        np.where(_playable(batch.hands.game[a:b], own.boards[a:b], profile), found[a:b], 1)
        for profile, a, b in zip(profiles, at[:-1], at[1:], strict=True)
    ]


def _playable(game: Ints, boards: Ints, profile: Profile) -> Flags:
    """Per hand (its game, its boards dealt): of `profile`'s game, dealt its boards."""
    of = game == profile.game
    if profile.variant.boards:
        of &= boards == profile.value("boards")
    return of


def force(batch: HandBatch, own: Own, profile: Profile) -> HandBatch:
    """`batch` with every hand under `profile` (its own scoring and surrender points
    still win over the profile's, as in a verify)."""
    return _forced(batch, own, _book(profile), np.full(len(batch), len(GAMES), dtype=np.int64))


def _forced(batch: HandBatch, own: Own, book: RuleBook, codes: Ints) -> HandBatch:
    """`batch` with each hand under the profile of `book` its code gives (its own
    scoring and surrender points still win over the profile's, as in a verify)."""
    rules = book.chinese
    forced = replace(
        batch.hands,
        profile=codes,
        two_four=np.where(own.has_scoring, own.two_four, rules.two_four[codes]),
        surrender_points=np.where(
            own.has_surrender, own.surrender_points, rules.surrender_points[codes]
        ),
    )
    return replace(batch, hands=forced, rules=book)
