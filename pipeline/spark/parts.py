"""The audit's tables as Spark rows: whole Arrow tables in one binary column, and back.

A Spark task returns rows of one schema, but auditing a unit of input gives several
tables. Each task row is therefore a `part`: which table, where it came from (the
unit: file and block), the hand table it holds (`table_id`, for the parts the table
rules read), and the table's rows as an Arrow IPC stream. Spark moves and keeps these
few large rows without looking inside; the rows of a table are spelled out only to
be written (`explode`). Types follow the store's (`stored.COLUMNS`), widened where
Spark has no such type (unsigned integers to the next signed width, fixed-size lists
to lists); the store casts them back when it loads the Parquet.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache

import duckdb
import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.columns import is_null, whole
from pipeline.stored import BY_DAY, COLUMNS, FROM_INPUT

# The tables a task emits: the audit's, and the quarantine. (`hand_values` and `runs`
# are the driver's.)
PARTS = FROM_INPUT
# The tables the table rules read, sent again split by hand table ("rules:NAME" parts).
RULE_INPUTS = ("hands", "players", "quarantine")
RULES = "rules:"
# The parts that carry their rows' hand ids beside the payload.
WITH_IDS = ("hands", "quarantine")
PART = pa.schema(
    [
        pa.field("part", pa.string()),
        pa.field("file_no", pa.int32()),
        pa.field("block", pa.int64()),  # where in the file its task's lines start
        # What Spark gathers the part by: its day (days since 1970) in the tables written
        # by day, the bucket of its hand tables in the "rules:" parts.
        pa.field("key", pa.int32()),
        pa.field("rows", pa.int64()),
        # The hand ids of the rows, for the hands and quarantine parts: Spark finds
        # repeated hands among them without opening the payloads.
        pa.field("hand_ids", pa.list_(pa.string())),
        pa.field("payload", pa.binary()),
    ]
)


@dataclass(frozen=True)
class Unit:
    """What one task audits in order: a whole file, or the lines of a file from byte
    `block` on. Units in (file_no, block) order are the input's order."""

    file_no: int
    block: int = 0


def _spark_type(kind: pa.DataType) -> pa.DataType:
    """The type Spark can hold for a store type (Spark has no unsigned or fixed lists)."""
    if pa.types.is_fixed_size_list(kind) or pa.types.is_list(kind):
        return pa.list_(_spark_type(kind.value_type))
    widened = {pa.uint8(): pa.int16(), pa.uint16(): pa.int32(), pa.uint32(): pa.int64()}
    return widened.get(kind, kind)


@cache
def table_schema(name: str, with_day: bool = False) -> pa.Schema:
    """A stored table's columns as Spark's Arrow types (`with_day`: and its hand's day,
    for the tables partitioned by day that lack one)."""
    con = duckdb.connect()
    try:
        con.execute("SET TimeZone = 'UTC'")
        con.execute(f"CREATE TABLE {name} ({COLUMNS[name]})")
        stored = con.sql(f"SELECT * FROM {name} LIMIT 0").to_arrow_table().schema
    finally:
        con.close()
    fields = [pa.field(f.name, _spark_type(f.type)) for f in stored]
    if with_day and "day" not in stored.names:
        fields.append(pa.field("day", pa.date32()))
    return pa.schema(fields)


def written_schema(name: str) -> pa.Schema:
    """The columns Spark writes of a table: the day too where it is partitioned by day."""
    return table_schema(name, with_day=name in BY_DAY)


def conform(rows: pa.Table, schema: pa.Schema) -> pa.Table:
    """`rows` with exactly the columns of `schema`, in its order and types (a column the
    rows lack is null)."""
    columns = [
        rows[f.name].cast(f.type) if f.name in rows.column_names else pa.nulls(len(rows), f.type)
        for f in schema
    ]
    return pa.Table.from_arrays(columns, schema=schema)


def to_payload(rows: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, rows.schema) as stream:
        stream.write_table(rows)
    return bytes(sink.getvalue())


def from_payload(payload: bytes) -> pa.Table:
    return pa.ipc.open_stream(payload).read_all()


def _part(name: str, unit: Unit, rows: pa.Table, key: int | None = None) -> pa.RecordBatch:
    ids = None
    if name in WITH_IDS:
        values = whole(rows["hand_id"]).cast(pa.string())
        ids = pa.ListArray.from_arrays(pa.array([0, len(values)], pa.int32()), values)
    columns = [
        pa.array([name], pa.string()),
        pa.array([unit.file_no], pa.int32()),
        pa.array([unit.block], pa.int64()),
        pa.array([key], pa.int32()),
        pa.array([rows.num_rows], pa.int64()),
        ids if ids is not None else pa.nulls(1, pa.list_(pa.string())),
        pa.array([to_payload(rows)], pa.binary()),
    ]
    return pa.RecordBatch.from_arrays(columns, schema=PART)


