"""`rules infer`: which rules each table was dealt by, and where a table changed them.

Per table (and game): the search of `core/inference.py` from seeds that are the
contract, the rules file's profiles and the tables read from the table's own records
(`recorded.py`), scored on the hands held by `pool.py`; then the split of a table whose
rules changed, its floor, and one profile shared by the tables it fits as well.
"""

from __future__ import annotations

import bisect
import itertools
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

import numpy as np
import numpy.typing as npt

from pipeline.core.games.chinese import NATURALS
from pipeline.core.inference import (
    CATALOGUE,
    FLOORS,
    MIN_GAIN,
    TABLE_KEYS,
    TABLES,
    Fit,
    Search,
    best_split,
    candidate,
    changes,
    hand_rules,
    least_gain,
    may_divide,
    may_split,
    merged,
    paths,
    search,
    towards,
    values_given,
    with_value,
)
from pipeline.core.readings import ROWS, entry_table, fantasyland
from pipeline.core.rules import GAMES, RANKS, Profile, RuleBook
from pipeline.engine.pool import Pool
from pipeline.engine.recorded import Recorded
from pipeline.engine.turns import Turns
from pipeline.helpers.progress import Progress

Flags = npt.NDArray[np.bool_]
Ints = npt.NDArray[np.int64]

# The rules most hands of a game fit are searched for on this many of its hands first
# (whole batches, in input order), then scored with their neighbours on all of them.
SAMPLE = 4000
SPLIT_LOOK = 0.25  # a share of a table's hands missed beyond which its halves are read apart
SEARCHES = 32  # tables searched in turns, their candidates scored together (`Turns`)
LOOK = 300  # the hands a merge of profiles is first scored on (`fits_each`)
LOOK_GROWTH = 4  # and how many times as many at each part after


def nearest(floors: tuple[int, ...], profile: Profile) -> int:
    """Of floors as good as each other, the one written: the nearest the contract's."""
    contract = profile.variant.floor_points
    return min(floors, key=lambda f: (abs(f - contract), f))


def _kept_broken(ended: Ints, worths: Ints, floors: tuple[int, ...]) -> tuple[Flags, Flags]:
    """Per floor and player dealt in again (`Recorded.floor_returns`): whether they kept
    it (ended below it, added on to reach it), and whether they were dealt in below it."""
    at = np.array(floors)[:, None]
    return (ended < at) & (worths >= at), worths < at


def _floor_votes(ended: Ints, worths: Ints, floors: tuple[int, ...] = FLOORS) -> Ints:
    """Per floor and player dealt in again: 1 where they kept it, -1 where they were
    dealt in below it (`_kept_broken`)."""
    kept, broken = _kept_broken(ended, worths, floors)
    return kept.astype(np.int64) - broken


def floor_votes(ended: Ints, worths: Ints) -> tuple[dict[int, int], dict[int, int]]:
    """Per floor of the catalogue, of the players dealt in again: those who kept it and
    those dealt in below it (`_kept_broken`)."""
    kept, broken = (dict(zip(FLOORS, c.sum(axis=1).tolist(), strict=True))
                    for c in _kept_broken(ended, worths, FLOORS))  # fmt: skip
    return kept, broken


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
    """A table's rules changed between two segments: `last` is the last hand that the
    old rules settle with fewer divergences than the new, `first` the first the new
    settle with fewer (pool indices); `between`, the hands between them, tell the two
    apart nowhere (exact under both, or as wrong under either)."""

    table_id: str
    before: Segment
    after: Segment
    last: int
    first: int
    between: Ints

    @classmethod
    def of(cls, pool: Pool, before: Segment, after: Segment) -> Change:
        hands = np.concatenate([before.hands, after.hands])
        old = pool.divergences(before.profile, hands)
        new = pool.divergences(after.profile, hands)
        at = len(before.hands)
        olds = np.flatnonzero(old[:at] < new[:at])
        news = np.flatnonzero(new[at:] < old[at:])
        last = int(olds[-1]) if len(olds) else at - 1
        first = at + int(news[0]) if len(news) else at
        return cls(
            before.table_id, before, after, int(hands[last]), int(hands[first]),
            hands[last + 1 : first],
        )  # fmt: skip


@dataclass(frozen=True)
class Tables:
    """What `rules infer` found: each table's segments, in table and hand order (one
    unless its rules changed), and the changes between them."""

    segments: list[Segment]
    changes: list[Change]
    exact: Callable[[Profile, Ints], Flags]  # per hand, exact under a profile, as scored


def infer_tables(
    pool: Pool, book: RuleBook | None = None, progress: Progress | None = None
) -> Tables:
    """Each table's segments and the changes between them."""
    if progress is not None:
        progress.step("the rules of each table")
    search_of = _Searcher(pool, Recorded(pool), book)
    tables = list(table_hands(pool))
    for _, hands in tables:  # what the tables of a game share, found first, once
        search_of.shared_seeds(hands)
    searches = [partial(search_of.segments, table_id, hands, [], 3) for table_id, hands in tables]
    segments = [s for found in Turns(pool, SEARCHES).run(searches) for s in found]
    segments = search_of.shared(search_of.untold(segments))
    segments = search_of.joined(search_of.floors(segments))
    segments = search_of.untold(search_of.placed(segments))
    alike = search_of.alike(segments)
    if len(alike) < len(segments):  # a "change" nothing told is no change
        segments = search_of.untold(alike)
    changes = [
        search_of.change(a, b)
        for a, b in itertools.pairwise(segments)
        if (a.table_id, a.profile.game) == (b.table_id, b.profile.game)
    ]
    return Tables(segments, changes, search_of.exact)


def flat_values(profile: Profile, keys: set[str]) -> dict[str, Any]:
    """A profile's values of `keys`, its own or the contract's (a table's entries as
    `table.entry`), for telling what changed."""
    out: dict[str, Any] = {}
    for key in sorted(keys):
        value = TABLES[key](profile) if key in TABLES else profile.value(key)
        if isinstance(value, dict):
            for path in paths(value):
                entry = value
                for name in path:
                    entry = entry[name]
                out[".".join((key, *path))] = entry
        elif value is not None:
            out[key] = value
    return out


def untold_in(segment: Segment, flat: str) -> bool:
    """Whether the segment's hands leave `flat` (a key, or a table's entry as
    `royalties.middle.flush`) undetermined: its key is, whole or in that entry."""
    key = flat.split(".")[0]
    if key not in segment.fit.undetermined:
        return False
    entries = [e for e in segment.fit.entries if e.split(".")[0] == key]
    return not entries or any(
        flat == e or flat.startswith(f"{e}.") or e.startswith(f"{flat}.") for e in entries
    )


