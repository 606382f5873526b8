"""JSON documents read: a plain array of objects cut by its brackets, so that its objects
are read as lines are (`array_blocks`), and anything else decoded object by object,
carefully (`document_blocks`).

Decoding a JSON array object by object with Python's json made it three to four times
slower to audit than the same hands as JSON Lines. Here numpy finds, chunk by chunk,
the quotes that open and close strings and the brackets outside them; the depth of
each bracket tells where every object of the array starts and ends. The objects, each
made one line (a line break in JSON text only stands between tokens), then go to
Arrow's reader as JSON Lines do.

Only a plain array of objects is cut so: UTF-8 text, `[`, objects between commas and
white space, `]`, then nothing. Anything else (a truncated file, text after the
array, a scalar among the objects) is left to the object-by-object reader, whose
messages say what is wrong. An object whose brackets balance but whose text is not
JSON is quarantined alone, as a bad line of JSON Lines is.
"""

from __future__ import annotations

import codecs
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any

import numpy as np
import numpy.typing as npt

from pipeline.ingest import parts as file_parts
from pipeline.ingest.hand_history import JsonConstant, JsonNumber
from pipeline.ingest.parts import (
    LinesBlock,
    ObjectsBlock,
    records_in_block,
    unreadable,
)
from pipeline.ingest.quarantine import Quarantined

_READ = 16 << 20
_CHUNK = 1 << 20  # the record-by-record reader's
_QUOTE, _BACKSLASH, _LINE_FEED, _OPEN_OBJECT = ord('"'), ord("\\"), ord("\n"), ord("{")
_BETWEEN = b" \t\r\n,"  # what may stand between the objects (as the record-by-record reader allows)
# An object's line breaks made spaces: one object, one line.
ONE_LINE = bytes.maketrans(b"\r\n", b"  ")


@dataclass
class Objects:
    """Where each object of the array starts and ends (byte offsets), and its line."""

    starts: npt.NDArray[np.int64]
    ends: npt.NDArray[np.int64]  # one past the closing brace
    lines: npt.NDArray[np.int64]  # the line each starts on, from 1


@dataclass
class _Scan:
    """What a chunk leaves for the next: the depth of brackets, whether a string is open,
    the backslashes it ended with, and where the text outside the objects began."""

    offset: int = 0  # of the chunk in the file
    lines: int = 0  # line feeds before the chunk
    depth: int = 0
    in_string: int = 0  # 1 when a string is open
    backslashes: int = 0
    opened: bool = False  # the array's '[' was met
    closed: bool = False  # and its ']'
    outside_from: int = 0  # where the text between objects began (in the file)
    # What was found, a part per chunk (numpy: 24 bytes an object however many there are).
    starts: list[npt.NDArray[np.int64]] = field(default_factory=list)
    ends: list[npt.NDArray[np.int64]] = field(default_factory=list)
    lines_of: list[npt.NDArray[np.int64]] = field(default_factory=list)


def array_objects(stream: IO[bytes]) -> Objects | None:
    """The objects of the JSON array the stream holds, or None when it holds anything else
    than a plain array of objects (or is not UTF-8). Reads the stream to its end."""
    scan = _Scan()
    utf8 = codecs.getincrementaldecoder("utf-8")()
    try:
        while chunk := stream.read(_READ):
            if not chunk.isascii():
                utf8.decode(chunk)
            if not _feed(scan, chunk):
                return None
        utf8.decode(b"", final=True)
    except UnicodeDecodeError:
        return None
    if not scan.closed or not scan.starts:
        return None
    return Objects(
        np.concatenate(scan.starts),
        np.concatenate(scan.ends),
        np.concatenate(scan.lines_of),
    )


def _feed(scan: _Scan, chunk: bytes) -> bool:
    """One chunk into the scan; False where the text is not a plain array of objects."""
    b = np.frombuffer(chunk, np.uint8)
    brackets = _brackets_outside_strings(scan, chunk, b)
    steps = np.where((b[brackets] == 123) | (b[brackets] == 91), 1, -1).astype(np.int64)
    depths = scan.depth + np.cumsum(steps)
    # Only the brackets of the array and of its objects: depth 0 <-> 1 <-> 2.
    edges = np.flatnonzero(((steps > 0) & (depths <= 2)) | ((steps < 0) & (depths <= 1)))
    new_starts: list[int] = []  # in the chunk: where objects open, and one past where they close
    new_ends: list[int] = []
    for at, depth, step in zip(
        brackets[edges].tolist(), depths[edges].tolist(), steps[edges].tolist(), strict=True
    ):
        if not _edge(scan, chunk, at, depth, step, new_starts, new_ends):
            return False
    if new_starts:
        feeds = np.flatnonzero(b == _LINE_FEED)
        starts = np.array(new_starts, np.int64)
        scan.lines_of.append(scan.lines + 1 + np.searchsorted(feeds, starts))
        scan.starts.append(starts + scan.offset)
    if new_ends:
        scan.ends.append(np.array(new_ends, np.int64) + scan.offset)
    scan.depth = int(depths[-1]) if len(depths) else scan.depth
    outside = scan.depth <= 1
    if outside and not _only(chunk, scan, len(chunk), b" \t\r\n" if scan.closed else _BETWEEN):
        return False
    scan.lines += chunk.count(b"\n")
    scan.offset += len(chunk)
    scan.outside_from = max(scan.outside_from, scan.offset) if outside else scan.outside_from
    return True


