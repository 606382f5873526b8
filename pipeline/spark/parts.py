"""The audit's tables as rows of one Spark schema, and back.

A Spark task returns rows of one schema, but auditing a file gives rows of several
tables. Each task row is therefore a `part`: the name of its table, one struct
column per table (only its own is set), and the keys the engine shuffles and
partitions by (the file it came from, the hand's table and day). Types follow the
store's (`store.TABLES`), widened where Spark has no such type: unsigned integers
become the next signed width, fixed-size lists plain lists. The store casts them
back when it loads the Parquet.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.store import TABLES

# The tables a task emits: the audit's, and the quarantine. (`hand_values` and `runs`
# are the driver's.)
PARTS = (
    "hands",
    "players",
    "row_values",
    "family_row_values",
    "settlements",
    "sitting_out",
    "divergences",
    "player_streets",
    "quarantine",
)
# Where Spark partitions the written tables by day.
BY_DAY = ("hands", "players", "row_values", "family_row_values", "settlements")
KEYS = pa.schema(
    [
        pa.field("part", pa.string()),
        pa.field("file_no", pa.int32()),
        pa.field("block", pa.int64()),  # where in the file its task's lines start
        pa.field("table_id", pa.string()),
        pa.field("day", pa.date32()),
    ]
)


def _spark_type(kind: pa.DataType) -> pa.DataType:
    """The type Spark can hold for a store type (Spark has no unsigned or fixed lists)."""
    if pa.types.is_fixed_size_list(kind) or pa.types.is_list(kind):
        return pa.list_(_spark_type(kind.value_type))
    widened = {pa.uint8(): pa.int16(), pa.uint16(): pa.int32(), pa.uint32(): pa.int64()}
    return widened.get(kind, kind)


@cache
def table_schema(name: str) -> pa.Schema:
    """A stored table's columns as Spark's Arrow types."""
    con = duckdb.connect()
    try:
        con.execute("SET TimeZone = 'UTC'")
        con.execute(f"CREATE TABLE {name} ({TABLES[name]})")
        stored = con.sql(f"SELECT * FROM {name} LIMIT 0").to_arrow_table().schema
    finally:
        con.close()
    return pa.schema([pa.field(f.name, _spark_type(f.type)) for f in stored])


@cache
def part_schema() -> pa.Schema:
    """The schema of every row a task emits."""
    structs = [pa.field(name, pa.struct(list(table_schema(name)))) for name in PARTS]
    return pa.schema([*KEYS, *structs])


def conform(rows: pa.Table, name: str) -> pa.Table:
    """`rows` with exactly the columns of table `name`, in its order and types (a column
    the rows lack is null)."""
    schema = table_schema(name)
    columns = [
        rows[f.name].cast(f.type) if f.name in rows.column_names else pa.nulls(len(rows), f.type)
        for f in schema
    ]
    return pa.Table.from_arrays(columns, schema=schema)


@dataclass(frozen=True)
class Unit:
    """What one task audits in order: a whole file, or the lines of a file from byte
    `block` on. Units in (file_no, block) order are the input's order."""

    file_no: int
    block: int = 0


def as_part(
    name: str,
    rows: pa.Table,
    unit: Unit,
    table_id: pa.Array | pa.ChunkedArray,
    day: pa.Array | pa.ChunkedArray,
) -> pa.RecordBatch:
    """Rows of table `name` as task rows."""
    n = rows.num_rows
    table = conform(rows, name).combine_chunks()
    columns: list[pa.Array] = [
        pa.array(np.full(n, name, dtype=object), pa.string()),
        pa.array(np.full(n, unit.file_no, dtype=np.int32)),
        pa.array(np.full(n, unit.block, dtype=np.int64)),
        _whole(table_id).cast(pa.string()),
        _whole(day).cast(pa.date32()),
    ]
    for field in list(part_schema())[len(KEYS) :]:
        if field.name == name:
            arrays = [column.combine_chunks() for column in table.columns]
            columns.append(pa.StructArray.from_arrays(arrays, fields=list(field.type)))
        else:
            columns.append(pa.nulls(n, field.type))
    return pa.RecordBatch.from_arrays(columns, schema=part_schema())


def _whole(column: pa.Array | pa.ChunkedArray) -> pa.Array:
    return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column


def audit_parts(tables: dict[str, pa.Table], unit: Unit) -> Iterator[pa.RecordBatch]:
    """One audit's tables as task rows, each keyed by the table and day of its hand."""
    hands = tables["hands"]
    for name, rows in tables.items():
        if rows.num_rows == 0:
            continue
        at = pc.index_in(rows["hand_id"], value_set=hands["hand_id"])
        yield as_part(name, rows, unit, hands["table_id"].take(at), hands["day"].take(at))


def quarantine_part(rows: pa.Table, unit: Unit) -> pa.RecordBatch:
    """Quarantine rows as task rows, keyed by the table their raw JSON names, as the
    table rules read it (`checks.table`): quarantined hands take part in them."""
    con = duckdb.connect()
    try:
        con.register("quarantine", rows)
        table_id = con.sql(
            "SELECT CASE WHEN json_valid(raw) THEN json_extract_string(raw, '$.table_id') END "
            "FROM quarantine"
        ).to_arrow_table()[0]
    finally:
        con.close()
    return as_part("quarantine", rows, unit, table_id, pa.nulls(rows.num_rows, pa.date32()))


def unpart(batches: Iterable[pa.RecordBatch], names: Iterable[str]) -> dict[str, pa.Table]:
    """Task rows back into the tables `names`, each with the store's columns."""
    wanted = {name: [] for name in names}  # type: dict[str, list[pa.Table]]
    for batch in batches:
        part = batch.column(batch.schema.get_field_index("part"))
        for name, parts in wanted.items():
            mine = pc.equal(part, name)
            if not pc.any(mine).as_py():
                continue
            struct = batch.filter(mine).column(batch.schema.get_field_index(name))
            parts.append(pa.Table.from_struct_array(struct))
    return {
        name: pa.concat_tables(parts) if parts else table_schema(name).empty_table()
        for name, parts in wanted.items()
    }