def told_apart(a: Segment, b: Segment) -> list[str]:
    """The values (flat) in which two segments' profiles differ and both their hands
    tell."""
    keys = set(a.profile.values) | set(b.profile.values)
    before, after = flat_values(a.profile, keys), flat_values(b.profile, keys)
    return [
        k for k in sorted(set(before) | set(after))
        if before.get(k) != after.get(k) and told_between(a, b, k)
    ]  # fmt: skip


def told_between(a: Segment, b: Segment, flat: str) -> bool:
    """Whether two segments' hands tell `flat` apart: neither leaves it undetermined, or
    it is the floor and the floors each fits as well as any are none of the other's
    (150 before, 30 or 40 after: a change, though the second is not told exactly)."""
    if flat == "floor_points" and a.fit.floors and b.fit.floors:
        return not set(a.fit.floors) & set(b.fit.floors)
    return not (untold_in(a, flat) or untold_in(b, flat))


def _dealing(profile: Profile, entries: list[str]) -> list[str]:
    """`entries` less the cards of a Fantasyland entry by a pair below the entry, where
    the entry is told (no hand is dealt them), and less the stay as a whole where its
    rows are named."""
    if any(e.startswith("fantasyland.stay.") for e in entries):
        entries = [e for e in entries if e != "fantasyland.stay"]
    if not profile.variant.open_face or "fantasyland.entry" in entries:
        return entries
    lowest = RANKS.index(fantasyland(profile)["entry"][0])
    prefix = "fantasyland.entry_cards."
    return [
        e for e in entries
        if not (e.startswith(prefix) and e[len(prefix):] != "trips"
                and RANKS.index(e[len(prefix)]) < lowest)
    ]  # fmt: skip


def table_hands(pool: Pool) -> Iterator[tuple[str, Ints]]:
    """Each (table, game)'s hands, in hand order."""
    if not len(pool):
        return
    key = np.array([f"{t}\x00{g}" for t, g in zip(pool.table_id, pool.game, strict=True)])
    order = np.lexsort((np.array(pool.hand_no), key))
    keys = key[order]
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    for start, end in zip(starts, np.r_[starts[1:], len(order)], strict=True):
        hands = order[start:end]
        yield pool.table_id[int(hands[0])], hands


