"""The same records read from JSON Lines, a JSON array, gzip and Parquet give the same batches."""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.json
import pyarrow.parquet as pq
import pytest

from pipeline.core.batch import Streets
from pipeline.ingest import decode
from pipeline.ingest.decode import _AMOUNT_KEYS, _fast_text, decode_lines, schema
from pipeline.ingest.quarantine import QuarantineCheck
from pipeline.ingest.sources import dictionary_columns, read_blocks
from tests.conftest import EXAMPLES, ROOT, load_examples
from tests.unit.ingest.helpers import ingest, write_lines

# The module itself (the package's `decode` is a function of the same name).
decode_module = sys.modules[decode_lines.__module__]
SCHEMA_FILE = ROOT / "schemas" / "hand-history.schema.json"


def digest(batches: list[Any]) -> dict[str, list[Any]]:
    """Every column of every part of the batches, as plain lists (sources left out)."""
    out: dict[str, list[Any]] = {}
    for batch in batches:
        for part in dataclasses.fields(batch):
            value = getattr(batch, part.name)
            columns = (
                {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
                if dataclasses.is_dataclass(value)
                else {"cards": value}
            )
            if part.name == "game":  # the batch's layout, no column
                continue
            columns = {name: _streets_columns(c) for name, c in columns.items()}
            columns = {
                f"{name}.{key}" if isinstance(column, dict) else name: inner
                for name, column in columns.items()
                for key, inner in (column.items() if isinstance(column, dict) else [("", column)])
            }
            for name, column in columns.items():
                if name in ("source", "digest"):  # where, and the bytes: the format's own
                    continue
                as_list = (
                    column.to_pylist()
                    if isinstance(column, pa.Array)
                    else np.asarray(column).tolist()
                )
                out.setdefault(f"{part.name}.{name}", []).extend(as_list)
    return out


def _streets_columns(column: Any) -> Any:
    """The open-face streets as plain columns; any other column as it is."""
    if not isinstance(column, Streets):
        return column
    parts = {f"{k}.codes": codes for k, (codes, _) in column.parts.items()}
    return (
        {"player": column.player}
        | parts
        | {f"{k}.street": street for k, (_, street) in column.parts.items()}
    )


def test_every_format_reads_the_same(tmp_path: Path) -> None:
    source = EXAMPLES / "edge" / "hands.jsonl"
    load_examples("edge")
    lines = source.read_text().splitlines()
    records = [json.loads(line) for line in lines]
    (tmp_path / "a.json").write_text(json.dumps(records, indent=1))
    (tmp_path / "b.jsonl.gz").write_bytes(gzip.compress(source.read_bytes()))
    (tmp_path / "c.json.gz").write_bytes(gzip.compress(json.dumps(records).encode()))
    # Text that starts with a byte order mark, as some editors write UTF-8: no part of JSON.
    bom = b"\xef\xbb\xbf"
    (tmp_path / "g.json").write_bytes(bom + json.dumps(records).encode())
    (tmp_path / "h.jsonl.gz").write_bytes(gzip.compress(bom + source.read_bytes()))
    table = pa.concat_tables([decode_lines(b).table for b in read_blocks(source)])  # type: ignore[arg-type]
    pq.write_table(table, tmp_path / "d.parquet")
    # Money as decimal strings, in another column order, without the optional fields.
    as_text = pa.table(
        {
            name: table[name]
            if not pa.types.is_decimal(table.schema.field(name).type)
            else pa.compute.cast(table[name], pa.string())
            for name in reversed(table.column_names)
            if name not in ("sitting_out", "currency")
        }
    )
    pq.write_table(as_text, tmp_path / "e.parquet")
    # Text not dictionary-encoded, lists named as older writers name them, small row groups.
    pq.write_table(
        table,
        tmp_path / "f.parquet",
        use_dictionary=False,
        use_compliant_nested_type=False,
        row_group_size=7,
    )
    # Times as timestamps in a zone other than UTC: the same instants.
    instants = pa.compute.strptime(table["started_at"], "%Y-%m-%dT%H:%M:%SZ", "ns")
    paris = instants.cast(pa.timestamp("ns", "UTC")).cast(pa.timestamp("ns", "Europe/Paris"))
    at = table.column_names.index("started_at")
    pq.write_table(table.set_column(at, "started_at", paris), tmp_path / "i.parquet")

    want = digest(ingest(source)[0])
    assert len(want["hands.hand_no"]) == 120
    digests = {}
    names = ("a.json", "b.jsonl.gz", "c.json.gz", "d.parquet", "e.parquet", "f.parquet")
    for name in (*names, "g.json", "h.jsonl.gz", "i.parquet"):
        batches, rejects, _ = ingest(tmp_path / name)
        digests[name] = [d for b in batches for d in b.hands.digest.to_pylist()]
        assert rejects == [], (name, rejects[:1])
        got = digest(batches)
        if name == "e.parquet":  # sitting_out was left out of that file
            got = {k: v for k, v in got.items() if not k.startswith("sitting_out")}
            expected = {k: v for k, v in want.items() if not k.startswith("sitting_out")}
        else:
            expected = want
        assert got == expected, name
    # Each record's digest: its bytes as read (a line, decompressed; an object of an array),
    # or a Parquet row's canonical JSON, whatever the file's encodings and row groups.
    lines_digests = [hashlib.sha256(line.encode()).hexdigest() for line in lines]
    assert sorted(digests["b.jsonl.gz"]) == sorted(lines_digests)
    objects = [hashlib.sha256(json.dumps(r).encode()).hexdigest() for r in records]
    assert sorted(digests["c.json.gz"]) == sorted(objects) == sorted(digests["g.json"])
    assert digests["h.jsonl.gz"] == digests["b.jsonl.gz"]
    assert digests["d.parquet"] == digests["f.parquet"]
    assert set(digests["d.parquet"]).isdisjoint(digests["e.parquet"])


def _shapes(source: Path, out: Path) -> dict[str, Path]:
    """The records of `source` as Parquet written the ordinary ways (hand-history.md allows
    them all): pyarrow from the JSON records (amounts and times as text, one row group), pyarrow
    with int32 seats and large lists in many row groups, DuckDB's COPY, polars, and Arrow's
    own JSON reader."""
    records = [json.loads(line) for line in source.read_text().splitlines()]
    # (Table.from_pylist would take its fields from the first record alone.)
    plain = pa.Table.from_struct_array(pa.array(records))
    pq.write_table(plain, out / "pylist.parquet")
    narrow = pa.table(
        {
            name: pa.compute.cast(
                column,
                pa.int32() if name == "hand_no" else pa.large_list(column.type.value_type),
            )
            if name in ("hand_no", "boards")
            else column
            for name, column in zip(plain.column_names, plain.columns, strict=True)
        }
    )
    pq.write_table(narrow, out / "narrow.parquet", row_group_size=16)
    duckdb.execute(f"COPY (SELECT * FROM read_json('{source}')) TO '{out / 'duckdb.parquet'}'")
    pl.read_ndjson(source).write_parquet(out / "polars.parquet")
    # Arrow's JSON reader makes "...Z" texts timestamps without a zone: read as UTC.
    pq.write_table(pa.json.read_json(source), out / "arrow-json.parquet")
    names = ("pylist", "narrow", "duckdb", "polars", "arrow-json")
    return {name: out / f"{name}.parquet" for name in names}


@pytest.fixture
def careful(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The sources of the records read one by one through the models, as they are read."""
    seen: list[str] = []
    real = decode_module.record_by_record

    def counted(sources: list[str], *args: Any, **kwargs: Any) -> Any:
        seen.extend(sources)
        return real(sources, *args, **kwargs)

    monkeypatch.setattr(decode_module, "record_by_record", counted)
    return seen


def test_parquet_of_every_ordinary_shape_reads_as_json_lines_do(
    tmp_path: Path, careful: list[str]
) -> None:
    source = EXAMPLES / "clean" / "hands.jsonl"
    load_examples("clean")
    want = digest(ingest(source)[0])
    for name, path in _shapes(source, tmp_path).items():
        decoded = [decode(block) for block in read_blocks(path)]
        # Columnar all the way: no record went through the models one by one.
        assert careful == [] and sum(len(d.sources) for d in decoded) == 400, name
        batches, rejects, _ = ingest(path)
        assert rejects == [] and digest(batches) == want, name


def test_a_bad_amount_in_text_sends_only_its_record_the_careful_way(
    tmp_path: Path, careful: list[str]
) -> None:
    source = EXAMPLES / "clean" / "hands.jsonl"
    load_examples("clean")
    records = [json.loads(line) for line in source.read_text().splitlines()]
    records[5]["players"][1]["won"] = "1e2"
    records[9]["rake_cap"] = "4.001"
    pq.write_table(pa.Table.from_struct_array(pa.array(records)), tmp_path / "bad.parquet")
    decoded = [decode(block) for block in read_blocks(tmp_path / "bad.parquet")]
    assert [c.rsplit(" ", 1)[1] for c in careful] == ["6", "10"]
    assert [q.source.rsplit(" ", 1)[1] for d in decoded for q in d.quarantined] == ["6", "10"]
    assert [q.check for d in decoded for q in d.quarantined] == [QuarantineCheck.schema] * 2
    verified = [h for d in decoded for h in d.table["hand_id"].to_pylist()]
    assert verified == [r["hand_id"] for i, r in enumerate(records) if i not in (5, 9)]


def test_amounts_written_as_json_numbers_take_the_columnar_path(tmp_path: Path) -> None:
    source = EXAMPLES / "clean" / "hands.jsonl"
    load_examples("clean")
    quoted = re.compile(rb'("(?:' + _AMOUNT_KEYS + rb')": )"(-?[0-9.]+)"')
    lines = [quoted.sub(rb"\1\2", line) for line in source.read_bytes().splitlines()]
    assert b'"point_value": "' not in lines[0] and b'"point_value": ' in lines[0]
    read = _fast_text(b"\n".join(lines), len(lines), threads=False)
    assert isinstance(read, pa.Table)  # the whole block, columnar
    numbers = write_lines(tmp_path / "numbers.jsonl", lines)
    batches, rejects, _ = ingest(numbers)
    assert rejects == [] and digest(batches) == digest(ingest(source)[0])
    # An exponent or a third decimal is still not money: those records alone are quarantined.
    lines[3] = lines[3].replace(b'"rake_cap": ', b'"rake_cap": 4e0, "x": ', 1)
    lines[7] = re.sub(rb'"point_value": [0-9.]+', b'"point_value": 1.005', lines[7])
    _, rejects, accounting = ingest(write_lines(tmp_path / "bad.jsonl", lines))
    assert [q.source.rsplit(":", 1)[1] for q in rejects] == ["4", "8"]
    assert accounting.verified == len(lines) - 2


def test_amounts_too_large_for_their_column_are_quarantined_alone(tmp_path: Path) -> None:
    # 10**16 dollars does not fit DECIMAL(18, 2): it stopped the whole audit when read
    # columnar. As text, as a JSON number and in Parquet, only its record is quarantined.
    source = EXAMPLES / "clean" / "hands.jsonl"
    load_examples("clean")
    records = [json.loads(line) for line in source.read_text().splitlines()][:40]
    records[3]["players"][0]["won"] = "10000000000000000"
    records[6]["players"][1]["stack_start"] = -(10**17)
    records[9]["rake_cap"] = "99999999999999999999.00"
    records[12]["point_value"] = "0000000000000000001.00"  # leading zeros: read, and right
    records[15]["rake_rate"] = "1234567890"
    lines = write_lines(tmp_path / "big.jsonl", [json.dumps(r) for r in records])
    (tmp_path / "big.json").write_text(json.dumps(records))
    as_text = json.loads(json.dumps(records))  # Parquet's column is text or a number
    as_text[6]["players"][1]["stack_start"] = str(-(10**17))
    pq.write_table(pa.Table.from_struct_array(pa.array(as_text)), tmp_path / "big.parquet")
    for path in (lines, tmp_path / "big.json", tmp_path / "big.parquet"):
        _, rejects, accounting = ingest(path)
        assert sorted(str(q.hand_id) for q in rejects) == [
            records[i]["hand_id"] for i in (3, 6, 9, 15)
        ], path
        assert {q.check for q in rejects} == {QuarantineCheck.schema}, path
        assert accounting.verified == len(records) - 4, path


def test_the_input_faults_of_the_examples_are_quarantined() -> None:
    faults = json.loads((EXAMPLES / "faults" / "faults.json").read_text())
    input_checks = {check.value for check in QuarantineCheck}  # every quarantine check
    want = {(f["hand_id"], f["check"]) for f in faults if f["check"] in input_checks}
    _, rejects, accounting = ingest(EXAMPLES / "faults" / "hands.jsonl")
    assert {(q.hand_id, q.check.value) for q in rejects} == want
    assert accounting.read == 321 == accounting.verified + accounting.quarantined
    for name in ("clean", "edge"):
        assert ingest(EXAMPLES / name / "hands.jsonl")[1] == []


def test_the_json_schema_files_match_the_models() -> None:
    from scripts.export_schema import TARGETS, render

    for target, made in TARGETS.items():
        assert target.read_text() == render(made), "run scripts/export_schema.py"


def test_the_examples_pass_the_json_schema() -> None:
    import jsonschema

    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA_FILE.read_text()))
    for hand in load_examples("clean")[:50]:
        validator.validate(hand)


def test_nested_text_columns_are_read_as_dictionaries(tmp_path: Path) -> None:
    path = tmp_path / "hands.parquet"
    (lines,) = read_blocks(EXAMPLES / "edge" / "hands.jsonl")
    pq.write_table(decode_lines(lines).table, path)  # type: ignore[arg-type]
    players = "players.list.element"
    assert set(dictionary_columns(pq.ParquetFile(path).schema)) == {
        "boards.list.element.list.element",
        *(f"{players}.{row}.list.element" for row in ("cards", "top", "middle", "bottom")),
        *(
            f"{players}.streets.list.element.{part}.list.element"
            for part in ("dealt", "top", "middle", "bottom", "discard")
        ),
        f"{players}.declare",
        f"{players}.natural",
        f"{players}.rows.list.element.row",
        f"{players}.rows.list.element.value",
        f"{players}.rows.list.element.joker_as.list.element",
        "settlements.list.element.home_run",
        "sitting_out.list.element.reason",
    }
    (block,) = read_blocks(path)
    (read,) = block.read()  # type: ignore[union-attr]
    fields = read.batch.schema.field("players").type.value_type  # type: ignore[union-attr]
    assert pa.types.is_dictionary(fields.field("top").type.value_type)
    assert pa.types.is_string(fields.field("player_id").type)


def test_the_arrow_schema_is_derived_from_the_models() -> None:
    players = schema().field("players").type.value_type
    assert players.field("stack_start").type == pa.decimal128(18, 2)
    assert schema().field("rake_rate").type == pa.decimal128(18, 9)
    assert players.field("rows").type.value_type.field("board").type == pa.int64()
