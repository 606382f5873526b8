"""The Spark engine's tables as its tasks write them: Parquet files written with pyarrow
by the task that holds the rows, named by its unit, and committed by the driver.

A task writes below the run's staging directory, each file under a name fixed by its
unit (`Unit.label`) and table, partitioned by day where the table is (`day=YYYY-MM-DD`,
Hive's layout), through a temporary name moved into place: a retried task overwrites
its own files and never leaves a second copy. It reports the files it wrote; the driver
moves exactly those into the new `parquet/` (`commit`), so a file of a failed or
superseded attempt is never published. `hands` and `quarantine` are written first under
`pending/`: their line numbers and the table rules' verdicts are added when the whole
input has been seen (`finish_hands`, `finish_quarantine`).

Types follow the store's (`stored.COLUMNS`), widened where Spark has no such type
(unsigned integers to the next signed width, fixed-size lists to lists), so that Spark
reads the files too; the store casts them back when it loads them.
"""

from __future__ import annotations

import datetime as dt
import os
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache

import duckdb
import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from pipeline.helpers.columns import whole
from pipeline.spark.units import is_local
from pipeline.storage.stored import BY_DAY, COLUMNS

PENDING = "pending/"
# Rows of a table a task keeps before writing them as a row group.
ROW_GROUP = 1 << 17
_EPOCH = dt.date(1970, 1, 1)


def filesystem(root: str) -> tuple[pafs.FileSystem, str]:
    """The file system of a directory, and the directory's path in it."""
    if is_local(root):
        return pafs.LocalFileSystem(), os.path.abspath(root.removeprefix("file:"))
    return pafs.FileSystem.from_uri(root)


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
        con.execute(f"CREATE TABLE {name} ({COLUMNS[name]})")
        stored = con.sql(f"SELECT * FROM {name} LIMIT 0").to_arrow_table().schema
    finally:
        con.close()
    return pa.schema([pa.field(f.name, _spark_type(f.type)) for f in stored])


@cache
def file_schema(name: str) -> pa.Schema:
    """The columns of a table's files: its own, less the day of the tables written by day
    (the day is the files' directory)."""
    schema = table_schema(name)
    return schema.remove(schema.get_field_index("day")) if "day" in schema.names else schema


def conform(rows: pa.Table, schema: pa.Schema) -> pa.Table:
    """`rows` with exactly the columns of `schema`, in its order and types (a column the
    rows lack is null)."""
    columns = [
        rows[f.name].cast(f.type) if f.name in rows.column_names else pa.nulls(len(rows), f.type)
        for f in schema
    ]
    return pa.Table.from_arrays(columns, schema=schema)


def day_directory(day: int) -> str:
    return f"day={_EPOCH + dt.timedelta(days=day)}"


def by_key(rows: pa.Table, keys: npt.NDArray[np.integer]) -> Iterator[tuple[int, pa.Table]]:
    """The rows of each key (one per row), in key order, found with one sort."""
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    for start, end in zip(starts, [*starts[1:], len(order)], strict=True):
        yield int(ordered[start]), rows.take(pa.array(order[start:end]))


@dataclass(frozen=True)
class Written:
    """A file a task wrote: its table and path below the staging directory."""

    table: str
    path: str

    @property
    def pending(self) -> bool:
        return self.path.startswith(PENDING)

    @property
    def published(self) -> str:
        """Its path in the published tables (a pending file taken as it is: nothing of
        it was to change)."""
        return self.path.removeprefix(PENDING)