@dataclass
class _Uses:
    """The segments of each profile (by digest) while `shared` merges them, and the
    merge each profile's group was made at: a group only grows until it is merged
    away, so a profile's digest and that number say which segments it holds."""

    segments: list[Segment]
    groups: dict[str, list[int]] = field(default_factory=dict)
    made_at: dict[str, int] = field(default_factory=dict)
    refused: set[tuple[object, ...]] = field(default_factory=set)  # merges that did not fit
    made: dict[tuple[object, ...], Profile] = field(default_factory=dict)  # (`merged`)
    merges: int = 0
    born: list[tuple[int, str]] = field(default_factory=list)  # (made at, digest), in turn
    # Per segment, the merges made when every merge of its profile was last refused.
    refused_at: dict[int, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for j, s in enumerate(self.segments):
            self.groups.setdefault(s.profile.digest, []).append(j)
        self.made_at = dict.fromkeys(self.groups, 0)
        self.born = [(0, d) for d in self.groups]

    def of(self, i: int) -> list[int]:
        """The segments that use segment `i`'s profile."""
        return self.groups[self.segments[i].profile.digest]

    def most_used(self, i: int) -> list[str]:
        """The other profiles of segment `i`'s game that a merge of its profile may go
        into, the most used first (then the one its first segment comes first): all of
        them, or, where every merge of its profile was refused after some merge and it
        is used since, those made since then (the others are refused still)."""
        profile = self.segments[i].profile
        since = self.refused_at.get(i, -1)
        if self.made_at[profile.digest] <= since:
            at = bisect.bisect_right(self.born, since, key=lambda b: b[0])
            made = {d for m, d in self.born[at:] if d in self.groups and self.made_at[d] == m}
        else:
            made = set(self.groups)
        others = [
            d
            for d in made
            if d != profile.digest and self.segments[self.groups[d][0]].profile.game == profile.game
        ]
        return sorted(others, key=lambda d: (-len(self.groups[d]), self.groups[d][0]))

    def merged(self, i: int, digest: str) -> Profile:
        """Segment `i`'s profile merged into `digest`'s (`inference.merged`), made once."""
        mine = self.segments[i]
        key = (digest, mine.profile.digest, mine.fit.undetermined, mine.fit.entries)
        if key not in self.made:
            other = self.segments[self.groups[digest][0]].profile
            self.made[key] = merged(other, mine.profile, mine.fit.undetermined, mine.fit.entries)
        return self.made[key]

    def tried(self, i: int, digest: str, profile: Profile) -> tuple[object, ...]:
        """What decides whether `profile`, segment `i`'s merged into `digest`, fits the
        segments of both as well as their own: it, and which segments they are."""
        mine = self.segments[i].profile.digest
        return (profile.digest, mine, self.made_at[mine], digest, self.made_at[digest])

    def take(self, profile: Profile, both: list[int], scores: list[Fit]) -> None:
        """Segments `both` (all of two profiles) take the merged `profile`."""
        if profile.digest not in self.groups:  # (one used already grows)
            self.made_at[profile.digest] = self.merges + 1
            self.born.append((self.merges + 1, profile.digest))
        for digest in {self.segments[j].profile.digest for j in both}:
            del self.groups[digest]
        for j, score in zip(both, scores, strict=True):
            fit = self.segments[j].fit
            fits = {**fit.fits, profile.digest: (profile, score)}
            self.segments[j] = replace(self.segments[j], fit=replace(fit, best=profile, fits=fits))
        self.merges += 1
        self.groups[profile.digest] = sorted(self.groups.get(profile.digest, []) + both)


@dataclass
class _Beside:
    """One search's candidates scored beside scored ones on its hands: each base's
    divergences counted once, and the hands that may show what a candidate changes of
    its base (`_Searcher.showing`) found once, for its pass and for its fit."""

    searcher: _Searcher
    hands: Ints
    bases: dict[str, tuple[Ints, int, int]] = field(default_factory=dict)
    shown: dict[tuple[str, str], Ints | None] = field(default_factory=dict)

    def on(self, base: Profile, trial: Profile) -> Ints | None:
        """The places in the hands that may show what `trial` changes of `base`; None:
        any may."""
        pair = (base.digest, trial.digest)
        if pair not in self.shown:
            flags = self.searcher.showing(base, trial, self.hands)
            self.shown[pair] = None if flags is None else np.flatnonzero(flags)
        return self.shown[pair]

    def fit(self, trial: Profile, base: Profile) -> Fit:
        """How well `trial` fits the hands, beside a scored `base` it differs from:
        scored on the hands that may show what changed, `base`'s divergences taken for
        the others, which it settles alike."""
        on = self.on(base, trial)
        if on is None:
            return self.searcher.fit(self.hands)(trial)
        if base.digest not in self.bases:
            found = self.searcher.divergences(base, self.hands)
            self.bases[base.digest] = (found, int((found == 0).sum()), int(found.sum()))
        found, exact, wrong = self.bases[base.digest]
        if not len(on):
            return exact, -wrong
        was, mine = found[on], self.searcher.divergences(trial, self.hands[on])
        exact += int((mine == 0).sum()) - int((was == 0).sum())
        return exact, -(wrong + int(mine.sum()) - int(was.sum()))

    def together(self, trials: list[Profile], base: Profile) -> None:
        """Score `trials` beside a scored `base` in few passes (`Pool.score_each`), each
        on the hands that may show what it changes."""
        held = []
        for trial in trials:
            on = self.on(base, trial)
            held.append((trial, self.hands if on is None else self.hands[on]))
        self.searcher.pool.score_each(held)


@dataclass(frozen=True)
class _Searcher:
    pool: Pool
    recorded: Recorded
    book: RuleBook | None
    readings: dict[tuple[int, int | None], list[Profile]] = field(default_factory=dict)
    commons: dict[tuple[int, int | None], list[Profile]] = field(default_factory=dict)
    # What a candidate changes of a scored one may show where (`showing`), by their digests.
    shows: dict[tuple[str, str], list[Flags | None]] = field(default_factory=dict)

    def exact(self, profile: Profile, hands: Ints) -> Flags:
        """Per hand of `hands`: exact under `profile`, as the search counts it."""
        return self.divergences(profile, hands) == 0

    def divergences(self, profile: Profile, hands: Ints) -> Ints:
        """Per hand of `hands`: its divergences under `profile`, an open-face hand's
        Fantasyland cards (which the previous hand earned) included."""
        found = self.pool.divergences(profile, hands)
        if profile.variant.open_face:
            found = found + self.recorded.fantasyland_misses(profile)[hands]
        return found

    def fit(self, hands: Ints) -> Callable[[Profile], Fit]:
        """How well a candidate fits `hands`: exact hands, then fewer divergences."""

        def fit(profile: Profile) -> Fit:
            found = self.divergences(profile, hands)
            return int((found == 0).sum()), -int(found.sum())

        return fit

    def _search(self, seeds: list[Profile], hands: Ints) -> Search:
        """The search from `seeds` on `hands`, each candidate scored where it may differ."""
        self.pool.score_together(seeds, hands)  # (those not scored yet, in one pass)
        beside = _Beside(self, hands)
        return search(
            seeds,
            self.fit(hands),
            shown=self.shown(hands),
            fit_beside=beside.fit,
            together=beside.together,
        )

    def fit_beside(self, hands: Ints) -> Callable[[Profile, Profile], Fit]:
        """How well a candidate fits `hands`, beside a scored `base` it differs from
        (`_Beside.fit`)."""
        return _Beside(self, hands).fit

    def showing(self, base: Profile, trial: Profile, hands: Ints) -> Flags | None:
        """Per hand of `hands`: whether it may show what `trial` changes of `base`
        (`changes`, `Recorded.showing`); None: any hand may."""
        pair = (base.digest, trial.digest)
        if pair not in self.shows:
            self.shows[pair] = [self.recorded.showing(what) for what in changes(base, trial)]
        flags = self.shows[pair]
        known = [f[hands] for f in flags if f is not None]
        if len(known) < len(flags):
            return None
        return np.logical_or.reduce(known) if known else np.zeros(len(hands), dtype=bool)

    def beside(self, asks: list[tuple[Profile, Profile, Ints]]) -> None:
        """Score each candidate beside its scored base in few passes (`Pool.score_each`),
        on the hands of its run that may show what it changes (`showing`): a pass costs
        more than the few hands most of them ask about."""
        held = []
        for trial, base, hands in asks:
            on = self.showing(base, trial, hands)
            held.append((trial, hands if on is None else hands[on]))
        self.pool.score_each(held)

    def shown(self, hands: Ints) -> Callable[[str], bool]:
        """Whether an entry of a table may settle one of `hands` (`Recorded.showing`)."""

        def shown(entry: str) -> bool:
            flags = self.recorded.showing(entry)
            return flags is None or bool(flags[hands].any())

        return shown

    def seeds(self, hands: Ints) -> list[Profile]:
        """Where a search starts: every profile of the rules file of the table's game,
        the contract with the tables read from the records of every hand of the game,
        the contract, and the contract with the tables read from the table's own, unless
        one of the others fits every hand of the table some rules may make exact: no
        reading fits more, and the rest are faults (`Pool.never_exact`), which a reading
        of the table's own would only be fitted to."""
        common, dealt = self.shared_seeds(hands)
        fit = self.fit(hands)
        possible = len(hands) - int(self.pool.never_exact()[hands].sum())
        if max(fit(p)[0] for p in common) == possible:  # one of them fits every hand some
            return common  # rules may make exact: no reading of the table's own
        return [*common, *self.read(hands, common[0].game, dealt)]

    def shared_seeds(self, hands: Ints) -> tuple[list[Profile], dict[str, Any]]:
        """The seeds of the table of `hands` that its game's tables share (`seeds`;
        found on first use), and the boards it deals."""
        pool = self.pool
        game = pool.game[int(hands[0])]
        dealt: dict[str, Any] = {}
        if GAMES[game].boards:
            dealt["boards"] = Counter(pool.boards[int(h)] for h in hands).most_common(1)[0][0]
        # In this order, which wins where they fit alike: a rules file's profile, then
        # what the most records of the game say, then the contract, then the table's own.
        boards = dealt.get("boards")
        common = [*self.house(game), *self.common(game, boards), *self.pooled(game, boards)]
        return [*common, candidate(game, dealt)], dealt

    def house(self, game: int) -> list[Profile]:
        """The rules file's profiles of `game`."""
        return [p for p in self.book.house if p.game == game] if self.book is not None else []

    def common(self, game: int, boards: int | None) -> list[Profile]:
        """The rules the most hands of `game` (dealt `boards` boards) fit, found once:
        the search from the rules file's profiles, the pooled reading and the contract
        on the first SAMPLE hands, then those and the best with its neighbours scored on
        every hand (a table that fits it, the usual case, then asks nothing new)."""
        key = (game, boards)
        if key not in self.commons:
            mine = self._of(game, boards)
            dealt = {} if boards is None else {"boards": boards}
            seeds = [*self.house(game), *self.pooled(game, boards), candidate(game, dealt)]
            best = self._search(seeds, mine[:SAMPLE]).best
            for profile in seeds:
                self.fit(mine)(profile)
            self.commons[key] = [self._search([best], mine).best]
        return self.commons[key]

    def _of(self, game: int, boards: int | None) -> Ints:
        """The hands of the pool of `game`, dealt `boards` boards when given, in the
        order read."""
        pool = self.pool
        mine = pool.games() == game
        if boards is not None:
            mine &= np.array(pool.boards) == boards
        hands = np.flatnonzero(mine)
        return hands[np.argsort(pool.read_at[hands], kind="stable")]

    def pooled(self, game: int, boards: int | None) -> list[Profile]:
        """The readings of every hand of the pool of `game` (dealt `boards` boards), made
        once: where most tables of a game play one profile, the most records of it."""
        key = (game, boards)
        if key not in self.readings:
            dealt = {} if boards is None else {"boards": boards}
            self.readings[key] = self.read(self._of(game, boards), game, dealt)
        return self.readings[key]

    def read(self, hands: Ints, game: int, dealt: dict[str, Any]) -> list[Profile]:
        """The contract with what `hands`' records give: row points, the Home Run and the
        floor (Taiwanese); royalties, naturals and surrender points (closed); royalties,
        Fantasyland, the scoop bonus and (a second seed) the cap (open face)."""
        recorded, variant = self.recorded, GAMES[game]
        contract = candidate(game, dealt)
        values = dict(dealt)
        if variant.boards:
            points = recorded.row_points(hands, game, dealt["boards"])
            if points.row_points is not None:
                values["row_points"] = points.row_points
            if points.home_run_bonus is not None:
                values["home_run_bonus"] = points.home_run_bonus
            return [candidate(game, values)]
        royalties = recorded.royalties(hands, contract)
        if royalties is not None:
            values["royalties"] = royalties.table
        if not variant.open_face:
            naturals = recorded.naturals(hands, contract)
            if naturals is not None:
                values["naturals"] = naturals.table
            surrender = recorded.surrender_points(hands)
            if surrender is not None:
                values["surrender_points"] = surrender
            return [candidate(game, values)]
        land = recorded.fantasyland(hands, contract)
        if land is not None:
            values["fantasyland"] = land.table
        scoop = recorded.scoop_bonus(hands, game)
        if scoop is not None:
            values["scoop_bonus"] = scoop
        cap = recorded.cap(hands)
        capped = [candidate(game, {**values, "cap": cap})] if cap is not None else []
        return [candidate(game, values), *capped]

    def segments(
        self, table_id: str, hands: Ints, kept: list[Profile], depth: int
    ) -> list[Segment]:
        """The table's hands (in order) as segments, each with the candidate it fits; a
        segment is divided where two candidates fit its two parts better. Its misses are
        searched for other rules only where enough of them may be exact under some
        (`may_divide`): most tables' misses are faults no rules explain."""
        exact = self.pool.exact
        found = self._search([*kept, *self.seeds(hands)], hands)
        whole_fit = Segment(table_id, hands, found)
        if depth == 0 or len(hands) < 2:
            return [whole_fit]
        fits_best = exact(found.best, hands)
        missed = hands[~fits_best]
        slack = int(fits_best.sum()) - found.exact
        fittable = int((~self.pool.never_exact()[missed]).sum())
        if not may_divide(fittable, slack, len(hands)):  # the misses are faults no rules
            return [whole_fit]  # explain, or too few of them are not
        flags = {found.best.digest: (found.best, fits_best)}
        runs = [(missed, [found.best])] if len(missed) else []  # what the rest fit
        if len(missed) > SPLIT_LOOK * len(hands):  # and each half, read alone: the records
            half = len(hands) // 2  # of two rules read together may fit neither
            runs += [(hands[:half], []), (hands[half:], [])]
        # The candidates that fit a hand of the table's search or of a run's: one that
        # fits none of them, all missed by the best or not, is no better than the best
        # anywhere. Of them, those that may split the table are scored on all of it.
        more = {d: p for d, (p, fit) in found.fits.items() if fit[0] and d not in flags}
        for k, (run, kept) in enumerate(runs):
            other = self._search([*kept, *self.seeds(run)], run)
            more |= {d: p for d, (p, fit) in other.fits.items() if fit[0] and d not in flags}
            if k and not kept and other.best.digest in {*flags, *more}:  # a half: the hands
                rest = hands[~exact(other.best, hands)]  # its fit misses are the other rules'
                if len(rest):  # (a half may hold both)
                    found_rest = self._search(self.seeds(rest), rest)
                    more |= {d: p for d, (p, fit) in found_rest.fits.items()
                             if fit[0] and d not in flags}  # fmt: skip
        flags |= self._splitting(more, flags, hands, ~fits_best, slack)
        split = best_split(flags, found.exact)
        if split is None:
            return [whole_fit]
        before, after = hands[: split.at], hands[split.at :]
        return self.segments(table_id, before, [split.before], depth - 1) + self.segments(
            table_id, after, [split.after], depth - 1
        )

    def _splitting(
        self,
        more: dict[str, Profile],
        flags: dict[str, tuple[Profile, Flags]],
        hands: Ints,
        misses: Flags,
        slack: int,
    ) -> dict[str, tuple[Profile, Flags]]:
        """Of the candidates `more`, those that may split the table's `hands` beside the
        scored `flags` (`may_split`), with the hands each fits: the others are not scored
        on every hand of the table. (With faults, most candidates fit a few faulty hands
        by chance, and nothing more.) `misses`: the hands the best misses."""
        exact = self.pool.exact
        self.pool.score_together(list(more.values()), hands[misses])
        gains = {d: int(f[misses].sum()) for d, (_, f) in flags.items()}
        gains |= {d: int(exact(p, hands[misses]).sum()) for d, p in more.items()}
        kept = may_split(gains, slack, len(hands))
        return {d: (p, exact(p, hands)) for d, p in more.items() if d in kept}

    def untold(self, segments: list[Segment]) -> list[Segment]:
        """Each segment with what its hands do not tell apart outside the catalogue (the
        entries of tables read, the cap, row points): a value that another plausible
        profile (the rules file's, the common rules, the pooled reading, the contract,
        another segment's) gives, under which as many of its hands are exact; and a
        royalty, natural or Fantasyland table that no record of the segment shows. A
        trial is scored once over every segment that asks it, and only on the hands that
        may show its entry (`Recorded.showing`)."""
        made: dict[str, list[tuple[str, Profile]]] = {}  # (by the segment's profile)
        given: dict[tuple[int, int | None], dict[str, list[Any]]] = {}
        for s in segments:
            if s.profile.digest not in made:
                made[s.profile.digest] = self.trials(s.profile, segments, given)
        trials = [made[s.profile.digest] for s in segments]
        named: dict[str, list[str]] = {}  # (`named`, by the segment's profile)
        showing: dict[str, Flags | None] = {}
        asked: dict[str, tuple[Profile, list[Ints]]] = {}
        for s, mine in zip(segments, trials, strict=True):
            for what, trial in mine:
                if what not in showing:
                    showing[what] = self.recorded.showing(what)
                asked.setdefault(trial.digest, (trial, []))[1].append(self._shown(s, what, showing))
        self.pool.score_each([(t, np.unique(np.concatenate(p))) for t, p in asked.values()])
        asks = [(k, what, trial) for k, mine in enumerate(trials) for what, trial in mine]
        runs = [self._shown(segments[k], what, showing) for k, what, _ in asks]
        alike = self.exact_in([t for _, _, t in asks], runs) == self.exact_in(
            [segments[k].profile for k, _, _ in asks], runs
        )
        told: list[list[str]] = [[] for _ in segments]
        for (k, what, _), same in zip(asks, alike.tolist(), strict=True):
            if same:
                told[k].append(what)
        out = []
        for s, mine, entries in zip(segments, trials, told, strict=True):
            unrecorded = self.unrecorded(s)
            if s.profile.digest not in named:
                named[s.profile.digest] = self.named(s.profile, [t for _, t in mine])
            entries += self.unshown(s) + self.unseen(s, named[s.profile.digest])
            entries = _dealing(s.profile, entries)
            keys = {*s.fit.undetermined, *unrecorded, *(e.split(".")[0] for e in entries)}
            order = [*CATALOGUE[s.profile.variant.name], *sorted(keys)]
            undetermined = tuple(dict.fromkeys(k for k in order if k in keys))
            shown = tuple(
                sorted({e for e in entries if "." in e and e.split(".")[0] not in unrecorded})
            )
            out.append(replace(s, fit=replace(s.fit, undetermined=undetermined, entries=shown)))
        return out

    def exact_in(self, profiles: list[Profile], runs: list[Ints]) -> Ints:
        """Per run of hands, how many are exact under the profile beside it: the runs of
        each profile scored as one."""
        out = np.zeros(len(runs), np.int64)
        of: dict[str, list[int]] = {}
        for k, profile in enumerate(profiles):
            of.setdefault(profile.digest, []).append(k)
        for members in of.values():
            mine = [runs[k] for k in members]
            found = self.divergences(profiles[members[0]], np.concatenate(mine))
            exact = np.r_[0, np.cumsum(found == 0)]
            ends = np.cumsum([len(run) for run in mine])
            out[members] = exact[ends] - exact[ends - [len(run) for run in mine]]
        return out

    @staticmethod
    def _shown(segment: Segment, what: str, showing: dict[str, Flags | None]) -> Ints:
        """The segment's hands that may show `what` (all of them, for a key)."""
        flags = showing[what]
        return segment.hands if flags is None else segment.hands[flags[segment.hands]]

    def trials(
        self,
        best: Profile,
        segments: list[Segment],
        given: dict[tuple[int, int | None], dict[str, list[Any]]],
    ) -> list[tuple[str, Profile]]:
        """`best` with one value outside the catalogue set to another plausible profile's
        (its game's, dealt its boards), each once: (what changed, the profile). The
        values the plausible profiles give, each once, are found once per game and
        boards (`given`): thousands of small tables' profiles give few."""
        boards = best.value("boards") if best.variant.boards else None
        if (best.game, boards) not in given:
            dealt = {} if boards is None else {"boards": boards}
            others = [
                *self.house(best.game),
                *self.commons.get((best.game, boards), []),
                *self.readings.get((best.game, boards), []),
                candidate(best.game, dealt),
                *(s.profile for s in segments if s.profile.game == best.game),
            ]
            left_out = {*CATALOGUE[best.variant.name], *TABLE_KEYS, "boards"}
            each = {p.digest: p for p in [best, *others]}.values()  # each profile once
            given[best.game, boards] = values_given(list(each), left_out)
        found: dict[str, tuple[str, Profile]] = {}
        for what, trial in towards(best, given[best.game, boards]):
            found.setdefault(trial.digest, (what, trial))
        return list(found.values())

    def unrecorded(self, segment: Segment) -> set[str]:
        """The tables of the segment's game that none of its records shows."""
        variant = segment.profile.variant
        if variant.boards:
            return set()
        tables = ("royalties", "fantasyland" if variant.open_face else "naturals")
        return {key for key in tables if not self.recorded.reads(key)[segment.hands].any()}

    def unseen(self, segment: Segment, named: list[str]) -> list[str]:
        """The entries of the segment's royalty and natural tables (`named`) that no
        record of the segment shows: whatever is written for them is not read from its
        hands."""
        out = []
        for entry in named:
            flags = self.recorded.showing(entry, surely=True)
            if flags is not None and not flags[segment.hands].any():
                out.append(entry)
        return out

    @staticmethod
    def named(best: Profile, others: list[Profile]) -> list[str]:
        """The entries of `best`'s royalty and natural tables that a segment's records
        may not show (`unseen`): its profile's, the contract's, the others', every
        natural, a royal flush where a straight flush pays; in order."""
        if best.variant.boards:
            return []
        keys = ["royalties"] if best.variant.open_face else ["royalties", "naturals"]
        entries: set[str] = set()
        for profile in (best, candidate(best.game, {}), *others):
            for key in keys:
                entries |= {".".join((key, *path)) for path in paths(TABLES[key](profile))}
        if "naturals" in keys:
            entries |= {f"naturals.{name}" for name in NATURALS}
        entries |= {e.replace("straight_flush", "royal_flush") for e in entries
                    if e.startswith("royalties.") and e.endswith(".straight_flush")}  # fmt: skip
        return sorted(entries)

    def unshown(self, segment: Segment) -> list[str]:
        """What an open-face segment's records cannot show whatever the other profiles
        say: a cap where none is set (any cap above the points paid fits as well), and
        the parts of Fantasyland its records do not show (an entry is shown by the
        lowest pair that earned it beside the pair below it that did not)."""
        best = segment.profile
        if not best.variant.open_face:
            return []
        out = [] if best.value("cap") else ["cap"]
        land = self.recorded.fantasyland(segment.hands, best)
        if land is not None:
            tops = entry_table(best)
            for part in fantasyland(best):
                if part == "stay":  # told row by row
                    out += [f"fantasyland.stay.{row}" for row in ROWS
                            if f"stay.{row}" not in land.seen]  # fmt: skip
                elif part == "entry_cards" and land.seen & {f"entry_cards.{t}" for t in tops}:
                    out += [f"fantasyland.entry_cards.{top}" for top in tops  # top by top
                            if f"entry_cards.{top}" not in land.seen]  # fmt: skip
                elif not any(s == part or s.startswith(f"{part}.") for s in land.seen):
                    out.append(f"fantasyland.{part}")
        return out

    def shared(self, segments: list[Segment]) -> list[Segment]:
        """Segments take one profile where it fits each of them as well as its own: a
        segment's profile is merged into another of its game (the keys it told apart
        kept, the others' elsewhere), the most used first, when the merged profile fits
        every segment of both as well as before; the segments taken from the least used
        profile up, again after each merge. Fewer profiles, the same fits or better."""
        uses = _Uses(list(segments))
        order = range(len(segments))
        while any(self._merge(uses, i) for i in sorted(order, key=lambda i: len(uses.of(i)))):
            pass
        return uses.segments

    def _merge(self, uses: _Uses, i: int) -> bool:
        """Merge segment `i`'s profile into another of its game, the most used first, if
        the merged profile fits every segment of both. A merge refused is refused while
        both profiles are used, and is not tried again (`_Uses.tried`, `most_used`): the
        segments of a profile that tell the same keys all make the same merge."""
        for digest in uses.most_used(i):
            profile = uses.merged(i, digest)
            tried = uses.tried(i, digest, profile)
            if tried in uses.refused:
                continue
            both = sorted(uses.of(i) + uses.groups[digest])
            scores = self.fits_each(profile, [uses.segments[j] for j in both])
            if scores is not None:
                uses.take(profile, both, scores)
                return True
            uses.refused.add(tried)
        uses.refused_at[i] = uses.merges
        return False

    def fits_each(self, trial: Profile, segments: list[Segment]) -> list[Fit] | None:
        """`fits_beside` of `trial` on each segment where it fits each as well as the
        segment's own profile, else None: scored on the first segments' LOOK hands, then
        on LOOK_GROWTH times as many at a time, so that a merge refused (most are, by many of
        the segments) stops at the first part one of its segments fits worse in."""
        out: list[Fit] = []
        start, size = 0, LOOK
        while start < len(segments):
            end, held = start, 0
            while end < len(segments) and (end == start or held < size):
                held, end = held + len(segments[end].hands), end + 1
            part = segments[start:end]
            scores = self.fits_beside(trial, part)
            if any(s < segment.fit.score for s, segment in zip(scores, part, strict=True)):
                return None
            out += scores
            start, size = end, size * LOOK_GROWTH
        return out

    def fits_beside(self, trial: Profile, segments: list[Segment]) -> list[Fit]:
        """`fit_beside` of `trial` on each segment, beside the segment's own profile:
        the segments of one profile scored as one run of hands (a merge tried over
        hundreds of small tables costs their hands, not a pass and a call each)."""
        out: dict[int, Fit] = {}
        groups: dict[str, list[int]] = {}
        for k, s in enumerate(segments):
            groups.setdefault(s.profile.digest, []).append(k)
        runs = [(segments[m[0]].profile, m) for m in groups.values()]
        held = [(np.concatenate([segments[k].hands for k in m]), base, m) for base, m in runs]
        self.beside([(trial, base, hands) for hands, base, _ in held])
        for hands, base, members in held:
            on = self.showing(base, trial, hands)
            if on is None:
                found = self.divergences(trial, hands)
            else:
                found = self.divergences(base, hands).copy()
                found[on] = self.divergences(trial, hands[on])
            starts = np.cumsum([0] + [len(segments[k].hands) for k in members[:-1]])
            exact = np.add.reduceat((found == 0).astype(np.int64), starts)
            wrong = np.add.reduceat(found, starts)
            out.update(
                zip(members, zip(exact.tolist(), (-wrong).tolist(), strict=True), strict=True)
            )
        return [out[k] for k in range(len(segments))]

    def joined(self, segments: list[Segment]) -> list[Segment]:
        """Neighbouring segments of a table that came to one profile (merged, or their
        floors read alike) are one segment: no change of rules between them. A key is
        undetermined where neither told it apart."""
        out: list[Segment] = []
        for s in segments:
            last = out[-1] if out else None
            if last is None or (last.table_id, last.profile.digest) != (
                s.table_id,
                s.profile.digest,
            ):
                out.append(s)
                continue
            hands = np.concatenate([last.hands, s.hands])
            undetermined = tuple(k for k in last.fit.undetermined if k in s.fit.undetermined)
            fit = replace(s.fit, fits={**last.fit.fits, **s.fit.fits}, undetermined=undetermined)
            out[-1] = self._refit(Segment(s.table_id, hands, fit))
        return out

    def alike(self, segments: list[Segment]) -> list[Segment]:
        """Neighbouring segments of a table whose profiles differ only where one side's
        hands tell nothing are one segment, under the longer one's profile."""
        out: list[Segment] = []
        for s in segments:
            last = out[-1] if out else None
            same = last is not None and (last.table_id, last.profile.game) == (
                s.table_id,
                s.profile.game,
            )
            if last is None or not same or told_apart(last, s):
                out.append(s)
                continue
            kept = last if len(last.hands) >= len(s.hands) else s
            hands = np.concatenate([last.hands, s.hands])
            fit = replace(kept.fit, fits={**last.fit.fits, **s.fit.fits})
            out[-1] = self._refit(Segment(s.table_id, hands, fit))
        return out

    def placed(self, segments: list[Segment]) -> list[Segment]:
        """Each change of rules placed among the hands around it that fit both rules
        alike (or neither) where the fewest divergences fall: a faulty hand there under
        the rules it is less wrong under (its fault, not the other rules', is shown)."""
        out = list(segments)
        for i in range(1, len(out)):
            a, b = out[i - 1], out[i]
            if (a.table_id, a.profile.game) != (b.table_id, b.profile.game):
                continue
            if hand_rules(a.profile).digest == hand_rules(b.profile).digest:
                continue  # their floors alone differ: no hand's own audit tells them apart
            hands = np.concatenate([a.hands, b.hands])
            old = self.pool.divergences(a.profile, hands)
            new = self.pool.divergences(b.profile, hands)
            alike = (old == 0) == (new == 0)  # moving it changes no hand's exactness
            at = len(a.hands)
            lo, hi = at, at
            while lo > 1 and alike[lo - 1]:
                lo -= 1
            while hi < len(hands) - 1 and alike[hi]:
                hi += 1
            cost = np.concatenate([[0], old.cumsum()]) + np.concatenate(
                [new[::-1].cumsum()[::-1], [0]]
            )  # at k: the old rules' divergences before k, the new rules' from k on
            k = lo + int(cost[lo : hi + 1].argmin())
            if k != at:
                out[i - 1] = self._refit(replace(a, hands=hands[:k]))
                out[i] = self._refit(replace(b, hands=hands[k:]))
        return out

    def _refit(self, segment: Segment) -> Segment:
        """`segment` with its candidates' fits counted over its hands."""
        fit = self.fit(segment.hands)
        fits = {d: (p, fit(p)) for d, (p, _) in segment.fit.fits.items()}
        return replace(segment, fit=replace(segment.fit, fits=fits))

    def floors(self, segments: list[Segment]) -> list[Segment]:
        """The floor of each Taiwanese profile's segments (`floors_of`). Where several
        are as good, the hands do not tell them apart: the one nearest the contract's is
        written, and the floor is undetermined. A segment whose players tell one floor
        before some hand and another from it on is divided there (`floor_parts`), each
        part under its own."""
        parts: list[Segment] = []
        found: dict[int, tuple[int, ...]] = {}  # per part: the floors as good as any
        for s in segments:
            divided = self.floor_parts(s, 3) if s.profile.variant.floor_points else [(s, None)]
            for part, own in divided:
                if own is not None:
                    found[len(parts)] = own
                parts.append(part)
        groups: dict[str, list[int]] = {}
        for i, s in enumerate(parts):
            if s.profile.variant.floor_points and i not in found:
                groups.setdefault(s.profile.digest, []).append(i)
        for members in groups.values():
            found.update(zip(members, self.floors_of([parts[i] for i in members]), strict=True))
        for i, tied in found.items():
            fit = parts[i].fit
            profile = with_value(fit.best, "floor_points", nearest(tied, fit.best))
            fits = {**fit.fits, profile.digest: (profile, fit.score)}
            told = fit.undetermined + (("floor_points",) if len(tied) > 1 else ())
            fit = replace(fit, best=profile, fits=fits, undetermined=told, floors=tied)
            parts[i] = replace(parts[i], fit=fit)
        return parts

    def floor_parts(
        self, segment: Segment, depth: int
    ) -> list[tuple[Segment, tuple[int, ...] | None]]:
        """The segment as parts of one floor each, divided (at most `depth` times over)
        where its players tell one floor before some hand and another from it on
        (`floor_change`), each part with the floors as good as any there; or whole, with
        None (the floor its profile's segments tell, `floors_of`)."""
        change = self.floor_change(segment) if depth else None
        if change is None:
            return [(segment, None)]
        at, floors = change
        out: list[tuple[Segment, tuple[int, ...] | None]] = []
        for hands, floor in zip((segment.hands[:at], segment.hands[at:]), floors, strict=True):
            side = self._refit(replace(segment, hands=hands))
            divided = self.floor_parts(side, depth - 1)
            out += divided if len(divided) > 1 else [(side, floor)]
        return out

    def floor_change(
        self, segment: Segment
    ) -> tuple[int, tuple[tuple[int, ...], tuple[int, ...]]] | None:
        """Where the segment's players tell one floor before some hand and another from
        it on: the first hand (an index into its hands) that a player's return tells the
        second by, and each side's floors as good as any (`floors_fitting`).
        The division is the one whose sides' votes (`floor_votes`, return by return)
        beat the best floor's over all its hands by the most, `least_gain` at least;
        none where the two sides' floors (`floors_fitting`) may be the same."""
        best, hands = segment.profile, segment.hands
        ended, worths, at = self.recorded.floor_returns(hands)
        order = np.argsort(at, kind="stable")
        ended, worths, at = ended[order], worths[order], at[order]
        ends = np.flatnonzero(at[1:] > at[:-1])  # a division after these returns (between hands)
        if not len(ends):
            return None
        votes = _floor_votes(ended, worths)  # (floors, returns)
        counted = votes.cumsum(axis=1)
        before = counted[:, ends]
        after = counted[:, -1:] - before
        gains = before.max(axis=0) + after.max(axis=0) - int(counted[:, -1].max())
        j = int(gains.argmax())
        if gains[j] < least_gain(len(hands)):
            return None
        old, new = int(before[:, j].argmax()), int(after[:, j].argmax())
        telling = np.flatnonzero(votes[new] > votes[old])
        k = int(at[telling[telling > ends[j]][0]])  # (the division's gain holds one)
        # A hand before it that the largest group tells the new floor by, sooner.
        start = int(at[ends[j]]) + 1
        tells = self._group_tells(best, FLOORS[old], FLOORS[new], hands[start:k])
        sooner = np.flatnonzero(tells < 0)
        k = start + int(sooner[0]) if len(sooner) else k
        sides = []
        for part in (hands[:k], hands[k:]):
            side_ended, side_worths, _ = self.recorded.floor_returns(part)
            sides.append(tuple(self.floors_fitting(best, part, side_ended, side_worths)))
        if set(sides[0]) & set(sides[1]):
            return None
        return k, (sides[0], sides[1])

    def change(self, before: Segment, after: Segment) -> Change:
        """The change between two segments of a table (`Change.of`); where only their
        floors differ, which the search does not tell, the last hand a player's return
        (`floor_votes`) or the largest group (`_group_tells`) tells the old floor by, and
        the first either tells the new by."""
        if hand_rules(before.profile).digest != hand_rules(after.profile).digest:
            return Change.of(self.pool, before, after)
        hands = np.concatenate([before.hands, after.hands])
        ended, worths, at = self.recorded.floor_returns(hands)
        old, new = (s.profile.value("floor_points") for s in (before, after))
        votes = _floor_votes(ended, worths, (old, new))
        favour, n = votes[0] - votes[1], len(before.hands)
        tells = self._group_tells(before.profile, old, new, hands)
        olds = np.union1d(at[(favour > 0) & (at < n)], np.flatnonzero(tells[:n] > 0))
        news = np.union1d(at[(favour < 0) & (at >= n)], n + np.flatnonzero(tells[n:] < 0))
        last = int(olds.max()) if len(olds) else n - 1
        first = int(news.min()) if len(news) else n
        return Change(
            before.table_id, before, after, int(hands[last]), int(hands[first]),
            hands[last + 1 : first],
        )  # fmt: skip

    def _group_tells(self, best: Profile, old: int, new: int, hands: Ints) -> Ints:
        """Per hand of `hands`: 1 where the largest group (the players dealt against the
        seated ones who could cover) finds more under floor `new` than under `old` (the
        hand tells the old floor), -1 where it finds more under `old`, else 0."""
        out = np.zeros(len(hands), np.int64)
        seated = np.flatnonzero(self.pool.sat_out()[hands])
        if len(seated):
            under_old = self._flagged(best, old, hands[seated])
            out[seated] = np.sign(self._flagged(best, new, hands[seated]) - under_old)
        return out

    def floors_of(self, group: list[Segment]) -> list[tuple[int, ...]]:
        """Per segment of one profile, the floors as good as any (`floor_of`): read
        over all of them (tables of one profile usually share it, and few hands tell a
        floor), but for a segment whose own hands tell another (`tells_other`): its own.
        The others' floor is then read without those."""
        pooled = self.floor_of(group)
        if len(group) == 1:
            return [pooled]
        hands = np.concatenate([s.hands for s in group])
        floor = nearest(pooled, group[0].profile)
        self._flagged(group[0].profile, floor, hands[self.pool.sat_out()[hands]])  # (at once)
        own = [k for k, s in enumerate(group) if self.tells_other(s, floor)]
        if own and len(own) < len(group):
            pooled = self.floor_of([s for k, s in enumerate(group) if k not in own])
        return [self.floor_of([s]) if k in own else pooled for k, s in enumerate(group)]

    def floor_of(self, group: list[Segment]) -> tuple[int, ...]:
        """The floors the hands of segments of one profile tell (`floors_fitting`): one,
        or several as good (the one nearest the contract's is written, `nearest`)."""
        best = group[0].profile
        hands = np.concatenate([s.hands for s in group])
        returns = [self.recorded.floor_returns(s.hands)[:2] for s in group]
        ended, worths = (np.concatenate(side) for side in zip(*returns, strict=True))
        return tuple(self.floors_fitting(best, hands, ended, worths))

    def tells_other(self, segment: Segment, floor: int) -> bool:
        """Whether the segment's own hands tell a floor other than `floor`: another wins
        their vote (`floors_fitting`: its keepers less what it flags) by MIN_GAIN at
        least (a floor fault or two of one table is no floor of its own). The largest
        group is scored only for floors it could change the answer of."""
        best, hands = segment.profile, segment.hands
        ended, worths, _ = self.recorded.floor_returns(hands)
        seated = hands[self.pool.sat_out()[hands]]
        least = self._flagged(best, FLOORS[-1], seated)

        def grouped(f: int) -> int:
            return int((self._flagged(best, f, seated) > least).sum())

        kept, broken = floor_votes(ended, worths)
        most = {f: kept[f] - broken[f] for f in FLOORS}
        mine = most[floor] - grouped(floor)
        return any(
            most[f] - grouped(f) >= mine + MIN_GAIN
            for f in sorted(FLOORS, key=lambda f: -most[f])
            if most[f] >= mine + MIN_GAIN
        )

    def floors_fitting(self, best: Profile, hands: Ints, ended: Ints, worths: Ints) -> list[int]:
        """The floors of the catalogue the hands tell, of a table's players dealt in
        again (`ended` and `worths`, `Recorded.floor_returns`). First those under which
        the fewest of `hands`' divergences that a floor decides are found
        (`fewest_flagged`). A higher floor flags a floor fault (a player dealt in below
        it) that a lower one lets pass; what tells it is that the players who ended a
        hand below it added on to reach it before they were dealt in again. A floor is
        taken over the fewest flagging ones when the players who kept it (`kept`)
        outnumber, by more than those floors' keepers do, what it flags: its floor faults
        are then faults, not a lower floor; by fewer than MIN_GAIN votes, it is only as
        good as they are (a fault or two). Where players top up when they need not,
        a floor they kept and nobody broke is among the fewest flagging ones: the hands
        do not tell it from the others."""
        seated = hands[self.pool.sat_out()[hands]]
        least = self._flagged(best, FLOORS[-1], seated)
        tied, cost = self.fewest_flagged(best, seated, worths, least)
        kept, broken = floor_votes(ended, worths)
        beaten = max(kept[f] for f in tied) - cost  # the fewest flagging floors' votes
        votes: dict[int, int] = {}
        rest = sorted(set(FLOORS) - set(tied), key=lambda f: broken[f] - kept[f])
        for floor in rest:  # the most a floor's vote can be first; the largest group lowers it
            most = kept[floor] - broken[floor]
            if most <= beaten or most < max(votes.values(), default=most):
                break
            grouped = int((self._flagged(best, floor, seated) > least).sum())
            votes[floor] = most - grouped
        top = max(votes.values(), default=beaten)
        won = [f for f, vote in votes.items() if vote == top]
        if top - beaten < MIN_GAIN:  # by a vote or two: as good as the fewest flagging ones
            return sorted({*won, *tied}) if top > beaten else tied
        return won

    def fewest_flagged(
        self, best: Profile, seated: Ints, worths: Ints, least: Ints
    ) -> tuple[list[int], int]:
        """The floors of the catalogue under which the fewest of the hands' divergences
        that a floor decides are found (`floor_costs`), and their number. Where none is
        found under the highest floor no dealt stack contradicts, the hands flag less the
        higher the floor: those from the lowest that flags none up to it, found by
        halving, without scoring every floor."""
        top = [f for f in FLOORS if not (worths < f).any()]
        if not top or (self._flagged(best, top[-1], seated) > least).any():
            costs = self.floor_costs(best, seated, worths, least)
            fewest = min(costs.values())
            return [f for f, cost in costs.items() if cost == fewest], fewest
        lo, hi = 0, len(top) - 1  # top[hi] flags nothing; find the lowest that does not
        while lo < hi:
            mid = (lo + hi) // 2
            if (self._flagged(best, top[mid], seated) > least).any():
                lo = mid + 1
            else:
                hi = mid
        return top[lo:], 0

    def floor_costs(self, best: Profile, seated: Ints, worths: Ints, least: Ints) -> dict[int, int]:
        """Per floor of the catalogue, what it flags that depends on it: the players dealt
        in again below it (`worths`, in points: the rule across hands), and the hands of
        `seated` (those with a player sitting out) dealt to fewer players than the seated
        ones could have made under it (the largest group), beyond `least` (the divergences
        under the highest floor)."""
        costs = {}
        for floor in FLOORS:
            found = self._flagged(best, floor, seated)
            costs[floor] = int((worths < floor).sum()) + int((found > least).sum())
        return costs

    def _flagged(self, best: Profile, floor: int, hands: Ints) -> Ints:
        """Per hand of `hands`: its divergences under `best` with `floor`."""
        return self.pool.divergences(with_value(best, "floor_points", floor), hands, True)
