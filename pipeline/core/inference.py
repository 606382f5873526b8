"""Which rules a table was dealt by, from its hands alone (`rules infer`): the pure parts.

A candidate is a game and the values it sets (house-rules.md 2). Its fit on a run of
hands is how many of them are exact under it: every recorded outcome the rules settle
matches. The search does not enumerate the product of the keys: from the best seed it
changes one discrete key at a time and keeps a change only when more hands fit, so a
key is scored on the hands whose outcome it changes. Row points and the Home Run of a
Taiwanese table are read from the recorded pair points instead (a least-squares fit of
points against rows won), since they are numbers, not a short list.

A table that fits one candidate before some hand and another after it changed its
rules there: `best_split` finds the hand that divides it best.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache, partial
from typing import Any

import numpy as np
import numpy.typing as npt

from pipeline.core.readings import fantasyland, natural_table, royalty_table
from pipeline.core.rules import GAMES, Profile, contract_value
from pipeline.helpers.kept import Kept

Flags = npt.NDArray[np.bool_]
Ints = npt.NDArray[np.int64]
# How well a candidate fits a run of hands: the hands exact under it, then (to tell
# apart candidates under which the same hands are exact) the fewer divergences, negated.
Fit = tuple[int, int]

# The discrete keys of each game and the values the catalogue tries (house-rules.md 2).
HOME_RUN_BONUSES = (0, 4, 6, 8, 10, 12, 16, 20)
SCOOP_BONUSES = (0, 1, 2, 3, 4, 5, 6)
STARTS = 2  # the seeds a search ascends from, at most (each costs a whole ascent)
TABLE_KEYS = frozenset({"floor_points"})  # read from the stacks, after the search
FLOORS = tuple(range(0, 201, 10))  # the floors the catalogue knows, in points
CATALOGUE: dict[str, dict[str, tuple[Any, ...]]] = {
    "taiwanese": {"home_run_bonus": HOME_RUN_BONUSES},
    "taiwanese_jokers": {"home_run_bonus": HOME_RUN_BONUSES},
    "chinese": {
        "scoring": ("1-6", "2-4"),
        "surrender": (True, False),
        "naturals_between": ("higher", "sum"),
        "home_run": (False, True),
        "wheel": ("lowest", "second"),
        "middle": ("high", "low"),
    },
    "ofc": {"scoop_bonus": SCOOP_BONUSES},
    "pineapple_ofc": {"scoop_bonus": SCOOP_BONUSES},
}

# A change of rules must win at least this many hands over the best single fit (and
# this share of them), and each side must fit most of its own hands: a run of faulty
# hands fits neither side and is shown as findings, not as a change.
MIN_GAIN = 3
MIN_GAIN_SHARE = 0.01
MIN_SIDE_FIT = 0.5


def candidate(game: int, values: dict[str, Any]) -> Profile:
    """A candidate profile: the values that differ from the contract's, in key order."""
    variant = GAMES[game]
    kept = {
        key: value
        for key, value in sorted(values.items())
        if value is not None and value != contract_value(variant, key, missing=object())
    }
    contract = contract_tables(game)
    return Profile("candidate", game, {k: v for k, v in kept.items() if contract.get(k) != v})


@cache
def contract_tables(game: int) -> dict[str, Any]:
    """The contract's tables of `game`, as a rules file gives them: a table read that
    equals one is no change (made once; not to be changed)."""
    profile = Profile("contract", game)
    if profile.variant.boards:  # a game of boards pays no royalty nor natural
        return {}
    tables: dict[str, Any] = {"royalties": royalty_table(profile)}
    if profile.variant.open_face:
        tables["fantasyland"] = fantasyland(profile)
    else:
        tables["naturals"] = natural_table(profile)
    return tables


def hand_rules(profile: Profile) -> Profile:
    """`profile` as its candidates are scored: the keys read from the stacks after the
    search set apart. The floor is one; a hand's audit reads it in one check, the
    largest group (a short player at or above the floor may be dealt in), which under
    the highest floor flags nothing, so the hands the search counts do not depend on it
    (the floor written is a bound that flags no more than the true one)."""
    kept = {k: v for k, v in profile.values.items() if k not in TABLE_KEYS}
    if profile.variant.floor_points:  # a game with a floor
        kept["floor_points"] = FLOORS[-1]
    return Profile(profile.name, profile.game, kept)


# The profiles one value away from another, as made last: every table's search tries
# the same values of the catalogue beside the same few profiles.
_with_value_of: Kept[Profile] = Kept(16384)


