"""A record read again at its source, as the audit read it: for a case file, and to tell
what a conflicting repeat of a hand changed.

A source names a file and a place in it (`FILE:LINE`, `FILE:row N`); the file is read
by the same readers as in the audit, and a record is the one at that place whose digest
(`digests.py`) is the one the audit kept. A file since changed or gone has none.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa

from pipeline.ingest.digests import canonical_rows, digest_of
from pipeline.ingest.parts import ArrowBlock, LinesBlock, ObjectsBlock
from pipeline.ingest.sources import RowGroupsBlock, read_blocks

_PLACE = re.compile(r"^(?P<file>.+):(?:row )?(?P<at>\d+)$")
# Fields named when a repeat differs, at most: the rest are counted.
SHOWN_FIELDS = 8


def record_at(source: str, digest: str | None) -> bytes | None:
    """The bytes of the record at `source` whose digest is `digest` (the first record
    there, if no digest is given), or None if the file no longer holds it."""
    return records_at([(source, digest)]).get((source, digest))


def records_at(wanted: Iterable[tuple[str, str | None]]) -> dict[tuple[str, str | None], bytes]:
    """The records found of those `wanted` (source and digest, as `record_at`), each
    file read once."""
    by_file: dict[str, dict[int, list[str | None]]] = {}
    for source, digest in wanted:
        place = _PLACE.match(source)
        if place is not None:
            by_file.setdefault(place["file"], {}).setdefault(int(place["at"]), []).append(digest)
    found: dict[tuple[str, str | None], bytes] = {}
    for name, places in by_file.items():
        if not Path(name).is_file():
            continue
        for at, raw in _records_in(Path(name), name, set(places)):
            for digest in places[at]:
                key = (f"{name}:row {at}" if name.endswith(".parquet") else f"{name}:{at}", digest)
                if key not in found and (digest is None or digest_of(raw) == digest):
                    found[key] = raw
    return found


def _records_in(path: Path, name: str, places: set[int]) -> Iterator[tuple[int, bytes]]:
    """The records a file holds at `places` (lines, or Parquet rows), as its sources
    name them: one a place, but for the objects of a JSON array that share a line."""
    for block in read_blocks(path, name):
        parts = block.read(threads=False) if isinstance(block, RowGroupsBlock) else [block]
        for part in parts:
            if isinstance(part, LinesBlock):
                raws = part.originals if part.originals is not None else part.lines
                for n, raw in zip(part.line_numbers, raws, strict=True):
                    if n in places:
                        yield n, raw
            elif isinstance(part, ObjectsBlock):
                for source, text in zip(part.sources, part.raws, strict=True):
                    if (at := _place_of(source)) in places:
                        yield int(at or 0), text.encode()
            elif isinstance(part, ArrowBlock):
                rows = [
                    at - part.first_row
                    for at in sorted(places)
                    if part.first_row <= at < part.first_row + part.batch.num_rows
                ]
                if rows:
                    texts = canonical_rows(part.batch.take(pa.array(rows))).to_pylist()
                    for row, text in zip(rows, texts, strict=True):
                        yield part.first_row + row, str(text).encode()
            elif part.raw is not None and part.digest is not None:  # a value that is no hand
                at = _place_of(part.source)
                yield from [(at, part.raw.encode())] if at in places and at is not None else []


def _place_of(source: str) -> int | None:
    place = _PLACE.match(source)
    return int(place["at"]) if place else None


def differing_fields(first: bytes | str, second: bytes | str) -> list[str] | None:
    """The fields (as paths such as `players[2].net`) in which two JSON records differ
    (a member that is null in one and absent in the other does not), or None if either
    is not JSON."""
    try:
        a, b = json.loads(first), json.loads(second)
    except (ValueError, RecursionError):
        return None
    return list(_differences(a, b, ""))


def _differences(a: Any, b: Any, at: str) -> Iterator[str]:
    if isinstance(a, dict) and isinstance(b, dict):  # a member null or absent: the same
        for key in [*a, *(k for k in b if k not in a)]:
            inner = f"{at}.{key}" if at else str(key)
            yield from _differences(a.get(key), b.get(key), inner)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            yield from _differences(x, y, f"{at}[{i}]")
    elif not _same_value(a, b):
        yield at or "the record"


def _same_value(a: Any, b: Any) -> bool:
    """Whether two values of JSON mean the same: equal as written, or as amounts (12.5 and
    "12.50"), or as instants (a JSON text and a Parquet timestamp's canonical text; one
    with no zone in UTC)."""
    if type(a) is type(b) and a == b:
        return True
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return False
    if isinstance(a, list | dict) or isinstance(b, list | dict):
        return False
    try:
        return Decimal(str(a)) == Decimal(str(b))
    except ArithmeticError:
        pass
    try:
        first, second = (datetime.fromisoformat(str(v).upper()) for v in (a, b))
    except ValueError:
        return False
    return _utc(first) == _utc(second)


def _utc(instant: datetime) -> datetime:
    """An instant with no zone is read as UTC, as the audit reads it."""
    return instant if instant.tzinfo is not None else instant.replace(tzinfo=UTC)


def named_fields(fields: list[str]) -> str:
    """Fields as a sentence's list, the first SHOWN_FIELDS of them and a count of the rest."""
    shown = ", ".join(fields[:SHOWN_FIELDS])
    more = len(fields) - SHOWN_FIELDS
    return shown + (f" and {more} more" if more > 0 else "")
