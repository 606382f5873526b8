"""The house-rules profiles an audit keeps (house-rules.md 3), and the rule book an append
reads back from them."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import duckdb
import pyarrow as pa

from pipeline.core.rules import GAMES, Profile, RuleBook, TableEntry, micros, standard_profiles
from pipeline.storage.ledger import LedgerError


def profile_rows(book: RuleBook) -> pa.Table:
    """One row per profile of `book` (each game's standard included)."""
    profiles = book.profiles
    return pa.table(
        {
            "name": [p.name for p in profiles],
            "game": [p.variant.name for p in profiles],
            "values": [json.dumps(p.values, sort_keys=True) for p in profiles],
            "digest": [p.digest for p in profiles],
            "floor_points": pa.array(book.floor_points, pa.int64()),
        }
    )


def table_rows(book: RuleBook) -> pa.Table:
    """The rules file's map of tables to profiles, in its order."""

    def when(micros: int | None) -> datetime | None:
        return None if micros is None else datetime.fromtimestamp(micros / 1e6, UTC)

    entries = book.tables
    return pa.table(
        {
            "entry": pa.array(range(1, len(entries) + 1), pa.int64()),
            "match": pa.array([e.match for e in entries], pa.string()),
            "profile": pa.array([e.profile for e in entries], pa.string()),
            "from": pa.array([when(e.start) for e in entries], pa.timestamp("us", tz="UTC")),
            "until": pa.array([when(e.end) for e in entries], pa.timestamp("us", tz="UTC")),
        }
    )


def stored_book(con: duckdb.DuckDBPyConnection, source: str) -> RuleBook:
    """The rule book an audit was written under (its profiles and map of tables)."""
    codes = {g.name: code for code, g in enumerate(GAMES)}
    house = tuple(
        Profile(name, codes[game], json.loads(values))
        for name, game, values in con.execute(
            "SELECT name, game, \"values\" FROM rule_profiles WHERE name <> 'standard' "
            "ORDER BY rowid"
        ).fetchall()
    )
    entries = tuple(
        TableEntry(match, profile, micros(start), micros(end))
        for match, profile, start, end in con.execute(
            'SELECT "match", profile, "from", until FROM rule_tables ORDER BY entry'
        ).fetchall()
    )
    return RuleBook(standard_profiles() + house, entries, source if house else None)


def merged_book(stored: RuleBook, given: RuleBook, used: set[str]) -> RuleBook:
    """The rules of an append given a rules file: the audit's profiles, of which the file
    may not change one its hands were audited under (`used`), then the file's new or
    changed ones; the file's map of tables (house-rules.md 3)."""
    changed = set()
    for profile in given.house:
        kept = stored.named(profile.name)
        if kept is not None and kept.digest != profile.digest:
            if profile.name in used:
                raise LedgerError(
                    f"The rules file {given.source} changes profile {profile.name}, which "
                    "hands of the audit were audited under: give the changed rules a new "
                    "name, and map the tables to it from the time it began."
                )
            changed.add(profile.name)
    kept_ones = tuple(p for p in stored.profiles if p.name not in changed)
    new = tuple(p for p in given.house if stored.named(p.name) is None or p.name in changed)
    return RuleBook(kept_ones + new, given.tables, given.source)