def with_value(profile: Profile, key: str, value: Any) -> Profile:
    """`profile` with `key` set to `value` (None: the contract's)."""
    if isinstance(value, (dict, list)):
        told: object = json.dumps(value, sort_keys=True)
    else:  # (the type too: True == 1)
        told = (type(value).__name__, value)
    return _with_value_of.get(
        (profile.digest, key, told),
        lambda: candidate(profile.game, {**profile.values, key: value}),
    )


@dataclass(frozen=True)
class Search:
    """A search's outcome on one run of hands: the best candidate, how many hands each
    candidate it tried fits, and the keys no hand told apart."""

    best: Profile
    fits: dict[str, tuple[Profile, Fit]]  # by digest
    undetermined: tuple[str, ...]
    entries: tuple[str, ...] = ()  # the entries of undetermined tables: `naturals.dragon`
    floors: tuple[int, ...] = ()  # the floors as good as the one written (`infer.py`)

    @property
    def score(self) -> Fit:
        return self.fits[self.best.digest][1]

    @property
    def exact(self) -> int:
        return self.score[0]

    def next_best(self) -> tuple[Profile, int] | None:
        """The best candidate under which fewer hands are exact, and their number."""
        others = [(p, fit[0]) for p, fit in self.fits.values() if fit[0] < self.exact]
        return max(others, key=lambda other: other[1]) if others else None


def search(
    seeds: Sequence[Profile],
    fit: Callable[[Profile], Fit],
    rounds: int = 4,
    shown: Callable[[str], bool] = lambda entry: True,
    fit_beside: Callable[[Profile, Profile], Fit] | None = None,
    together: Callable[[list[Profile], Profile], None] | None = None,
) -> Search:
    """The best candidate from `seeds`, one catalogue key changed at a time while it
    fits better. `fit`: how well a candidate fits the run of hands (`Fit`); `shown`:
    whether an entry of a table (`naturals.dragon`) may settle one of them (another
    value of one that cannot fits them alike, and is not tried); `fit_beside`: the fit
    of a candidate beside a scored one it differs from (`changes`), scored only where
    what changed may show; `together`: score candidates beside a scored one at once (a
    key's values, asked one after another)."""
    fits: dict[str, tuple[Profile, Fit]] = {}

    def score(profile: Profile, beside: Profile | None = None) -> Fit:
        if profile.digest not in fits:
            found = fit_beside(profile, beside) if beside and fit_beside else fit(profile)
            fits[profile.digest] = (profile, found)
        return fits[profile.digest][1]

    def ascend(best: Profile, keys: dict[str, tuple[Any, ...]]) -> Profile:
        return _ascend(best, keys, score, together, rounds)

    # From every seed that fits best (a file's, the contract, a reading: several keys
    # may be wrong at once, and one key's change shows only once the others are right).
    top = max(score(seed)[0] for seed in seeds)
    tied = {seed.digest: seed for seed in seeds if score(seed)[0] == top}
    # Of those, the STARTS with the fewest divergences (first of equals; more start
    # points cost a whole ascent each and rarely end elsewhere).
    starts = {d: tied[d] for d in sorted(tied, key=lambda d: -score(tied[d])[1])[:STARTS]}
    catalogue = CATALOGUE[seeds[0].variant.name]
    best = max((ascend(seed, catalogue) for seed in starts.values()), key=score)  # first of equals
    if score(best)[1] < 0:  # some hand diverges: the tables the other seeds read, one at a
        best = ascend(best, {**catalogue, **read_values(seeds, catalogue)})  # time, too
    for _ in range(rounds):  # and, while a hand diverges, their entries one at a time (a
        if score(best)[1] == 0:  # table read may hold one entry another seed lacks)
            break
        before = best
        for seed in seeds:
            trials = [t for w, t in one_changed(best, seed, {*catalogue, *TABLE_KEYS}) if shown(w)]
            if together is not None:  # (many entries, each shown in a few hands)
                together(trials, best)
            for trial in trials:
                if score(trial, best) > score(best):
                    best = trial
        if best is before:
            break
        best = ascend(best, catalogue)
    for trial in neighbours(best):  # score the catalogue's other values too
        score(trial, best)
    # Undetermined: what no exact hand tells apart (though the faults may prefer one).
    undetermined = differing(best, [p for p, n in fits.values() if n[0] == score(best)[0]])
    return Search(best, fits, undetermined)


