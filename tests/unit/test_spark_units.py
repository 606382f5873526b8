"""The Spark engine's pure parts (no Spark): byte ranges and runs of Parquet row groups
read as the local reader reads the whole file, sources numbered in the file, tables
written under their unit's names."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.ingest.parts import ArrowBlock, LinesBlock
from pipeline.ingest.sources import RowGroupsBlock, read_blocks
from pipeline.spark.units import RECORD_BYTES, Unit, UnitReader, list_inputs, plan_units
from pipeline.spark.written import (
    UnitFiles,
    file_schema,
    finish_hands,
    finish_quarantine,
)

LINES = st.lists(
    st.sampled_from([b'{"a": 1}', b'{"b": 22}', b"", b"  ", b'{"c": 3}\r', b"not json", b"\t"]),
    min_size=1,
    max_size=30,
)


def _read(units: list[Unit]) -> tuple[list[int], list[bytes]]:
    """Every unit's lines, numbered in the file as the engine numbers them (the lines
    of the file's earlier units added)."""
    numbers, lines = [], []
    before = 0
    for unit in units:
        reader = UnitReader(unit)
        for block in reader.blocks():
            assert isinstance(block, LinesBlock)
            numbers += [before + n for n in block.line_numbers]
            lines += block.lines
        before += reader.lines
    return numbers, lines


@settings(max_examples=300, deadline=None)
@given(lines=LINES, final_feed=st.booleans(), split=st.integers(1, 40))
def test_byte_ranges_read_as_the_whole_file_is_read(
    tmp_path_factory: pytest.TempPathFactory, lines: list[bytes], final_feed: bool, split: int
) -> None:
    text = b"\n".join(lines) + (b"\n" if final_feed else b"")
    if not text.strip():
        return  # a blank file: the local reader says it is empty (see the README)
    folder = tmp_path_factory.mktemp("ranges")
    path = folder / "h.jsonl"
    path.write_bytes(text)
    whole = [b for b in read_blocks(path, str(path)) if isinstance(b, LinesBlock)]
    want = ([n for b in whole for n in b.line_numbers], [x for b in whole for x in b.lines])
    units = plan_units(list_inputs([str(path)]), split)
    assert len(units) == -(-len(text) // split) if len(text) > split else len(units) == 1
    assert _read(units) == want


def _row_numbers(blocks: Sequence[object]) -> list[tuple[int, int]]:
    """(row number, value) of every row the blocks hold, as the reader numbers them."""
    numbered = []
    for block in blocks:
        assert isinstance(block, RowGroupsBlock), block
        for part in block.read(threads=False):
            assert isinstance(part, ArrowBlock), part
            values = part.batch.column("n").to_pylist()
            numbered += [(part.first_row + i, v) for i, v in enumerate(values)]
    return numbered


@settings(max_examples=150, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 40), min_size=1, max_size=25),
    split_rows=st.integers(1, 120),
)
def test_parquet_row_group_units_read_as_the_whole_file_is_read(
    tmp_path_factory: pytest.TempPathFactory, sizes: list[int], split_rows: int
) -> None:
    path = tmp_path_factory.mktemp("groups") / "h.parquet"
    with pq.ParquetWriter(path, pa.schema([("n", pa.int64())])) as writer:
        first = 0
        for size in sizes:
            writer.write_table(pa.table({"n": range(first, first + size)}))
            first += size
    want = _row_numbers(list(read_blocks(path, str(path))))
    assert want == [(n + 1, n) for n in range(sum(sizes))]
    units = plan_units(list_inputs([str(path)]), split_rows * RECORD_BYTES)
    groups = [u.row_groups for u in units]
    if sum(sizes) <= split_rows or len(groups) == 1:
        assert groups == [None]  # the file whole
    else:  # runs of whole row groups, in order, each of about split_rows rows
        assert all(g is not None for g in groups)
        assert [i for g in groups if g is not None for i in g] == list(range(len(sizes)))
        assert all(sum(sizes[i] for i in g) >= split_rows for g in groups[:-1] if g)
        assert len({u.label for u in units}) == len(units)
    got = [b for u in units for b in UnitReader(u).blocks()]
    assert _row_numbers(got) == want


