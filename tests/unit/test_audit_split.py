"""The per-hand audit is a function of each hand alone: splitting a batch changes no row.

That is what lets batches run in parallel (and, later, on a distributed engine
batch by batch): the audit of a batch split in two, either as two halves or as
every other hand, must hold exactly the rows of the audit of the whole.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from pipeline.core.audit import audit_batch
from pipeline.ingest.decode import decode_lines, readable_hand_id
from pipeline.ingest.parts import LinesBlock
from pipeline.ingest.validate import validate
from tests.conftest import EXAMPLES, ROOT


def _lines(path: Path) -> list[bytes]:
    opener: Any = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as f:
        lines = [line.rstrip(b"\n") for line in f if line.strip()]
    # A repeated hand id is audited once, its first copy: which copy is first depends on
    # the split, not on the per-hand function, so repeats are left out here.
    seen: set[str] = set()
    kept = []
    for line in lines:
        hand_id = readable_hand_id(line)
        if hand_id not in seen:
            kept.append(line)
        if hand_id is not None:
            seen.add(hand_id)
    return kept


def _audit(lines: list[bytes], numbers: list[int]) -> dict[str, pa.Table]:
    """Every result table of the lines' batches (one a layout), by the name it is stored as."""
    decoded = decode_lines(LinesBlock("hands.jsonl", numbers, lines))
    batches, _ = validate(decoded, set())
    parts: dict[str, list[pa.Table]] = {}
    for audit in (audit_batch(batch) for batch in batches):
        for name, table in audit.tables().items():
            parts.setdefault(name, []).append(table)
    return {name: pa.concat_tables(tables) for name, tables in parts.items()}


def _plain(table: pa.Table) -> pa.Table:
    """The same values with dictionary columns decoded (each batch has its own dictionary)."""
    columns = [
        column.cast(column.type.value_type) if pa.types.is_dictionary(column.type) else column
        for column in table.columns
    ]
    return pa.table(columns, names=table.column_names).combine_chunks()


def _rows(table: pa.Table) -> list[str]:
    return sorted(json.dumps(row, default=str, sort_keys=True) for row in table.to_pylist())


@pytest.mark.parametrize(
    "path",
    [
        EXAMPLES / "faults" / "hands.jsonl",
        EXAMPLES / "edge" / "hands.jsonl",
        ROOT / "fixtures" / "sample" / "jsonl" / "hands.jsonl.gz",
        EXAMPLES / "family" / "faults" / "hands.jsonl",
    ],
    ids=["faults", "edge", "sample", "family"],
)
def test_a_batch_split_two_ways_audits_to_the_same_rows(path: Path) -> None:
    lines = _lines(path)
    numbers = list(range(1, len(lines) + 1))
    whole = _audit(lines, numbers)
    assert whole["hands"].num_rows > 50

    # Two halves, in order: the concatenated tables equal the whole's, order included.
    mid = len(lines) // 2 + 1
    first, second = _audit(lines[:mid], numbers[:mid]), _audit(lines[mid:], numbers[mid:])
    for name in whole:
        joined = pa.concat_tables([first[name], second[name]])
        assert _plain(joined).equals(_plain(whole[name])), name

    # Every other hand: a table's hands are split between the parts; same rows.
    even, odd = _audit(lines[::2], numbers[::2]), _audit(lines[1::2], numbers[1::2])
    for name in whole:
        parts = pa.concat_tables([even[name], odd[name]])
        assert _rows(parts) == _rows(whole[name]), name
