"""JSON Lines read in blocks: every line once, with its number, whatever the read and
block sizes (lines longer than a read, blank lines, CRLF, no final newline)."""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.ingest import parts as ingest_parts
from pipeline.ingest import sources
from pipeline.ingest.digests import line_digests
from pipeline.ingest.parts import LinesBlock
from pipeline.ingest.sources import read_blocks

LINE = st.one_of(
    st.one_of(
        st.just(b""),
        st.sampled_from([b"   ", b"\t", b" \x0b", b"\x0c ", b"\r"]),
        st.binary(min_size=1, max_size=40).filter(lambda b: b"\n" not in b and b.strip() != b""),
    ).map(lambda b: b if not b.strip() else b"{" + b.replace(b"\r", b"") + b"}"),
    st.just(b'{"a": 1}\r'),  # a record ending in a CR of its own (before CR LF: two)
)


def expected(data: bytes) -> list[tuple[int, bytes]]:
    """Numbered non-blank lines, as a plain reading of the file gives them."""
    lines = data.split(b"\n")
    if lines and not lines[-1]:
        lines.pop()
    return [  # a line's ending is LF or CR LF: one CR dropped, never more
        (n, line[:-1] if line.endswith(b"\r") else line)
        for n, line in enumerate(lines, 1)
        if line.strip()
    ]


def read(path: Path) -> list[tuple[int, bytes]]:
    got = []
    for block in read_blocks(path):
        assert isinstance(block, LinesBlock)
        got += list(zip(block.line_numbers, block.lines, strict=True))
        assert block.text == b"\n".join(block.lines)
        if block.ends is not None:  # the lines' digests, taken in place, are theirs
            own = [hashlib.sha256(line).hexdigest() for line in block.lines]
            assert line_digests(block.text, block.ends) == own
        assert len(block.line_numbers) <= ingest_parts.LINES_PER_BLOCK
        assert len(block.text) <= ingest_parts.BLOCK_BYTES or b"\n" not in block.text
    return got


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    lines=st.lists(LINE, max_size=30),
    crlf=st.booleans(),
    final_newline=st.booleans(),
    read_size=st.integers(1, 200),
    block_lines=st.integers(1, 5),
    block_bytes=st.integers(1, 120),
)
def test_blocks_hold_every_line_once_with_its_number(
    lines: list[bytes],
    crlf: bool,
    final_newline: bool,
    read_size: int,
    block_lines: int,
    block_bytes: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sources, "_READ_SIZE", read_size)
    monkeypatch.setattr(ingest_parts, "LINES_PER_BLOCK", block_lines)
    monkeypatch.setattr(ingest_parts, "BLOCK_BYTES", block_bytes)
    data = (b"\r\n" if crlf else b"\n").join(lines) + (b"\n" if final_newline and lines else b"")
    if not data.strip():
        return  # an empty file is told apart before blocks are cut
    path = tmp_path / "hands.jsonl"
    path.write_bytes(data)
    assert read(path) == expected(data)
    zipped = tmp_path / "hands.jsonl.gz"
    zipped.write_bytes(gzip.compress(data))
    assert read(zipped) == expected(data)