def _brackets_outside_strings(
    scan: _Scan, chunk: bytes, b: npt.NDArray[np.uint8]
) -> npt.NDArray[np.int64]:
    """Where the chunk's brackets outside strings are; the scan learns whether a string is
    open at its end, and the backslashes it ends with."""
    quotes = (b == _QUOTE).view(np.uint8)  # 1 at each quote that opens or closes a string
    if b"\\" in chunk or scan.backslashes:
        at = np.flatnonzero(quotes)
        quotes[at[_escaped(b, at, scan.backslashes)]] = 0  # escaped: neither opens nor closes
        trailing = len(chunk) - len(chunk.rstrip(b"\\"))
        scan.backslashes = trailing + (scan.backslashes if trailing == len(chunk) else 0)
    brackets = np.flatnonzero((b == 123) | (b == 125) | (b == 91) | (b == 93))  # {} []
    if not len(brackets):
        scan.in_string ^= int(np.bitwise_xor.reduce(quotes))
        return brackets
    # Whether a string is open at each bracket: the parity of the quotes before it, by
    # the parities of the quotes between brackets (no array as long as the text).
    before = scan.in_string ^ int(np.bitwise_xor.reduce(quotes[: brackets[0]]))
    between = np.bitwise_xor.reduceat(quotes, brackets)
    open_at = np.concatenate([[before], before ^ np.bitwise_xor.accumulate(between[:-1])])
    scan.in_string = before ^ int(np.bitwise_xor.reduce(between))
    return brackets[open_at == 0]


def _edge(
    scan: _Scan, chunk: bytes, at: int, depth: int, step: int, starts: list[int], ends: list[int]
) -> bool:
    """A bracket of the array or of one of its objects, at `at` in the chunk, the depth
    after it; an object's start goes into `starts`, its end into `ends`. False where it
    breaks the shape."""
    if depth < 0 or scan.closed:
        return False
    if step > 0 and depth == 1:  # the array opens
        if scan.opened or chunk[at] != ord("[") or not _only(chunk, scan, at, _BETWEEN):
            return False
        scan.opened = True
    elif step > 0:  # an object opens
        if chunk[at] != _OPEN_OBJECT or not _only(chunk, scan, at, _BETWEEN):
            return False
        starts.append(at)
        return True
    elif depth == 1:  # an object closes
        if chunk[at] != ord("}"):
            return False
        ends.append(at + 1)
    else:  # the array closes
        if not _only(chunk, scan, at, _BETWEEN):
            return False
        scan.closed = True
    scan.outside_from = scan.offset + at + 1
    return True


def _only(chunk: bytes, scan: _Scan, at: int, allowed: bytes) -> bool:
    """Whether the text outside the objects, from where it began up to `at` in this chunk,
    holds only `allowed` bytes."""
    since = max(scan.outside_from - scan.offset, 0)
    return not chunk[since:at].translate(None, allowed)


def _escaped(
    b: npt.NDArray[np.uint8], at: npt.NDArray[np.int64], carried: int
) -> npt.NDArray[np.bool_]:
    """Whether each byte at `at` in the chunk follows an odd run of backslashes (`carried`
    of them at the end of the chunk before)."""
    slashes = np.flatnonzero(b == _BACKSLASH)
    after_carried = (at == 0) & (carried % 2 == 1)
    if not len(slashes):
        return after_carried
    new = np.r_[True, np.diff(slashes) != 1]  # where each run of backslashes starts
    firsts, lasts = slashes[new], slashes[np.r_[new[1:], True]]
    runs = lasts - firsts + 1 + np.where(firsts == 0, carried, 0)
    found = np.minimum(np.searchsorted(lasts, at - 1), len(lasts) - 1)
    return ((lasts[found] == at - 1) & (runs[found] % 2 == 1)) | after_carried


