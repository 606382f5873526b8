"""What Spark's executors run: the local engine's own ingest, audit and table rules.

`audit_files` reads whole input files (Spark's `binaryFile` rows) and `audit_lines`
blocks of JSON Lines (Spark's text rows) through the same readers, validation and
`audit_batch` as `handaudit verify`, and `table_rules` runs
the same SQL of `checks.table` over the hands of whole tables. Both take and give
Arrow batches, for `mapInArrow`.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Mapping
from itertools import pairwise
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.checks.table import QUARANTINE_APPEARANCES, check_table_rules
from pipeline.ingest.sources import FilePart, numbered_line_blocks, read_blocks
from pipeline.parallel import audit_blocks
from pipeline.spark.inputs import InputFile, file_key
from pipeline.spark.parts import (
    RULE_INPUTS,
    RULES,
    Unit,
    audit_parts,
    conform,
    quarantine_parts,
    tables_of,
    written_schema,
)
from pipeline.stages import NO_STAGES
from pipeline.store import insert_rows, quarantine_table
from pipeline.stored import COLUMNS
from pipeline.table_cache import cached_tables

# Per unit (file number, block), the hand ids verified in earlier units: given when a
# unit is audited again because it repeats one of them.
Seen = Mapping[tuple[int, int], frozenset[str]]


def audit_files(
    batches: Iterator[pa.RecordBatch],
    files: Mapping[str, InputFile],
    seen: Seen,
    n_buckets: int,
) -> Iterator[pa.RecordBatch]:
    """Whole files (Spark's `binaryFile` rows: path, content) audited as `verify`
    audits them, as task rows (`parts.audit_parts`). `files` by Spark's path."""
    pa.set_cpu_count(1)  # one task a core: Arrow's readers need no threads of their own
    with tempfile.TemporaryDirectory(prefix="handaudit-") as scratch, cached_tables():
        for batch in batches:
            paths, contents = batch.column("path").to_pylist(), batch.column("content")
            for i, path in enumerate(paths):
                file = files[file_key(path)]
                copy = Path(scratch) / f"{file.number}-{Path(file.name).name}"
                copy.write_bytes(contents[i].as_py())
                unit = Unit(file.number)
                yield from _audit(read_blocks(copy, file.name), unit, seen, n_buckets)
                copy.unlink()


def audit_lines(
    batches: Iterator[pa.RecordBatch],
    files: Mapping[str, InputFile],
    first_lines: Mapping[tuple[str, int], int],
    seen: Seen,
    n_buckets: int,
) -> Iterator[pa.RecordBatch]:
    """Lines of JSON Lines files (Spark's text rows: line, path, block) audited as
    `verify` audits them, as task rows, a unit per block. `first_lines`: the number of
    the first line of each (path, block)."""
    pa.set_cpu_count(1)
    with cached_tables():
        for (spelled, block), lines in _blocks_of_lines(batches):
            path = file_key(spelled, escaped=True)
            file, unit = files[path], Unit(files[path].number, block)
            numbered = numbered_line_blocks(file.name, first_lines[path, block], lines)
            yield from _audit(numbered, unit, seen, n_buckets)


def _blocks_of_lines(
    batches: Iterator[pa.RecordBatch],
) -> Iterator[tuple[tuple[str, int], list[bytes]]]:
    """The lines of each (path, block) in a task's rows, which come block after block."""
    key: tuple[str, int] | None = None
    lines: list[bytes] = []
    for batch in batches:
        paths = pc.dictionary_encode(batch.column("path")).indices.to_numpy()
        blocks = batch.column("block").to_numpy()
        changes = np.flatnonzero((paths[1:] != paths[:-1]) | (blocks[1:] != blocks[:-1])) + 1
        values = batch.column("line").to_pylist()
        for a, b in pairwise([0, *changes.tolist(), batch.num_rows]):
            if a == b:
                continue
            here = (batch.column("path")[a].as_py(), int(blocks[a]))
            if here != key and key is not None:
                yield key, lines
                lines = []
            key = here
            lines.extend(values[a:b])
    if key is not None:
        yield key, lines


def _audit(
    blocks: Iterator[FilePart], unit: Unit, seen: Seen, n_buckets: int
) -> Iterator[pa.RecordBatch]:
    before = set(seen.get((unit.file_no, unit.block), ()))
    for audited in audit_blocks(blocks, 1, NO_STAGES, seen=before):
        for audit in audited.audits:
            yield from audit_parts(audit.tables(), unit, n_buckets)
        if audited.rejects:
            yield from quarantine_parts(quarantine_table(audited.rejects), unit, n_buckets)


class _MemoryStore:
    """The store's tables in memory, for `check_table_rules` over some tables' hands."""

    def __init__(self, tables: Mapping[str, pa.Table]) -> None:
        self.con = duckdb.connect(config={"threads": 1})
        self.con.execute("SET TimeZone = 'UTC'")
        for name in (*RULE_INPUTS, "divergences", "quarantine_appearances"):
            self.con.execute(f"CREATE TABLE {name} ({COLUMNS[name]})")
        for name, rows in tables.items():
            insert_rows(self.con, name, rows)
        self.con.execute(QUARANTINE_APPEARANCES.format(source="quarantine"))

    def query(self, sql: str, *params: object) -> list[tuple[Any, ...]]:
        return self.con.execute(sql, list(params)).fetchall()


def table_rules(
    batches: Iterator[pa.RecordBatch], verified_elsewhere: frozenset[str]
) -> Iterator[pa.RecordBatch]:
    """The table rules' divergences over the "rules:" parts of whole hand tables.

    `verified_elsewhere`: quarantined hand ids verified in another hand table, which
    the rules leave out as they leave out every verified one.
    """
    tables = {name.removeprefix(RULES): rows for name, rows in tables_of(batches).items()}
    quarantined = tables.get("quarantine")
    if quarantined is not None and verified_elsewhere:
        ids = pa.array(sorted(verified_elsewhere), pa.string())
        tables["quarantine"] = quarantined.filter(
            pc.invert(pc.is_in(quarantined["hand_id"], value_set=ids))
        )
    store = _MemoryStore(tables)
    try:
        check_table_rules(store)
        found = store.con.sql("SELECT * FROM divergences").to_arrow_table()
    finally:
        store.con.close()
    yield from conform(found, written_schema("divergences")).to_batches()
