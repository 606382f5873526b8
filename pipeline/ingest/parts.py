"""The blocks the readers give (`sources.py`, `json_array.py`): records of one file with
where each came from, in bounded pieces, and the quarantine row of what cannot be read."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from pipeline.ingest.quarantine import QuarantineCheck, Quarantined, raw_text

LINES_PER_BLOCK = 8192
# A block's text stays under glibc's largest heap allocation (32 MB), so its memory is
# reused from block to block instead of mapped and faulted in afresh (records of 4.4 KB
# made blocks of 36 MB: 200,000 more page faults on 100,000 hands).
BLOCK_BYTES = 16 << 20


class LinesBlock:
    """JSON Lines: the text of each line and where it came from.

    `text` is the lines joined by line feeds, which is what the JSON reader takes: read
    from a file of ordinary lines, it is a slice of the file, and the lines are split
    off it only if some line must be read alone.
    """

    def __init__(
        self,
        path: str,
        line_numbers: list[int],
        lines: list[bytes] | None = None,
        *,
        text: bytes | None = None,
        ends: npt.NDArray[np.int64] | None = None,
        originals: list[bytes] | None = None,
    ) -> None:
        if (lines is None) == (text is None):
            raise ValueError("a block of lines is given by its lines or by its text")
        self.path = path
        self.line_numbers = line_numbers
        self._lines = lines
        self._text = text
        # Where each line of `text` ends (its line feed, or the text's end), when the
        # reader found them: the lines' digests are then taken in place.
        self.ends = ends
        # Each record's own text where the line is not it (an object of a JSON array,
        # made one line); the line otherwise.
        self.originals = originals

    @property
    def lines(self) -> list[bytes]:
        if self._lines is None:
            self._lines = self.text.split(b"\n")
        return self._lines

    @property
    def text(self) -> bytes:
        if self._text is None:
            self._text = b"\n".join(self.lines)
        return self._text


@dataclass(frozen=True)
class ObjectsBlock:
    """Records already decoded from a JSON document, each with its source and raw text."""

    sources: list[str]
    records: list[Any]
    raws: list[str]


@dataclass(frozen=True)
class ArrowBlock:
    """Parquet rows, numbered from `first_row` (1-based) within the file."""

    path: str
    first_row: int
    batch: pa.RecordBatch | pa.Table


def unreadable(
    source: str, what: str, raw: bytes | None = None, record: bool = False
) -> Quarantined:
    """What cannot be read at `source`, with the text there (`raw`); `record`: that text is
    one whole record's, whose digest is kept."""
    digest = hashlib.sha256(raw).hexdigest() if record and raw is not None else None
    why = f"{source} {what}"
    return Quarantined(source, None, QuarantineCheck.unreadable, why, raw_text(raw), digest)


def records_in_block(ends: npt.NDArray[np.int64], start: int) -> int:
    """How many of the records ending at `ends` (in order) make the block starting at
    `start`: up to LINES_PER_BLOCK records and BLOCK_BYTES, one at least."""
    fit = np.searchsorted(ends[:LINES_PER_BLOCK], start + BLOCK_BYTES, side="right")
    return max(1, int(fit))
