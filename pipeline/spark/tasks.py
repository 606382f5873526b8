"""What Spark's executors run: the local engine's own reader, audit and table rules, on
one unit of input or one bucket of hand tables at a time (no pyspark here).

- `audit_units`: a unit read and audited exactly as `handaudit verify` would audit it
  if nothing came before it; its tables written by the task (`written.UnitFiles`). It
  gives back a small summary, the slim columns the table rules read (by bucket of hand
  tables), and its hand ids (by bucket of ids).
- `find_repeats`: among the ids of one bucket, the hands verified by two units, and
  the quarantined records whose hand was verified.
- `judge_tables`: the table rules (`storage.table_rules`, the local engine's SQL) over the
  hands of whole tables; their findings written, the hands they flag given back.
- `finish_units`: a unit's hands and quarantine completed (line numbers, verdicts).

A unit's outputs are (key, (kind, unit, value)) pairs, for Spark to gather by key: its
rule rows and ids by bucket (0 to buckets - 1), as Arrow IPC streams (LZ4), and its
summary under the key `buckets`. `gather_outputs` then runs on each key's outputs.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline.core.rules import CONTRACT
from pipeline.engine.parallel import AuditedBlock, audit_blocks
from pipeline.engine.table_cache import cached_tables
from pipeline.helpers.columns import whole
from pipeline.helpers.stages import NO_STAGES
from pipeline.ingest import Accounting
from pipeline.spark.units import Unit, UnitReader
from pipeline.spark.written import (
    UnitFiles,
    Written,
    by_key,
    conform,
    file_schema,
    filesystem,
    finish_hands,
    finish_quarantine,
    write_file,
)
from pipeline.storage.profiles import profile_rows
from pipeline.storage.store import insert_rows, quarantine_table
from pipeline.storage.stored import COLUMNS
from pipeline.storage.table_rules import FIRST_HANDS, QUARANTINE_APPEARANCES, check_table_rules

# What the table rules read of the stored tables (tests/spark checks that it is enough:
# the rules run on tables of these columns alone).
RULE_COLUMNS = {
    "hands": (
        "hand_id",
        "table_id",
        "hand_no",
        "started_at",
        "point_value",
        "variant",
        "status",
        "rules",
    ),
    # (and each hand's unit, `_unit`, for the driver to know which units they flag)
    "players": (
        "hand_id",
        "seat",
        "player_id",
        "stack_start",
        "add_on",
        "recorded_stack_end",
        "timed_out",
        "fantasyland",
        "fantasyland_next",
        "fantasyland_cards",
        "cards_dealt",
    ),
    "quarantine_appearances": (),  # all of them
}
_VERIFIED, _APPEARED = 0, 1  # the kinds of hand ids a unit gives


@dataclass
class UnitSummary:
    """What a unit's task tells the driver: counts and sums, never its hands."""

    unit: int
    accounting: Accounting = field(default_factory=Accounting)
    lines: int = 0  # the lines its range owns (the next range's numbers follow them)
    divergences: dict[str, int] = field(default_factory=dict)
    hands_diverged: int = 0  # by the audit of each hand (the table rules' come after)
    rake_total: Decimal = Decimal(0)
    recorded_rake_total: Decimal = Decimal(0)
    # Per hand table, the unit's first verified hand: (hand_no, hand_id, its players).
    first_hands: dict[str, tuple[int, str, int]] = field(default_factory=dict)
    files: list[Written] = field(default_factory=list)