def test_a_200000_row_parquet_file_is_several_units_and_its_footer_alone_is_read(
    tmp_path: Path,
) -> None:
    path = tmp_path / "day.parquet"
    rows = pa.table({"hand_id": pa.array([f"h{i}" for i in range(200_000)])})
    pq.write_table(rows, path, row_group_size=8192)
    units = plan_units(list_inputs([str(path)]))
    assert len(units) >= 8
    assert units[0].row_groups == range(0, 2)  # 16,384 rows: a JSON Lines unit's records
    whole = pq.ParquetFile(path).metadata.num_row_groups
    assert [i for u in units if u.row_groups for i in u.row_groups] == list(range(whole))
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"PAR1 not a footer")
    assert [u.row_groups for u in plan_units(list_inputs([str(broken)]))] == [None]


def test_only_large_plain_json_lines_files_are_cut(tmp_path: Path) -> None:
    for name in ("a.jsonl", "b.json", "c.jsonl.gz", "d.parquet"):
        (tmp_path / name).write_bytes(b"x" * 100)
    units = plan_units(list_inputs([str(tmp_path)]), 30)
    assert [(Path(u.file.name).name, u.start, u.end) for u in units] == [
        ("a.jsonl", 0, 30),
        ("a.jsonl", 30, 60),
        ("a.jsonl", 60, 90),
        ("a.jsonl", 90, 100),
        ("b.json", 0, None),
        ("c.jsonl.gz", 0, None),
        ("d.parquet", 0, None),
    ]
    assert [u.number for u in units] == list(range(7))
    assert len({u.label for u in units}) == 7


def test_sources_are_numbered_in_the_file_and_so_are_messages_that_name_them() -> None:
    quarantine = pa.table(
        {
            "source": ["d/h.jsonl:1", "d/h.jsonl:12", "other"],
            "hand_id": [None, "x", None],
            "check": ["unreadable", "schema", "unreadable"],
            "message": ["d/h.jsonl:1 is not valid JSON", "d/h.jsonl:12: no seat", "other file"],
            "raw": ["{", "{}", None],
        }
    )
    done = finish_quarantine(quarantine, "d/h.jsonl", 101)
    assert done["source"].to_pylist() == ["d/h.jsonl:101", "d/h.jsonl:112", "other"]
    assert done["message"].to_pylist() == [
        "d/h.jsonl:101 is not valid JSON",
        "d/h.jsonl:112: no seat",
        "other file",
    ]
    assert finish_quarantine(quarantine, "d/h.jsonl", 1) is quarantine
    hands = pa.table(
        {"hand_id": ["a", "b"], "source": ["h.jsonl:1", "h.jsonl:2"], "status": ["ok", "ok"]}
    )
    done = finish_hands(hands, "h.jsonl", 9, pa.array(["b"]))
    assert done.to_pylist() == [
        {"hand_id": "a", "source": "h.jsonl:9", "status": "ok"},
        {"hand_id": "b", "source": "h.jsonl:10", "status": "diverged"},
    ]


def test_a_units_tables_go_by_day_under_its_own_names_and_a_retry_overwrites_them(
    tmp_path: Path,
) -> None:
    rows = pa.table(
        {
            "hand_id": ["h1", "h2", "h3"],
            "seat": [1, 2, 3],
            "player_id": ["p1", "p2", "p3"],
            "stack_start": pa.array([None, None, None], pa.decimal128(18, 2)),
        }
    )
    days = pa.array([20_000, 20_001, 20_000], pa.int32())
    for _ in range(2):  # the task, and its retry
        files = UnitFiles(str(tmp_path), "00003-000000000100")
        files.add("players", rows, days)
        written = files.close()
    assert sorted(w.path for w in written) == [
        "players/day=2024-10-04/part-00003-000000000100.parquet",
        "players/day=2024-10-05/part-00003-000000000100.parquet",
    ]
    found = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert found == sorted(w.path for w in written)
    first = pq.read_table(tmp_path / written[0].path)
    assert first.schema == file_schema("players")
    assert first["hand_id"].to_pylist() == ["h1", "h3"]