def _ascend(
    best: Profile,
    keys: dict[str, tuple[Any, ...]],
    score: Callable[[Profile, Profile | None], Fit],
    together: Callable[[list[Profile], Profile], None] | None,
    rounds: int,
) -> Profile:
    """`best` with one of `keys` changed at a time while it fits better (`score`, beside
    the best), for at most `rounds` rounds; a round's trials scored `together` first."""
    for _ in range(rounds):
        improved, start = False, best
        trials = {
            key: [with_value(best, key, value) for value in values] for key, values in keys.items()
        }
        if together is not None:
            together([trial for each in trials.values() for trial in each], best)
        for key, values in keys.items():
            if best is not start:  # beside a better one found this round
                trials[key] = [with_value(best, key, value) for value in values]
                if together is not None:
                    together(trials[key], best)
            for trial in trials[key]:  # (beside a better one found here, each is the same)
                if score(trial, best) > score(best, None):
                    best, improved = trial, True
        if not improved:
            break
    return best


def neighbours(profile: Profile) -> list[Profile]:
    """`profile` with one catalogue key changed, for each key and each of its values."""
    catalogue = CATALOGUE[profile.variant.name]
    return [with_value(profile, key, v) for key, values in catalogue.items() for v in values]


def read_values(seeds: Sequence[Profile], catalogue: dict[str, Any]) -> dict[str, tuple[Any, ...]]:
    """The values the seeds give the keys outside the catalogue (the tables read from
    the records: a seed that fits few hands as a whole may hold the one that is right)."""
    values: dict[str, dict[str, Any]] = {}
    for key in sorted({k for seed in seeds for k in seed.values} - set(catalogue)):
        for seed in seeds:
            value = seed.values.get(key)
            values.setdefault(key, {})[json.dumps(value, sort_keys=True)] = value
    return {key: tuple(v.values()) for key, v in values.items() if len(v) > 1}


# The tables a profile may replace, each whole (its own, else the contract's).
TABLES: dict[str, Callable[[Profile], dict[str, Any]]] = {
    "royalties": royalty_table,
    "naturals": natural_table,
    "fantasyland": fantasyland,
}


def changes(base: Profile, trial: Profile) -> list[str]:
    """What `trial` changes of `base` (of one game): each key, and of a table each entry
    (`naturals.dragon`)."""
    out = []
    for key in sorted(set(base.values) | set(trial.values)):
        if key in TABLES:
            mine, theirs = TABLES[key](base), TABLES[key](trial)
            out += [".".join((key, *path)) for path, _ in _entries_differing(mine, theirs)]
        elif base.value(key) != trial.value(key):
            out.append(key)
    return out


# The profiles one value away from a best towards another, as made last (many tables'
# searches and their undetermined entries ask the same pairs).
_changed_of: Kept[list[tuple[str, Profile]]] = Kept(4096)


def one_changed(best: Profile, other: Profile, left_out: set[str]) -> list[tuple[str, Profile]]:
    """`best` with one value set to `other`'s where they differ: one entry of a table
    (`royalties.middle.royal_flush`, `naturals.dragon`, `fantasyland.entry`) or one other
    key (`cap`); `left_out`: keys not to change. Each as (what changed, the profile)."""
    key = (best.digest, other.digest, frozenset(left_out))
    return list(_changed_of.get(key, lambda: _one_changed(best, other, left_out)))


def _one_changed(best: Profile, other: Profile, left_out: set[str]) -> list[tuple[str, Profile]]:
    return towards(best, values_given([best, other], left_out))


def values_given(profiles: Sequence[Profile], left_out: set[str]) -> dict[str, list[Any]]:
    """Per key that one of `profiles` sets (but those `left_out`), in order: the values
    they give it, each once (a table whole, its own or the contract's)."""
    out: dict[str, list[Any]] = {}
    for key in sorted({key for p in profiles for key in p.values} - left_out):
        given: dict[str, Any] = {}
        for p in profiles:
            value = TABLES[key](p) if key in TABLES else p.value(key)
            given.setdefault(json.dumps(value, sort_keys=True), value)
        out[key] = list(given.values())
    return out


def towards(best: Profile, values: dict[str, list[Any]]) -> list[tuple[str, Profile]]:
    """`best` with one value set to one of `values` where it differs (`one_changed`):
    one entry of a table, or one other key."""
    out = []
    for key, given in values.items():
        mine = TABLES[key](best) if key in TABLES else best.value(key)
        for theirs in given:
            if mine == theirs:
                continue
            if key not in TABLES:
                out.append((key, with_value(best, key, theirs)))
                continue
            for path, value in _entries_differing(mine, theirs):
                what = ".".join((key, *path))
                made = (best.digest, what, json.dumps(value, sort_keys=True))
                out.append(
                    (what, _entry_of.get(made, partial(_with_entry, best, key, path, value)))
                )
    return out