def to_payload(rows: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    options = pa.ipc.IpcWriteOptions(compression="lz4")
    with pa.ipc.new_stream(sink, rows.schema, options=options) as stream:
        stream.write_table(rows)
    return bytes(sink.getvalue())


def from_payload(payload: bytes) -> pa.Table:
    return pa.ipc.open_stream(payload).read_all()


Output = tuple[int, tuple[str, int, Any]]


def audit_units(
    units: Iterable[Unit], staging: str, seen: Mapping[int, frozenset[str]], buckets: int
) -> Iterator[Output]:
    """Each unit audited and written; `seen`: per unit, the hand ids verified before it
    that it holds (given when it is audited again)."""
    pa.set_cpu_count(1)  # one task a core: Arrow's readers need no threads of their own
    with cached_tables():
        for unit in units:
            yield from _audit_unit(unit, staging, seen.get(unit.number, frozenset()), buckets)


def _audit_unit(unit: Unit, staging: str, seen: frozenset[str], buckets: int) -> Iterator[Output]:
    # Audited again, a unit writes files of new names: the first audit's, which the
    # driver may have loaded already, are then known to be stale by their names alone.
    files = UnitFiles(staging, f"{unit.label}-again" if seen else unit.label)
    summary = UnitSummary(unit.number)
    slim: dict[str, list[pa.Table]] = {"hands": [], "players": [], "quarantine": []}
    reader = UnitReader(unit)
    for audited in audit_blocks(reader.blocks(), 1, NO_STAGES, seen=set(seen)):
        summary.accounting.add(audited.verified, audited.rejects)
        _write_block(audited, files, summary, slim)
    summary.lines = reader.lines
    summary.files = files.close()
    con = duckdb.connect(config={"threads": 1})
    try:
        rules = _rule_inputs(con, slim, unit.number)
        summary.first_hands = _first_hands(con)
        yield buckets, ("summary", unit.number, summary)
        for bucket, rows in _by_bucket(rules, buckets, con):
            yield bucket, ("rules", unit.number, rows)
        for bucket, ids in _ids(con, unit.number, buckets):
            yield bucket, ("ids", unit.number, ids)
    finally:
        con.close()


def _write_block(
    audited: AuditedBlock,
    files: UnitFiles,
    summary: UnitSummary,
    slim: dict[str, list[pa.Table]],
) -> None:
    for audit in audited.audits:
        tables = audit.tables()
        hands = tables["hands"]
        for name, rows in tables.items():
            days = hands["day"]
            if name != "hands":  # the day of each row's hand
                days = days.take(pc.index_in(rows["hand_id"], value_set=hands["hand_id"]))
            files.add(name, rows, days)
        for name in ("hands", "players"):
            rows = tables[name]
            slim[name].append(
                rows.select([c for c in RULE_COLUMNS[name] if c in rows.schema.names])
            )
        for counted in pc.value_counts(tables["divergences"]["check"]).to_pylist():
            check, n = counted["values"], counted["counts"]
            summary.divergences[check] = summary.divergences.get(check, 0) + n
        summary.hands_diverged += pc.sum(pc.equal(hands["status"], "diverged")).as_py() or 0
        summary.rake_total += pc.sum(hands["rake_total"]).as_py() or 0
        summary.recorded_rake_total += pc.sum(hands["recorded_rake_total"]).as_py() or 0
    if audited.rejects:
        quarantined = quarantine_table(audited.rejects)
        files.add("quarantine", quarantined)
        slim["quarantine"].append(quarantined)


def _table(con: duckdb.DuckDBPyConnection, name: str, parts: list[pa.Table]) -> None:
    """`parts` as table `name` of `con`, of the stored columns, empty when none (one
    insert a part: the games' audits give a column in types of their own, such as ids
    dictionary-encoded or not, which DuckDB casts alike)."""
    con.execute(f"CREATE TABLE {name} ({COLUMNS[name]})")
    for part in parts:
        insert_rows(con, name, part)


def _rule_inputs(
    con: duckdb.DuckDBPyConnection, slim: dict[str, list[pa.Table]], unit: int
) -> dict[str, pa.Table]:
    """The unit's slim tables for the table rules, each row with its hand table's id
    (and each hand with its unit)."""
    for name in ("hands", "players", "quarantine"):
        _table(con, name, slim[name])
    con.execute(f"CREATE TABLE quarantine_appearances ({COLUMNS['quarantine_appearances']})")
    con.execute(QUARANTINE_APPEARANCES.format(source="quarantine"))
    hands = ", ".join(f'h."{c}"' for c in RULE_COLUMNS["hands"])
    players = ", ".join(f'p."{c}"' for c in RULE_COLUMNS["players"])
    return {
        "hands": con.sql(
            f"SELECT {hands}, {unit} AS _unit, h.table_id AS _table FROM hands h"
        ).to_arrow_table(),
        "players": con.sql(
            f"SELECT {players}, h.table_id AS _table FROM players p JOIN hands h USING (hand_id)"
        ).to_arrow_table(),
        "quarantine_appearances": con.sql(
            "SELECT *, table_id AS _table FROM quarantine_appearances"
        ).to_arrow_table(),
    }


def _first_hands(con: duckdb.DuckDBPyConnection) -> dict[str, tuple[int, str, int]]:
    """Per hand table, the unit's first verified hand (`storage.table_rules.FIRST_HANDS`), with
    its players."""
    found = con.execute(
        "SELECT h.table_id, h.hand_no, h.hand_id, count(p.seat) "
        "FROM hands h LEFT JOIN players p USING (hand_id) "
        f"WHERE h.hand_id IN ({FIRST_HANDS.format(where='TRUE')}) GROUP BY ALL"
    ).fetchall()
    return {table: (hand_no, hand_id, players) for table, hand_no, hand_id, players in found}


def _key_buckets(
    con: duckdb.DuckDBPyConnection, keys: pa.Array, buckets: int
) -> np.ndarray[Any, np.dtype[np.int64]]:
    """Each key's bucket of `buckets`: the same key lands in the same bucket in every task
    (DuckDB's hash, the same on every executor)."""
    con.register("keys_", pa.table({"k": keys}))
    try:
        found = con.sql(f"SELECT hash(k) % {buckets} FROM keys_").to_arrow_table()[0]
    finally:
        con.unregister("keys_")
    return whole(found).cast(pa.int64()).to_numpy(zero_copy_only=False)


def _by_bucket(
    tables: dict[str, pa.Table], buckets: int, con: duckdb.DuckDBPyConnection
) -> Iterator[tuple[int, tuple[str, bytes]]]:
    """Each table's rows by the bucket of their hand table (`_table`), as payloads."""
    for name, rows in tables.items():
        if rows.num_rows == 0:
            continue
        keys = _key_buckets(con, rows["_table"], buckets)
        for bucket, part in by_key(rows.drop_columns(["_table"]), keys):
            yield bucket, (name, to_payload(part))


# The unit number of hands verified before the run (an append's audit): before every unit.
KNOWN = -1


def known_ids(ids: pa.Array, buckets: int) -> list[Output]:
    """Hand ids verified before the run, as the ids outputs of a unit before the first:
    a unit that holds one of them is audited again knowing it (`find_repeats`)."""
    if not len(ids):
        return []
    con = duckdb.connect(config={"threads": 1})
    try:
        rows = pa.table(
            {
                "hand_id": ids.cast(pa.string()),
                "kind": pa.array(np.full(len(ids), _VERIFIED, np.int8)),
                "unit": pa.array(np.full(len(ids), KNOWN, np.int32)),
            }
        )
        keys = _key_buckets(con, rows["hand_id"], buckets)
        return [(bucket, ("ids", KNOWN, to_payload(part))) for bucket, part in by_key(rows, keys)]
    finally:
        con.close()


def _ids(con: duckdb.DuckDBPyConnection, unit: int, buckets: int) -> Iterator[tuple[int, bytes]]:
    ids = con.sql(
        f"SELECT hand_id, {_VERIFIED}::TINYINT AS kind, {unit} AS unit FROM hands "
        f"UNION ALL SELECT DISTINCT hand_id, {_APPEARED}::TINYINT, {unit} "
        "FROM quarantine_appearances"
    ).to_arrow_table()
    if ids.num_rows:
        for bucket, part in by_key(ids, _key_buckets(con, ids["hand_id"], buckets)):
            yield bucket, to_payload(part)


def gather_outputs(
    key: int,
    outputs: Iterable[Output],
    staging: str,
    buckets: int,
    verified_elsewhere: frozenset[str],
    judge: bool = True,
) -> Iterator[UnitSummary | Repeats | Judged]:
    """What one key's outputs give: the units' summaries (key `buckets`), or a bucket's
    repeated ids and (`judge`) its table rules' findings."""
    if key == buckets:
        yield from (value for _, (_, _, value) in outputs)
        return
    ids: list[tuple[int, bytes]] = []
    rules: list[tuple[int, tuple[str, bytes]]] = []
    for bucket, (kind, _, value) in outputs:
        if kind == "ids":
            ids.append((bucket, value))
        else:
            rules.append((bucket, value))
    yield from find_repeats(ids)
    if judge:
        yield from judge_tables(key, rules, staging, verified_elsewhere)


@dataclass(frozen=True)
class Repeats:
    """What one bucket of ids shows: per unit, the ids verified by an earlier unit;
    and the ids of quarantined records that a unit verified."""

    again: dict[int, set[str]]
    verified_elsewhere: set[str]


def find_repeats(payloads: Iterable[tuple[int, bytes]]) -> Iterator[Repeats]:
    tables = [from_payload(payload) for _, payload in payloads]
    if not tables:
        return
    con = duckdb.connect(config={"threads": 1})
    try:
        con.register("ids", pa.concat_tables(tables))
        again: dict[int, set[str]] = {}
        for unit, hand_id in con.execute(
            f"""
            WITH v AS (SELECT hand_id, unit FROM ids WHERE kind = {_VERIFIED}),
            owners AS (SELECT hand_id, min(unit) AS owner FROM v GROUP BY 1 HAVING count(*) > 1)
            SELECT v.unit, v.hand_id FROM v JOIN owners USING (hand_id) WHERE v.unit > owner
            """
        ).fetchall():
            again.setdefault(unit, set()).add(hand_id)
        elsewhere = con.execute(
            f"SELECT DISTINCT hand_id FROM ids WHERE kind = {_APPEARED} AND hand_id IN "
            f"(SELECT hand_id FROM ids WHERE kind = {_VERIFIED})"
        ).fetchall()
    finally:
        con.close()
    yield Repeats(again, {hand_id for (hand_id,) in elsewhere})


@dataclass(frozen=True)
class Judged:
    """What the table rules found in one bucket of hand tables."""

    written: Written | None
    divergences: dict[str, int]  # by check, at verified hands
    flagged: bytes  # the verified hands they flag, as a payload of one column
    units: frozenset[int]  # the units that hold them
    newly_diverged: int  # those of them no finding of their own had diverged


def judge_tables(
    bucket: int,
    payloads: Iterable[tuple[int, tuple[str, bytes]]],
    staging: str,
    verified_elsewhere: frozenset[str],
) -> Iterator[Judged]:
    """The table rules over the slim tables of whole hand tables."""
    parts: dict[str, list[pa.Table]] = {name: [] for name in RULE_COLUMNS}
    for _, (name, payload) in payloads:
        parts[name].append(from_payload(payload))
    if not any(parts.values()):
        return
    con = duckdb.connect(config={"threads": 1})
    try:
        con.execute("SET TimeZone = 'UTC'")
        _slim_tables(con, parts, verified_elsewhere)
        con.execute("CREATE TABLE audited AS SELECT hand_id, _unit, status FROM hands")
        check_table_rules(_Store(con))
        found = con.sql("SELECT * FROM divergences").to_arrow_table()
        counts = con.execute(
            'SELECT "check", count(*) FROM divergences '
            "WHERE hand_id IN (SELECT hand_id FROM audited) GROUP BY 1"
        ).fetchall()
        con.execute(
            "CREATE TABLE flagged AS SELECT * FROM audited "
            "WHERE hand_id IN (SELECT hand_id FROM divergences)"
        )
        flagged = con.sql("SELECT hand_id FROM flagged").to_arrow_table()
        units = frozenset(
            u for (u,) in con.execute("SELECT DISTINCT _unit FROM flagged").fetchall()
        )
        newly = con.execute("SELECT count(*) FROM flagged WHERE status <> 'diverged'").fetchall()
    finally:
        con.close()
    written = None
    if found.num_rows:
        rows = conform(found, file_schema("divergences"))
        written = write_file(staging, f"divergences/part-rules-{bucket:05}.parquet", rows)
    yield Judged(written, dict(counts), to_payload(flagged), units, newly[0][0])


class _Store:
    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con

    def query(self, sql: str, *params: object) -> list[tuple[Any, ...]]:
        return self.con.execute(sql, list(params)).fetchall()


def _slim_tables(
    con: duckdb.DuckDBPyConnection,
    parts: dict[str, list[pa.Table]],
    verified_elsewhere: frozenset[str],
) -> None:
    """The tables the rules read, of the columns they read alone (a column they lack
    would be an error, not a silent NULL), and the table of their findings."""
    for name, columns in RULE_COLUMNS.items():
        con.execute(f"CREATE TEMP TABLE stored_{name} ({COLUMNS[name]})")
        kept = ", ".join(f'"{c}"' for c in columns) or "*"
        unit = ", 0 AS _unit" if name == "hands" else ""
        con.execute(f"CREATE TABLE {name} AS SELECT {kept}{unit} FROM stored_{name} LIMIT 0")
        con.execute(f"DROP TABLE stored_{name}")
        if parts[name]:
            rows = pa.concat_tables(parts[name])
            if name == "quarantine_appearances" and verified_elsewhere:
                ids = pa.array(sorted(verified_elsewhere), pa.string())
                rows = rows.filter(pc.invert(pc.is_in(rows["hand_id"], value_set=ids)))
            insert_rows(con, name, rows)
    con.execute(f"CREATE TABLE divergences ({COLUMNS['divergences']})")
    _table(con, "rule_profiles", [profile_rows(CONTRACT)])


def finish_units(
    units: Iterable[tuple[Unit, int, list[Written]]], staging: str, flagged: pa.Array
) -> Iterator[list[Written]]:
    """Each unit's pending hands and quarantine with their lines numbered in the file
    (its first line given) and the table rules' verdicts, in their final place."""
    fs, root = filesystem(staging)
    for unit, first_line, pending in units:
        written = []
        for file in pending:
            rows = pq.read_table(f"{root}/{file.path}", filesystem=fs)
            if file.table == "hands":
                rows = finish_hands(rows, unit.file.name, first_line, flagged)
            else:
                rows = finish_quarantine(rows, unit.file.name, first_line)
            written.append(write_file(staging, file.published, rows))
        yield written