def array_blocks(name: str, stream: IO[bytes], objects: Objects) -> Iterator[LinesBlock]:
    """The objects of a JSON array in blocks (`_records_in_block`), each made one line,
    each keeping its own text."""
    first = 0
    buffer, base = b"", 0  # text read and not yet given, and where it starts in the file
    while first < len(objects.starts):
        last = first + records_in_block(objects.ends[first:], int(objects.starts[first]))
        end = int(objects.ends[last - 1])
        pieces, have = [buffer], base + len(buffer)
        while have < end:
            chunk = stream.read(max(_READ, end - have))
            if not chunk:
                raise OSError("the file was shorter on a second reading")
            pieces.append(chunk)
            have += len(chunk)
        buffer = b"".join(pieces)
        starts, ends = objects.starts[first:last] - base, objects.ends[first:last] - base
        own = [buffer[s:e] for s, e in zip(starts.tolist(), ends.tolist(), strict=True)]
        text = b"\n".join(x.translate(ONE_LINE) for x in own)
        yield LinesBlock(name, objects.lines[first:last].tolist(), text=text, originals=own)
        buffer, base = buffer[end - base :], end
        first = last


class _Document:
    """A JSON document read in chunks: the text still to decode, where decoding is, and
    the line it is on. At least one chunk is kept ahead, so that a value is never cut at
    the end of what was read."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.reader = io.TextIOWrapper(stream, encoding="utf-8", errors="strict")
        self.decoder = json.JSONDecoder(parse_float=JsonNumber, parse_constant=JsonConstant)
        self.text = ""
        self.pos = 0
        self.line = 1  # the line `text` starts on
        self.eof = False
        self._counted_text, self._counted_to, self._lines_before = "", 0, 0  # for `where`

    def peek(self) -> str | None:
        """The next character that is not a separator, or None at the end of the document."""
        while True:
            if not self.eof and len(self.text) - self.pos < _CHUNK:
                chunk = self.reader.read(_CHUNK)
                self.eof = not chunk
                self.line += self.text.count("\n", 0, self.pos)
                self.text, self.pos = self.text[self.pos :] + chunk, 0
            while self.pos < len(self.text) and self.text[self.pos] in " \t\r\n,":
                self.pos += 1
            if self.pos < len(self.text):
                return self.text[self.pos]
            if self.eof:
                return None

    def value(self) -> tuple[Any, str, int]:
        """The next JSON value, its text and its line; raises ValueError or RecursionError
        where the text holds none (reading on first where a value may continue)."""
        while True:
            try:
                record, end = self.decoder.raw_decode(self.text, self.pos)
                break
            except ValueError:
                if self.eof or len(self.text) - self.pos >= 64 * _CHUNK or not self._more():
                    raise
        here = self.where()
        raw, self.pos = self.text[self.pos : end], end
        return record, raw, here

    def where(self) -> int:
        """The line `pos` is on; the text before it is counted once, not at every call."""
        if self._counted_text is not self.text or self._counted_to > self.pos:
            self._counted_text, self._counted_to, self._lines_before = self.text, 0, 0
        self._lines_before += self.text.count("\n", self._counted_to, self.pos)
        self._counted_to = self.pos
        return self.line + self._lines_before

    def after_close(self) -> str:
        """What follows the array's closing bracket (nothing, in a good file)."""
        rest = self.text[self.pos + 1 :].strip()
        return rest or ("" if self.eof else self.reader.read(_CHUNK).strip())

    def _more(self) -> bool:
        chunk = self.reader.read(_CHUNK)
        self.text += chunk
        self.eof = not chunk
        return bool(chunk)


def document_blocks(name: str, stream: IO[bytes]) -> Iterator[ObjectsBlock | Quarantined]:
    """A JSON array of hands (or objects one after another), decoded one object at a time."""
    document = _Document(stream)
    sources: list[str] = []
    records: list[Any] = []
    raws: list[str] = []
    try:
        in_array = document.peek() == "["
        document.pos += in_array
        while (next_char := document.peek()) is not None:
            if in_array and next_char == "]":
                rest = document.after_close()
                if rest:
                    what = "has text after the closing ']' of its array"
                    yield unreadable(name, what, rest[:200].encode())
                break
            try:
                record, raw, line = document.value()
            except (ValueError, RecursionError) as error:
                detail = error.msg if isinstance(error, json.JSONDecodeError) else "nested too deep"
                yield unreadable(
                    f"{name}:{document.where()}",
                    f"is not valid JSON ({detail}); the rest of the file cannot be read",
                    document.text[document.pos : document.pos + 200].encode(),
                )
                break
            if not in_array and not isinstance(record, dict):
                what = "holds a JSON value that is neither an array of hands nor a hand object"
                yield unreadable(f"{name}:{line}", what, raw.encode(), record=True)
                continue
            sources.append(f"{name}:{line}")
            records.append(record)
            raws.append(raw)
            if len(records) >= file_parts.LINES_PER_BLOCK:
                yield ObjectsBlock(sources, records, raws)
                sources, records, raws = [], [], []
    except UnicodeDecodeError as error:
        yield unreadable(
            name,
            f"is not UTF-8 text ({error.reason} at byte {error.start} of a "
            "chunk); the rest of the file cannot be read",
        )
    if records:
        yield ObjectsBlock(sources, records, raws)
