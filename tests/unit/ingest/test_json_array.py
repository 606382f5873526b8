"""A JSON array cut into its objects by brackets: every object found, whatever the chunks;
anything but a plain array of objects left to the record-by-record reader."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.ingest import json_array
from pipeline.ingest import parts as ingest_parts
from pipeline.ingest.json_array import array_objects
from tests.unit.ingest.helpers import ingest, valid_hand

# Text that trips a naive scanner: brackets, quotes, backslashes and line breaks in strings.
TRICKY = st.text(alphabet='{}[]",\\:\n\t aé', max_size=12)
VALUE = st.recursive(
    st.none() | st.booleans() | st.integers() | TRICKY,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TRICKY, inner, max_size=3),
    max_leaves=8,
)
OBJECT = st.dictionaries(TRICKY, VALUE, max_size=4)


@settings(max_examples=300, deadline=None)
@given(
    objects=st.lists(OBJECT, min_size=1, max_size=8),
    indent=st.sampled_from([None, 1, 2]),
    gap=st.sampled_from([",", " ,\n", ",\r\n  ", ",,"]),
    read=st.integers(1, 64),
)
def test_every_object_is_found_with_its_line_whatever_the_chunks(
    objects: list[dict[str, object]], indent: int | None, gap: str, read: int
) -> None:
    texts = [json.dumps(o, indent=indent, ensure_ascii=False) for o in objects]
    document = ("\n[ " + gap.join(texts) + "\n]\n").encode()
    json_array._READ = read
    try:
        found = array_objects(io.BytesIO(document))
    finally:
        json_array._READ = 16 << 20
    assert found is not None
    got = [document[s:e] for s, e in zip(found.starts, found.ends, strict=True)]
    assert got == [t.encode() for t in texts]
    assert [document.count(b"\n", 0, s) + 1 for s in found.starts] == found.lines.tolist()
    sizes = ingest_parts.LINES_PER_BLOCK, ingest_parts.BLOCK_BYTES
    ingest_parts.LINES_PER_BLOCK, ingest_parts.BLOCK_BYTES = 3, 40
    try:
        blocks = list(json_array.array_blocks("a.json", io.BytesIO(document), found))
    finally:
        ingest_parts.LINES_PER_BLOCK, ingest_parts.BLOCK_BYTES = sizes
    assert [x for block in blocks for x in block.originals or []] == got
    assert [n for block in blocks for n in block.line_numbers] == found.lines.tolist()
    for block in blocks:
        own = block.originals or []
        assert [json.loads(line) for line in block.lines] == [json.loads(x) for x in own]


@pytest.mark.parametrize(
    "document",
    [
        b'[{"a": 1}, {"b": 2}',  # no closing bracket
        b'[{"a": 1}] {"b": 2}',  # text after the array
        b'[{"a": 1}, 3, {"b": 2}]',  # a scalar among the objects
        b'[{"a": 1}, [{"b": 2}]]',  # an array among them
        b'x[{"a": 1}]',  # text before
        b'{"a": 1}',  # an object, not an array
        b'[{"a": 1]}',  # brackets that do not pair
        b'[{"a": "\xff"}]',  # not UTF-8
        b"[]",  # no object
    ],
)
def test_anything_but_a_plain_array_of_objects_is_left_to_the_careful_reader(
    document: bytes,
) -> None:
    assert array_objects(io.BytesIO(document)) is None


def test_an_object_that_is_not_json_is_quarantined_alone_with_its_own_text(
    tmp_path: Path,
) -> None:
    hands = [json.dumps({**valid_hand(), "hand_id": f"a{i}"}, indent=1) for i in range(3)]
    broken = hands[1].replace('"table_id":', '"table_id"', 1)  # a missing colon
    path = tmp_path / "hands.json"
    path.write_text("[" + ",\n".join([hands[0], broken, hands[2]]) + "]\n")
    batches, rejects, accounting = ingest(path)
    assert [str(h) for b in batches for h in b.hands.hand_id] == ["a0", "a2"]
    assert accounting.read == 3 and accounting.quarantined == 1
    (reject,) = rejects
    assert reject.check.value == "unreadable" and "is not valid JSON" in reject.message
    assert reject.source == f"{path}:{hands[0].count(chr(10)) + 2}"
    assert reject.raw == broken