def buckets(table_id: pa.Array, n: int) -> npt.NDArray[np.int32]:
    """Each row's bucket of hand tables: the same table lands in the same of `n` buckets
    in every task (a stable hash of its id, not Python's salted one)."""
    encoded = pc.dictionary_encode(table_id.cast(pa.string()))
    ids = encoded.dictionary.to_pylist()
    of_id = np.array([zlib.crc32(str(i).encode()) % n for i in ids], dtype=np.int32)
    return of_id[encoded.indices.fill_null(0).to_numpy(zero_copy_only=False)]


def _runs(keys: npt.NDArray[np.int32], rows: pa.Table) -> Iterator[tuple[int, pa.Table]]:
    """The rows of each key (rows whose key is negative left out), sorted once."""
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    starts = np.flatnonzero(np.diff(sorted_keys, prepend=-2))
    ends = [*starts[1:], len(order)]
    for start, end in zip(starts, ends, strict=True):
        if sorted_keys[start] >= 0:
            yield int(sorted_keys[start]), rows.take(pa.array(order[start:end]))


def parts_of(
    name: str, rows: pa.Table, unit: Unit, table_id: pa.Array, n_buckets: int
) -> Iterator[pa.RecordBatch]:
    """A table's rows as task rows: by day where it is written by day, whole otherwise;
    and, for the tables the table rules read, again in buckets of hand tables (rows
    without a table are left out of those)."""
    if rows.num_rows == 0:
        return
    written = conform(rows, written_schema(name))
    if name in BY_DAY:
        days = whole(written["day"]).cast(pa.int32()).to_numpy(zero_copy_only=False)
        for day, part in _runs(days, written):
            yield _part(name, unit, part, day)
    else:
        yield _part(name, unit, written)
    if name in RULE_INPUTS:
        bucket = np.where(is_null(table_id), -1, buckets(table_id, n_buckets)).astype(np.int32)
        for b, part in _runs(bucket, conform(rows, table_schema(name))):
            yield _part(RULES + name, unit, part, b)


def audit_parts(
    tables: dict[str, pa.Table], unit: Unit, n_buckets: int
) -> Iterator[pa.RecordBatch]:
    """One audit's tables as task rows, each row with the table and day of its hand."""
    hands = tables["hands"]
    for name, rows in tables.items():
        at = pc.index_in(rows["hand_id"], value_set=hands["hand_id"])
        if name != "hands":
            rows = rows.append_column("day", hands["day"].take(at))
        yield from parts_of(name, rows, unit, whole(hands["table_id"].take(at)), n_buckets)


def quarantine_parts(rows: pa.Table, unit: Unit, n_buckets: int) -> Iterator[pa.RecordBatch]:
    """Quarantine rows as task rows, by the table their raw JSON names as the table
    rules read it (`checks.table`): quarantined hands take part in them."""
    con = duckdb.connect()
    try:
        con.register("quarantine", rows)
        table_id = con.sql(
            "SELECT CASE WHEN json_valid(raw) THEN json_extract_string(raw, '$.table_id') END "
            "FROM quarantine"
        ).to_arrow_table()[0]
    finally:
        con.close()
    yield from parts_of("quarantine", rows, unit, whole(table_id), n_buckets)


def tables_of(batches: Iterable[pa.RecordBatch]) -> dict[str, pa.Table]:
    """Task rows back into tables, by part."""
    found: dict[str, list[pa.Table]] = {}
    for batch in batches:
        names = batch.column("part").to_pylist()
        for name, payload in zip(names, batch.column("payload").to_pylist(), strict=True):
            found.setdefault(name, []).append(from_payload(payload))
    return {name: pa.concat_tables(parts) for name, parts in found.items()}


def explode(
    batches: Iterator[pa.RecordBatch], name: str, diverged: frozenset[str] = frozenset()
) -> Iterator[pa.RecordBatch]:
    """The rows of table `name` in task rows that hold it (`written_schema`); for hands,
    those of `diverged` (flagged by the table rules) with the status "diverged"."""
    schema = written_schema(name)
    flagged = pa.array(sorted(diverged), pa.string())
    for batch in batches:
        for payload in batch.column("payload").to_pylist():
            rows = conform(from_payload(payload), schema)
            if diverged:
                hit = pc.is_in(rows["hand_id"], value_set=flagged)
                status = pc.if_else(hit, "diverged", rows["status"])
                rows = rows.set_column(schema.get_field_index("status"), "status", status)
            yield from rows.to_batches()
