"""The Spark engine's pure parts (no Spark): lines numbered as the local reader numbers
them, files named one way, tables through Arrow IPC values and back."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from pipeline.ingest.sources import LinesBlock, numbered_line_blocks, read_blocks
from pipeline.spark.inputs import file_key
from pipeline.spark.parts import Unit, buckets, conform, parts_of, tables_of, written_schema
from pipeline.spark.tasks import _blocks_of_lines


@pytest.mark.parametrize(
    "text",
    [
        b'{"a": 1}\n{"a": 2}\n',
        b'{"a": 1}\r\n\r\n  \n{"a": 2}\r\n{"a": 3}',
        b'\n\n{"a": 1}\n\t\n{"a": 2}\n\n',
    ],
)
def test_lines_split_elsewhere_are_numbered_as_the_local_reader_numbers_them(
    tmp_path: Path, text: bytes
) -> None:
    path = tmp_path / "h.jsonl"
    path.write_bytes(text)
    local = [b for b in read_blocks(path, "h.jsonl") if isinstance(b, LinesBlock)]
    lines = text.split(b"\n")
    if lines[-1] == b"":
        lines.pop()  # Spark's reader gives no line after the last line feed
    # Spark's blocks start anywhere: split the lines in two and number from each start.
    for cut in range(len(lines) + 1):
        split = [
            *numbered_line_blocks("h.jsonl", 1, lines[:cut]),
            *numbered_line_blocks("h.jsonl", cut + 1, lines[cut:]),
        ]
        numbers = [n for block in split for n in block.line_numbers]
        kept = [line for block in split for line in block.lines]
        assert numbers == [n for block in local for n in block.line_numbers]
        assert kept == [line for block in local for line in block.lines]


def test_spark_spells_a_file_two_ways_and_the_key_is_one() -> None:
    assert file_key("file:/tmp/a b/h.jsonl") == "/tmp/a b/h.jsonl"
    assert file_key("file:///tmp/a%20b/h.jsonl", escaped=True) == "/tmp/a b/h.jsonl"
    assert file_key("s3a://bucket/a%20b.jsonl", escaped=True) == "s3a://bucket/a b.jsonl"


def test_buckets_are_stable_and_keep_a_table_together() -> None:
    ids = pa.array(["T1", "T2", "T1", "T3", "T2"])
    first, again = buckets(ids, 8), buckets(pa.array(["T3", "T1", "T2"]), 8)
    assert first[0] == first[2] == again[1] and first[1] == first[4] == again[2]
    assert first[3] == again[0]


def test_a_table_goes_by_day_and_by_bucket_and_comes_back_whole() -> None:
    schema = written_schema("players")
    rows = pa.table(
        {
            "hand_id": ["h1", "h2", "h3"],
            "seat": [1, 2, 3],
            "player_id": ["p1", "p2", "p3"],
            "stack_start": pa.array([None, None, None], pa.decimal128(18, 2)),
            "day": pa.array([20_000, 20_000, 20_001], pa.date32()),
        }
    )
    tables = pa.array(["T1", None, "T2"])
    parts = list(parts_of("players", rows, Unit(3, 100), tables, 4))
    names = [batch.column("part")[0].as_py() for batch in parts]
    assert names.count("players") == 2 and names.count("rules:players") in (1, 2)
    back = tables_of(parts)
    assert back["players"].schema == schema
    assert back["players"].to_pylist() == conform(rows, schema).to_pylist()
    # The table rules see the rows of a hand table, and not those without one.
    assert sorted(back["rules:players"]["hand_id"].to_pylist()) == ["h1", "h3"]
    assert {batch.column("file_no")[0].as_py() for batch in parts} == {3}


def test_a_tasks_lines_are_gathered_block_by_block_across_its_batches() -> None:
    def batch(rows: list[tuple[bytes, str, int]]) -> pa.RecordBatch:
        line, path, block = zip(*rows, strict=True) if rows else ((), (), ())
        return pa.record_batch(
            {
                "line": pa.array(line, pa.large_binary()),
                "path": pa.array(path, pa.large_string()),
                "block": pa.array(block, pa.int64()),
            }
        )

    batches = [
        batch([(b"a1", "f:a", 0), (b"a2", "f:a", 0)]),
        batch([]),
        batch([(b"a3", "f:a", 0), (b"b1", "f:a", 64), (b"c1", "f:c", 0)]),
        batch([(b"c2", "f:c", 0)]),
    ]
    assert list(_blocks_of_lines(iter(batches))) == [
        (("f:a", 0), [b"a1", b"a2", b"a3"]),
        (("f:a", 64), [b"b1"]),
        (("f:c", 0), [b"c1", b"c2"]),
    ]
