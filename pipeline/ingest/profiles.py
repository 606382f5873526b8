"""Which profile each hand plays (house-rules.md 1), over whole columns.

A hand's own `rules` field names it; else the first `[[tables]]` entry whose glob,
times and game fit the hand; else its game's `standard`. Globs are matched once per
distinct table id (and remembered across blocks), never per hand; the times and games
are compared as arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.core.rules import GAMES, STANDARD, RuleBook, TableEntry
from pipeline.helpers.columns import ints, is_null, utc_micros, whole
from pipeline.ingest.house_rules import table_fits

Ints = npt.NDArray[np.int64]
Flags = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class Resolved:
    """Each hand's profile code (its game's standard where it failed), and why a hand's
    profile cannot be used, for the hands whose cannot (few)."""

    profile: Ints
    failed: Flags
    why: dict[int, str]


def resolve(table: pa.Table, book: RuleBook) -> Resolved:
    """The profile of every hand of `table` (records that passed the schema)."""
    n = table.num_rows
    game = ints(pc.index_in(whole(table["variant"]), value_set=pa.array([g.name for g in GAMES])))
    profile = game.copy()
    why: dict[int, str] = {}
    named = whole(table["rules"]) if "rules" in table.column_names else pa.nulls(n, pa.string())
    has_name = ~is_null(named)
    if has_name.any():
        _by_name(named, has_name, game, book, profile, why)
    if book.tables and (~has_name).any():
        _by_table(table, ~has_name, game, book, profile)
    failed = np.zeros(n, dtype=bool)
    failed[list(why)] = True
    return Resolved(profile, failed, why)


def _by_name(
    named: pa.Array,
    has_name: Flags,
    game: Ints,
    book: RuleBook,
    profile: Ints,
    why: dict[int, str],
) -> None:
    """Hands that name their profile: it must be one of the file, of the hand's game."""
    house = book.house
    index = ints(pc.index_in(named, value_set=pa.array([p.name for p in house], pa.string())), -1)
    standard = pc.fill_null(pc.equal(named, STANDARD), False).to_numpy(zero_copy_only=False)
    found = has_name & (index >= 0)
    code = np.where(found, len(GAMES) + index, game)
    of_game = np.array([p.game for p in book.profiles])[code] == game
    profile[found & of_game] = code[found & of_game]
    for i in np.flatnonzero(has_name & ~standard & ~(found & of_game)):
        name = named[int(i)].as_py()
        if index[i] < 0:
            held = (
                f"which the rules file {book.source} does not hold"
                if book.source
                else "but no rules file was given (--rules)"
            )
            why[int(i)] = f"rules: the hand names profile {name!r}, {held}"
        else:
            why[int(i)] = (
                f"rules: the hand names profile {name}, of the game "
                f"{house[index[i]].variant.name}, but is a hand of {GAMES[game[i]].name}"
            )


def _by_table(table: pa.Table, rest: Flags, game: Ints, book: RuleBook, profile: Ints) -> None:
    """Hands that name none: the first entry that fits their table, time and game."""
    tables = whole(table["table_id"])
    distinct = pc.unique(tables)
    fits = np.array([_fitting(book.tables, t) for t in distinct.to_pylist()], dtype=bool)
    fits = fits.reshape(len(distinct), len(book.tables))[
        ints(pc.index_in(tables, value_set=distinct))
    ]
    started = utc_micros(whole(table["started_at"]))[0]
    never, always = np.iinfo(np.int64).min, np.iinfo(np.int64).max
    start = np.array([never if e.start is None else e.start for e in book.tables])
    end = np.array([always if e.end is None else e.end for e in book.tables])
    fits &= (started[:, None] >= start) & (started[:, None] < end)
    entry_code = np.array([book.house_code(e.profile) or 0 for e in book.tables])  # standard: 0
    entry_game = np.array([p.game for p in book.profiles])[entry_code]
    standard = np.array([e.profile == STANDARD for e in book.tables])
    fits &= standard | (entry_game[None, :] == game[:, None])
    first = fits.argmax(axis=1)
    chosen = rest & fits.any(axis=1)
    code = np.where(standard[first], game, entry_code[first])
    profile[chosen] = code[chosen]


@lru_cache(maxsize=1 << 16)
def _fitting(entries: tuple[TableEntry, ...], table_id: str) -> tuple[bool, ...]:
    return tuple(table_fits(e, table_id) for e in entries)
