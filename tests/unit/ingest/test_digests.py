"""Record digests: a Parquet row's canonical JSON as the README defines it (Python's own
JSON writer is the definition the columnar writer is held to), and a record found again at
its source by its digest, in every input shape."""

from __future__ import annotations

import gzip
import hashlib
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.ingest.digests import (
    canonical_row_text,
    canonical_rows,
    canonical_type,
    column_digests,
    present_structs,
)
from pipeline.ingest.records import differing_fields, record_at
from tests.conftest import EXAMPLES, load_examples


def _by_definition(table: pa.Table) -> list[str]:
    plain = present_structs(
        pa.Table.from_arrays(
            [c.cast(canonical_type(c.type)) for c in table.columns], names=table.column_names
        )
    )
    return [canonical_row_text(row) for row in plain.to_pylist()]


def _edge_records() -> list[dict[str, Any]]:
    load_examples("edge")
    lines = (EXAMPLES / "edge" / "hands.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_the_canonical_json_is_the_definition_on_every_shape_of_row(tmp_path: Path) -> None:
    records = _edge_records()
    # Text that must be escaped, text that need not be, and a member that is null.
    records[0]["player_note"] = 'tab\there "quoted" \\ back, \u00e9t\u00e9 \U0001f0a1 \x01'
    records[1]["currency"] = None
    table = pa.Table.from_struct_array(pa.array(records))
    pq.write_table(table, tmp_path / "a.parquet")
    as_read = pq.read_table(tmp_path / "a.parquet", read_dictionary=["cards", "value"])
    with_types = table.set_column(
        table.column_names.index("point_value"),
        "point_value",
        pa.array([r["point_value"] for r in records]).cast(pa.decimal128(18, 2)),
    )
    for shape in (table, as_read, with_types):
        assert canonical_rows(shape).to_pylist() == _by_definition(shape)
    text = canonical_rows(with_types)[0].as_py()
    assert '"point_value":"' in text and " " not in text.split('"player_note"')[0]


def test_the_canonical_json_does_not_depend_on_the_order_of_columns() -> None:
    rows: list[dict[str, Any]] = [
        {"b": 1, "a": {"y": "x", "x": None}, "c": None, "d": [{"e": None}, None]},
        {"b": 2, "a": None, "c": [None], "d": None},
    ]
    one = pa.Table.from_pylist(rows)
    other = pa.Table.from_pylist([{k: rows[0][k] for k in "dcba"}])
    assert canonical_rows(one)[0] == canonical_rows(other)[0]
    assert canonical_rows(one).to_pylist() == [
        '{"a":{"x":null,"y":"x"},"b":1,"c":null,"d":[{"e":null},{"e":null}]}',
        '{"a":{"x":null,"y":null},"b":2,"c":[null],"d":null}',
    ]
    assert canonical_rows(one).to_pylist() == _by_definition(one)


def test_a_row_the_columnar_writer_cannot_take_writes_its_other_values_as_it_would() -> None:
    """A binary column sends the rows to Python's writer; their timestamps and decimals
    are still Arrow's text of them, as the README defines."""
    at = pa.array([0], pa.timestamp("us", "UTC"))
    plain = pa.table({"at": at, "amount": pa.array([Decimal("12.50")], pa.decimal128(18, 2))})
    odd = plain.append_column("blob", pa.array([b"\xff\x00"], pa.binary()))
    assert canonical_rows(odd).to_pylist() == [
        '{"amount":"12.50","at":"1970-01-01 00:00:00.000000Z","blob":"ff00"}'
    ]
    assert canonical_rows(odd)[0].as_py().startswith(canonical_rows(plain)[0].as_py()[:-1])


def test_column_digests_read_the_texts_in_place() -> None:
    texts = pa.array(["", "é", '{"a":1}', "x" * 5000])
    want = [hashlib.sha256(t.encode()).hexdigest() for t in texts.to_pylist()]
    assert column_digests(texts) == want
    assert column_digests(texts.slice(1, 2)) == want[1:3]
    assert column_digests(texts.cast(pa.large_string()).slice(2)) == want[2:]


def test_a_record_is_found_again_at_its_source_in_every_shape(tmp_path: Path) -> None:
    records = _edge_records()[:12]
    lines = [json.dumps(r) for r in records]
    (tmp_path / "h.jsonl").write_text("\n".join(lines) + "\n")
    (tmp_path / "h.jsonl.gz").write_bytes(gzip.compress(("\r\n".join(lines) + "\r\n").encode()))
    (tmp_path / "one_line.json").write_text(json.dumps(records))  # every object on line 1
    pq.write_table(pa.Table.from_struct_array(pa.array(records)), tmp_path / "h.parquet")
    seventh = lines[6].encode()
    digest = hashlib.sha256(seventh).hexdigest()
    assert record_at(f"{tmp_path / 'h.jsonl'}:7", digest) == seventh
    assert record_at(f"{tmp_path / 'h.jsonl.gz'}:7", digest) == seventh  # no CR kept
    assert record_at(f"{tmp_path / 'one_line.json'}:1", digest) == seventh
    assert record_at(f"{tmp_path / 'h.jsonl'}:8", digest) is None  # another record there
    row = record_at(f"{tmp_path / 'h.parquet'}:row 7", None)
    assert row is not None and json.loads(row)["hand_id"] == records[6]["hand_id"]
    assert differing_fields(row, seventh) == []  # the same record, written otherwise
    (tmp_path / "h.jsonl").write_text("\n".join(lines[:5]) + "\n")
    assert record_at(f"{tmp_path / 'h.jsonl'}:7", digest) is None  # the file changed
    assert record_at(f"{tmp_path / 'gone.jsonl'}:7", digest) is None


def test_the_fields_that_differ_are_named_by_path() -> None:
    a = {"hand_id": "h", "boards": [["As", "Kd"]], "players": [{"net": "1.00"}], "x": None}
    b = {"hand_id": "h", "boards": [["As", "Qd"]], "players": [{"net": "2.00"}], "y": 1}
    assert differing_fields(json.dumps(a), json.dumps(b)) == [
        "boards[0][1]",
        "players[0].net",
        "y",
    ]
    assert differing_fields(json.dumps(a), "{not json") is None
    # Values are compared by what they mean: an amount as text or number, an instant as
    # JSON text or as a Parquet timestamp's canonical text (no zone: UTC).
    same = '{"won": 12, "started_at": "2026-11-29T20:15:03Z", "at": "2026-11-29T20:15:03"}'
    also = (
        '{"won": "12.00", "started_at": "2026-11-29 20:15:03.000000Z", '
        '"at": "2026-11-29T20:15:03+00:00"}'
    )
    assert differing_fields(same, also) == []
    assert differing_fields(same, same.replace("T", "t").replace("Z", "z")) == []
    assert differing_fields(
        '{"won": 12, "t": "2026-11-29T20:15:03Z"}', '{"won": "12.01", "t": "2026-11-29T20:15:04Z"}'
    ) == ["won", "t"]
    assert differing_fields('{"f": true, "g": null}', '{"f": 1, "g": 0}') == ["f", "g"]