# The profiles one entry away from a best, as made last (the other profiles a table's
# best is compared with often differ from it in the same entries).
_entry_of: Kept[Profile] = Kept(16384)


def _with_entry(best: Profile, key: str, path: tuple[str, ...], value: Any) -> Profile:
    """`best` with the entry `path` of its table `key` set to `value` (None: removed)."""
    table = json.loads(json.dumps(TABLES[key](best)))
    _set(table, path, value)
    return with_value(best, key, table)


def merged(
    base: Profile, mine: Profile, undetermined: Sequence[str], entries: Sequence[str]
) -> Profile:
    """`base` with what `mine` told apart: its value of each key not `undetermined`, and
    of a table undetermined only in some `entries`, its other entries (`naturals.dragon`
    untold: `mine`'s other naturals over `base`'s table)."""
    values = dict(base.values)
    for key in sorted(set(base.values) | set(mine.values)):
        untold = {e for e in entries if e.split(".", 1)[0] == key}
        if key not in undetermined:
            values[key] = mine.value(key)
        elif key in TABLES and untold:
            table = json.loads(json.dumps(TABLES[key](base)))
            for path, value in _entries_differing(table, TABLES[key](mine)):
                if ".".join((key, *path)) not in untold:
                    _set(table, path, value)
            values[key] = table
    return candidate(base.game, values)


def _entries_differing(
    mine: dict[str, Any], theirs: dict[str, Any]
) -> list[tuple[tuple[str, ...], Any]]:
    """The entries (paths into nested tables) where `theirs` differs from `mine`, with
    its value (None: it has none)."""
    out: list[tuple[tuple[str, ...], Any]] = []
    for name in sorted(set(mine) | set(theirs)):
        a, b = mine.get(name), theirs.get(name)
        if isinstance(a, dict) and isinstance(b, dict):
            out += [((name, *path), v) for path, v in _entries_differing(a, b)]
        elif a != b:
            out.append(((name,), b))
    return out


def paths(table: dict[str, Any]) -> list[tuple[str, ...]]:
    """The entries of a (nested) table, as paths: `("middle", "flush")`."""
    out: list[tuple[str, ...]] = []
    for name, value in sorted(table.items()):
        if isinstance(value, dict):
            out += [(name, *path) for path in paths(value)]
        else:
            out.append((name,))
    return out