class UnitFiles:
    """One unit's tables, written below `root` as its task gives them, row group by
    row group, a file per table (and day)."""

    def __init__(self, root: str, label: str) -> None:
        self.fs, self.root = filesystem(root)
        self.label = label
        self._buffered: dict[tuple[str, str], list[pa.Table]] = {}
        # Per table and day: its writer, the temporary file, and the file's name.
        self._writers: dict[tuple[str, str], tuple[pq.ParquetWriter, str, str]] = {}

    def add(self, name: str, rows: pa.Table, days: pa.Array | None = None) -> None:
        """Rows of table `name`; `days` (days since 1970) where it is written by day."""
        if rows.num_rows == 0:
            return
        rows = conform(rows, file_schema(name))
        if name not in BY_DAY or days is None:
            self._buffer(name, "", rows)
            return
        keys = whole(days).cast(pa.int32()).to_numpy(zero_copy_only=False)
        for day, part in by_key(rows, keys):
            self._buffer(name, day_directory(day) + "/", part)

    def _buffer(self, name: str, folder: str, rows: pa.Table) -> None:
        key = (name, folder)
        held = self._buffered.setdefault(key, [])
        held.append(rows)
        if sum(t.num_rows for t in held) >= ROW_GROUP:
            self._write(key)

    def _write(self, key: tuple[str, str]) -> None:
        rows = pa.concat_tables(self._buffered.pop(key))
        if key not in self._writers:
            name, folder = key
            final = f"{_prefix(name)}{name}/{folder}part-{self.label}.parquet"
            temporary = f"{self.root}/{final}.{uuid.uuid4().hex}.tmp"
            self.fs.create_dir(temporary.rsplit("/", 1)[0], recursive=True)
            writer = pq.ParquetWriter(temporary, rows.schema, filesystem=self.fs)
            self._writers[key] = (writer, temporary, final)
        self._writers[key][0].write_table(rows, row_group_size=len(rows))

    def close(self) -> list[Written]:
        """Every table written whole; the files, each moved to its unit's name."""
        for key in list(self._buffered):
            self._write(key)
        written = []
        for (name, _), (writer, temporary, final) in self._writers.items():
            writer.close()
            self.fs.move(temporary, f"{self.root}/{final}")
            written.append(Written(name, final))
        return written


def _prefix(name: str) -> str:
    """Where a task first writes a table: `hands` and `quarantine` wait under `pending/`."""
    return PENDING if name in ("hands", "quarantine") else ""


def files_of(root: str, tables: Iterable[str]) -> list[Written]:
    """The Parquet files of `tables` below `root` (a task's temporary files left out)."""
    fs, base = filesystem(root)
    found = []
    for table in tables:
        selector = pafs.FileSelector(f"{base}/{table}", recursive=True, allow_not_found=True)
        for info in fs.get_file_info(selector):
            if info.type == pafs.FileType.File and info.path.endswith(".parquet"):
                found.append(Written(table, info.path.removeprefix(base + "/")))
    return found


def write_file(root: str, final: str, rows: pa.Table) -> Written:
    """One whole file below `root`, through a temporary name."""
    fs, base = filesystem(root)
    temporary = f"{base}/{final}.{uuid.uuid4().hex}.tmp"
    fs.create_dir(temporary.rsplit("/", 1)[0], recursive=True)
    pq.write_table(rows, temporary, filesystem=fs)
    fs.move(temporary, f"{base}/{final}")
    return Written(final.split("/", 1)[0], final)


def finish_hands(rows: pa.Table, name: str, first_line: int, flagged: pa.Array) -> pa.Table:
    """Hands as their task wrote them, with the lines before its unit added to their
    sources (`name:LINE`) and the hands the table rules flagged diverged."""
    if first_line > 1:
        rows = _renumbered(rows, name, first_line)
    if len(flagged):
        at = rows.schema.get_field_index("status")
        hit = pc.is_in(rows["hand_id"], value_set=flagged)
        rows = rows.set_column(at, "status", pc.if_else(hit, "diverged", rows["status"]))
    return rows


