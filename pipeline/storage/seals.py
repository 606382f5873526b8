"""The audit sealed: a digest of every stored table, and a chain of runs over them.

A table's rows are read in their stored order and cut into segments of SEGMENT_ROWS;
each segment's digest is the SHA-256 of its columns' values in a canonical byte form
(`_feed`: lengths, validity, values, with nothing of how Arrow or DuckDB happen to lay
them out), and the table's digest that of its column names, row count and segment
digests. `seals` keeps every segment's digest, so that `check` can say where a table
was altered, and `runs` keeps each run's table digests and the digest of the run before
it (`chain.py`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

# Rows per segment, for `check` to say where a table was altered: each segment costs
# Arrow's steps per column (1,227 segments of 4,096 rows of `players` took 1.36 s to
# digest, 41 of 122,880 rows 0.88 s, on an audit of 1.1 million hands).
SEGMENT_ROWS = 16_384
# Rows read from DuckDB at a time.
READ_ROWS = 8 * SEGMENT_ROWS
# The tables not sealed: the chain's own (each runs row is sealed by its chain digest).
UNSEALED = ("runs", "seals")


@dataclass(frozen=True)
class Segment:
    table: str
    segment: int
    rows: int
    digest: str


def sealed_tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The audit's tables to seal, by name."""
    rows = con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() "
        "AND schema_name = 'main' AND NOT temporary ORDER BY table_name"
    ).fetchall()
    return [name for (name,) in rows if name not in UNSEALED]


def segments(con: duckdb.DuckDBPyConnection, table: str, first: int = 0) -> Iterator[Segment]:
    """The digests of a table's segments from segment `first` on, in stored order (read
    READ_ROWS at a time: DuckDB reads on its own threads). Digesting them on threads of
    their own did not pay: Arrow's small steps hold the GIL."""
    relation = con.sql(f'SELECT * FROM "{table}" OFFSET {first * SEGMENT_ROWS}')
    reader = relation.to_arrow_reader(READ_ROWS)
    number, pending = first, pa.Table.from_batches([], reader.schema)
    for batch in reader:
        pending = pa.concat_tables([pending, pa.Table.from_batches([batch])])
        while pending.num_rows >= SEGMENT_ROWS:
            yield segment_digest(table, number, pending.slice(0, SEGMENT_ROWS))
            pending, number = pending.slice(SEGMENT_ROWS), number + 1
    if pending.num_rows or number == first == 0:
        yield segment_digest(table, number, pending)


def segment_digest(table: str, number: int, rows: pa.Table) -> Segment:
    sha = hashlib.sha256()
    sha.update(rows.num_rows.to_bytes(8, "little"))
    for column in rows.columns:
        _feed(sha, column.combine_chunks())
    return Segment(table, number, rows.num_rows, sha.hexdigest())


def table_digest(table: str, columns: list[str], parts: list[Segment]) -> str:
    """A table's digest: its name, its columns' names, and its segments in order."""
    text = json.dumps([table, columns, [[s.rows, s.digest] for s in parts]], separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _feed(sha: hashlib._Hash, values: pa.Array) -> None:
    """An array's values into `sha`, in a form that depends on the values alone: its
    length, which are null (if any are), then per kind of value its bytes."""
    kind = values.type
    if pa.types.is_dictionary(kind):
        values, kind = values.dictionary_decode(), kind.value_type
    n = len(values)
    sha.update(b"%d:%d;" % (n, values.null_count))
    if values.null_count:
        sha.update(np.packbits(values.is_valid().to_numpy(zero_copy_only=False)).tobytes())
    if pa.types.is_struct(kind):
        for child in values.flatten():
            _feed(sha, child)
    elif pa.types.is_list(kind) or pa.types.is_large_list(kind):
        offsets = values.offsets.to_numpy().astype(np.int64)
        sha.update((offsets - offsets[0]).tobytes())
        _feed(sha, values.values.slice(int(offsets[0]), int(offsets[-1] - offsets[0])))
    elif pa.types.is_fixed_size_list(kind):
        _feed(sha, values.flatten())
    elif pa.types.is_null(kind) or n == values.null_count:
        pass  # no values
    elif pa.types.is_string(kind) or pa.types.is_large_string(kind) or str(kind) == "string_view":
        _feed_bytes(sha, pc.fill_null(values, "").cast(pa.large_string()))
    elif pa.types.is_binary(kind) or pa.types.is_large_binary(kind) or str(kind) == "binary_view":
        _feed_bytes(sha, pc.fill_null(values, b"").cast(pa.large_binary()))
    elif pa.types.is_boolean(kind):
        sha.update(pc.fill_null(values, False).to_numpy(zero_copy_only=False).tobytes())
    else:  # numbers, decimals, dates and times: the fixed-width bytes of those not null
        present = values.filter(values.is_valid()) if values.null_count else values
        width = kind.bit_width // 8
        data = memoryview(present.buffers()[1])
        sha.update(data[present.offset * width : (present.offset + len(present)) * width])


def _feed_bytes(sha: hashlib._Hash, texts: pa.Array) -> None:
    """Variable-length values: their lengths from 0, then their bytes."""
    at = texts.offset
    offsets = np.frombuffer(texts.buffers()[1], np.int64)[at : at + len(texts) + 1]
    sha.update((offsets - offsets[0]).tobytes())
    sha.update(memoryview(texts.buffers()[2] or b"")[int(offsets[0]) : int(offsets[-1])])