def _set(table: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    for name in path[:-1]:
        table = table.setdefault(name, {})
    if value is None:
        table.pop(path[-1], None)
    else:
        table[path[-1]] = value


def differing(best: Profile, others: Sequence[Profile]) -> tuple[str, ...]:
    """The keys in which any of `others` differs from `best` (but the table rules'),
    in the order of the catalogue then by name."""
    keys = {
        key
        for other in others
        for key in set(best.values) | set(other.values)
        if key not in TABLE_KEYS and other.value(key) != best.value(key)
    }
    order = list(CATALOGUE[best.variant.name])
    return tuple(
        sorted(keys, key=lambda k: (k not in order, order.index(k) if k in order else 0, k))
    )


@dataclass(frozen=True)
class Split:
    """A run of hands divided at `at` (the first hand of the second part)."""

    at: int
    before: Profile
    after: Profile
    exact: int  # hands exact under `before` before the split and `after` after it


def least_gain(n: int) -> int:
    """The hands a change of rules must win over the best single fit of `n` hands."""
    return max(MIN_GAIN, int(MIN_GAIN_SHARE * n))


def may_split(gains: dict[str, int], slack: int, n: int) -> set[str]:
    """Of the candidates, by digest, that fit `gains[d]` of the hands the best whole fit
    of `n` hands misses, those `best_split` may divide the hands by. A split gains over
    that fit at most what its two sides' candidates fit of those hands, a window at
    most what its one fits, each plus `slack` (hands the best's count leaves out): one
    that cannot reach `least_gain` beside the one that fits the most of them cannot."""
    most = max(gains.values(), default=0)
    return {d for d, gain in gains.items() if gain + most + slack >= least_gain(n)}


def may_divide(fittable: int, slack: int, n: int) -> bool:
    """Whether `best_split` may divide `n` hands at all, where the best whole fit misses
    only `fittable` hands that some profile may make exact: whatever the candidates, a
    hand counts once, on one side, so a division (or a window) gains over that fit at
    most those and `slack` (hands the best's count leaves out)."""
    return fittable + slack >= least_gain(n)


def best_split(exact: dict[str, tuple[Profile, Flags]], single: int) -> Split | None:
    """The division of a run of hands (in order) into two, each under its own candidate,
    that fits the most hands; None unless it beats the best single fit (`single` hands)
    by MIN_GAIN hands and each side fits most of its own."""
    if not exact:
        return None
    profiles = [p for p, _ in exact.values()]
    flags = np.array([f for _, f in exact.values()], dtype=np.int64)
    n = flags.shape[1]
    if n < 2:
        return None
    before = np.concatenate([np.zeros((len(profiles), 1), np.int64), flags.cumsum(axis=1)], 1)
    after = before[:, -1:] - before
    # A split at i: hands [0, i) before, [i, n) after; i from 1 to n - 1.
    best_before = before[:, 1:n].max(axis=0)
    best_after = after[:, 1:n].max(axis=0)
    total = best_before + best_after
    i = int(total.argmax())
    gain = int(total[i]) - single
    least = least_gain(n)
    window = _best_window(profiles, flags)
    if window is not None and window.exact - single > max(gain, least - 1):  # rules that
        return window  # came and went
    if gain < least:
        return None
    at = i + 1
    a = int(before[:, at].argmax())
    b = int(after[:, at].argmax())
    if profiles[a].digest == profiles[b].digest:
        return None
    if before[a, at] < MIN_SIDE_FIT * at or after[b, at] < MIN_SIDE_FIT * (n - at):
        return None
    return Split(at, profiles[a], profiles[b], int(total[i]))


def _best_window(profiles: list[Profile], flags: Ints) -> Split | None:
    """A run of hands [i, j) under which one candidate fits better than the best whole
    fit by the most hands (rules that changed and changed back: A B A fits no division
    in two better than A alone), as a split at its first end inside the hands; None
    without one that fits most of its own hands."""
    n = flags.shape[1]
    a = int(flags.sum(axis=1).argmax())  # the best whole fit
    gains = np.concatenate(
        [np.zeros((len(profiles), 1), np.int64), (flags - flags[a]).cumsum(1)], 1
    )
    lowest = np.minimum.accumulate(gains, axis=1)
    ends = (gains - lowest).argmax(axis=1)  # per candidate, the end of its best run
    won = (gains - lowest)[np.arange(len(profiles)), ends]
    b = int(won.argmax())
    j = int(ends[b])
    i = int(gains[b, : j + 1].argmin())
    if won[b] <= 0 or flags[b, i:j].sum() < MIN_SIDE_FIT * (j - i):
        return None
    exact = int(flags[a].sum() + won[b])
    if i > 0:
        return Split(i, profiles[a], profiles[b], exact)
    return Split(j, profiles[b], profiles[a], exact) if j < n else None


@dataclass(frozen=True)
class RowPoints:
    """Row points and Home Run bonus read from recorded pair points (None: not told)."""

    row_points: list[int] | None
    home_run_bonus: int | None


def read_row_points(won: Ints, lost: Ints, boards: int, points: Ints) -> RowPoints:
    """The integer row points (top, middle, bottom) and Home Run bonus that reproduce
    the recorded points of pairs decided by their rows: `won` and `lost` are the rows'
    bits (row + 3 x board), `points` the recorded points of the first player."""
    if not len(points):
        return RowPoints(None, None)
    bits = np.arange(3 * boards)
    sign = ((won[:, None] >> bits) & 1) - ((lost[:, None] >> bits) & 1)
    per_row = sign.reshape(len(points), boards, 3).sum(axis=1)
    sweep = (sign == 1).all(axis=1).astype(np.int64) - (sign == -1).all(axis=1)
    features = np.column_stack([per_row, sweep]).astype(float)
    rounded = _integer_fit(features, points)
    if rounded is None:
        return RowPoints(None, None)
    rank = np.linalg.matrix_rank(features)
    told = [bool(np.linalg.matrix_rank(np.delete(features, k, axis=1)) < rank) for k in range(4)]
    rows = [int(p) for p in rounded[:3]] if all(told[:3]) else None
    if rows is not None and min(rows) < 1:
        rows = None
    bonus = int(rounded[3]) if told[3] and rounded[3] >= 0 else None
    return RowPoints(rows, bonus)


def _integer_fit(features: npt.NDArray[np.float64], points: Ints) -> Ints | None:
    """Integer coefficients that reproduce most recorded points: a least-squares fit,
    rounded, then fitted again on the pairs it reproduces (faulty pairs fall out)."""
    keep = np.ones(len(points), dtype=bool)
    rounded = None
    for _ in range(3):
        solution, *_ = np.linalg.lstsq(features[keep], points[keep].astype(float), rcond=None)
        rounded = np.rint(solution).astype(np.int64)
        matches = features @ rounded == points
        if matches.mean() < MIN_SIDE_FIT:
            return None
        if (matches == keep).all():
            break
        keep = matches
    return rounded