def finish_quarantine(rows: pa.Table, name: str, first_line: int) -> pa.Table:
    """Quarantine rows with the lines before their unit added to their sources, and to
    messages that begin with the source."""
    if first_line <= 1:
        return rows
    renumbered = _renumbered(rows, name, first_line)
    old, new = rows["source"].to_pylist(), renumbered["source"].to_pylist()
    messages = [
        n + m[len(o) :] if m is not None and m.startswith(o) else m
        for o, n, m in zip(old, new, rows["message"].to_pylist(), strict=True)
    ]
    at = rows.schema.get_field_index("message")
    return renumbered.set_column(at, "message", pa.array(messages, pa.string()))


def _renumbered(rows: pa.Table, name: str, first_line: int) -> pa.Table:
    """Sources `name:N` of a unit's own numbering as `name:M`, M the file's line."""
    source = rows["source"]
    numbered = pc.starts_with(source, name + ":")
    digits = pc.if_else(numbered, pc.utf8_slice_codeunits(source, len(name) + 1), "0")
    line = pc.cast(digits, pa.int64())
    shifted = pc.binary_join_element_wise(
        name + ":", pc.cast(pc.add(line, first_line - 1), pa.string()), ""
    )
    at = rows.schema.get_field_index("source")
    return rows.set_column(at, "source", pc.if_else(numbered, shifted, source))


def assemble(root: str, staging: str, files: Iterable[Written]) -> str:
    """The reported files moved from `staging` into a new directory beside `root/parquet`
    (published by `publish`); the staging directory, with what no task reported, removed."""
    fs, base = filesystem(root)
    _, staged = filesystem(staging)
    building = f"{base}/.parquet-{os.getpid()}.new"
    fs.delete_dir_contents(building, missing_dir_ok=True)
    for file in files:
        target = f"{building}/{file.published}"
        fs.create_dir(target.rsplit("/", 1)[0], recursive=True)
        fs.move(f"{staged}/{file.path}", target)
    fs.delete_dir(staged)
    return building


def publish(root: str, building: str) -> str:
    """The assembled tables as `root/parquet`, replacing the old ones at once."""
    fs, base = filesystem(root)
    target, old = f"{base}/parquet", f"{base}/.parquet-{os.getpid()}.old"
    if fs.get_file_info(target).type != pafs.FileType.NotFound:
        fs.move(target, old)
    fs.move(building, target)
    if fs.get_file_info(old).type != pafs.FileType.NotFound:
        fs.delete_dir(old)
    return target


def discard(*directories: str) -> None:
    """Directories of a failed run removed, if they are there."""
    for directory in directories:
        fs, path = filesystem(directory)
        if fs.get_file_info(path).type != pafs.FileType.NotFound:
            fs.delete_dir(path)


def export_table(
    con: duckdb.DuckDBPyConnection,
    root: str,
    name: str,
    tag: str,
    days: list[int] | None = None,
) -> None:
    """Table `name` from the database into the dataset at `root`, as the Spark engine's
    tasks write it: by the day of its hand for the tables written so (only `days`, when
    given), whole for the others; one file a directory, named by the run's `tag`."""
    schema = file_schema(name)
    if name not in BY_DAY:
        rows = con.sql(f"SELECT * FROM {name}").to_arrow_table()
        if rows.num_rows:
            write_file(root, f"{name}/part-{tag}0.parquet", conform(rows, schema))
        return
    day = "day - DATE '1970-01-01'"
    of_day = (
        f"SELECT *, {day} AS _day FROM hands"
        if name == "hands"
        else f"SELECT t.*, {day} AS _day FROM {name} t JOIN hands USING (hand_id)"
    )
    if days is None:
        days = [int(d) for (d,) in con.execute(f"SELECT DISTINCT {day} FROM hands").fetchall()]
    for each in days:  # a day's rows at a time in memory
        rows = con.sql(f"SELECT * FROM ({of_day}) WHERE _day = {each}").to_arrow_table()
        if rows.num_rows:
            final = f"{name}/{day_directory(each)}/part-{tag}0.parquet"
            write_file(root, final, conform(rows, schema))
