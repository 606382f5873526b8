"""Finding input files and reading them in bounded blocks, each record with its provenance.

JSON Lines (plain or gzip) are read as blocks of lines; a JSON file holding a
plain array of objects as blocks of its objects, each made one line (json_array.py);
any other JSON file (objects one after another, or something broken) is decoded one
object at a time; Parquet files by row groups. A file that cannot be read at all, or
whose rest cannot be, yields an `unreadable` quarantine row instead of stopping the run.
"""

from __future__ import annotations

import gzip
import io
import json
import typing
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.helpers.errors import AuditError
from pipeline.ingest import parts as file_parts
from pipeline.ingest.hand_history import JsonConstant, JsonNumber
from pipeline.ingest.json_array import Objects, array_blocks, array_objects, document_blocks
from pipeline.ingest.parts import (
    ArrowBlock,
    LinesBlock,
    ObjectsBlock,
    records_in_block,
    unreadable,
)
from pipeline.ingest.quarantine import Quarantined

SUFFIXES = (".jsonl", ".json", ".jsonl.gz", ".json.gz", ".parquet")
FAULT_LIST = "faults.json"
ROWS_PER_BATCH = 16384
_CHUNK = 1 << 20
_READ_SIZE = 1 << 23
_LINE_FEED, _OPEN_BRACE = ord("\n"), ord("{")


class InputError(AuditError):
    """An input path that does not exist or holds no hand-history file."""


# Text fields of few distinct values (cards, row names, hand values, ...): Parquet
# stores them dictionary-encoded, and reading them as Arrow dictionaries skips
# building a string for every value (a third of the read time); the checks then look
# at each distinct text once.
DICTIONARY_FIELDS = frozenset(
    {
        *("boards", "cards", "top", "middle", "bottom", "dealt", "discard", "row", "value"),
        *("joker_as", "home_run", "reason", "declare", "natural", "scoring"),
    }
)
_LIST_LEVELS = frozenset({"list", "element", "item", "array", "bag"})


def dictionary_columns(schema: pq.ParquetSchema) -> tuple[str, ...]:
    """The paths of the nested text columns of DICTIONARY_FIELDS in a Parquet schema."""
    paths = []
    for i in range(len(schema)):
        column = schema.column(i)
        names = [n for n in column.path.split(".") if n not in _LIST_LEVELS]
        nested = column.max_repetition_level > 0  # in a list
        if column.physical_type == "BYTE_ARRAY" and nested and names[-1] in DICTIONARY_FIELDS:
            paths.append(column.path)
    return tuple(paths)


@dataclass(frozen=True)
class RowGroupsBlock:
    """Whole row groups of a Parquet file, numbered from `first_row`, not read yet:
    the thread that audits the block reads them."""

    path: str
    first_row: int
    row_groups: tuple[int, ...]
    dictionaries: tuple[str, ...] = ()
    name: str = ""  # what sources call the file (its path when empty)

    @property
    def source(self) -> str:
        return self.name or self.path

    def read(self, threads: bool = True) -> list[ArrowBlock | Quarantined]:
        """The rows, or, if some row group cannot be read, the others and a reject each."""
        try:
            parquet = pq.ParquetFile(
                self.path, pre_buffer=False, read_dictionary=list(self.dictionaries) or None
            )
            # Arrow reads nested dictionaries one row group at a time.
            groups = [parquet.read_row_group(g, use_threads=threads) for g in self.row_groups]
            return [ArrowBlock(self.source, self.first_row, pa.concat_tables(groups))]
        except (pa.ArrowException, OSError):
            pass  # read them plainly one by one, to keep every row group that can be read
        try:
            parquet = pq.ParquetFile(self.path, pre_buffer=False)
        except (pa.ArrowException, OSError) as error:  # gone or changed since it was listed
            return [unreadable(self.source, f"from row {self.first_row} cannot be read ({error})")]
        parts: list[ArrowBlock | Quarantined] = []
        row = self.first_row
        for group in self.row_groups:
            try:
                parts.append(
                    ArrowBlock(self.source, row, parquet.read_row_group(group, use_threads=threads))
                )
            except (pa.ArrowException, OSError) as error:
                parts.append(
                    unreadable(
                        self.source, f"row group {group} (from row {row}) cannot be read ({error})"
                    )
                )
            row += parquet.metadata.row_group(group).num_rows
        return parts


Block = LinesBlock | ObjectsBlock | ArrowBlock | RowGroupsBlock
# What reading a file yields: blocks of records, and a quarantine row for each part of
# it that cannot be read.
FilePart = Block | Quarantined


def fault_list_of(history: Path) -> Path:
    """Where `generate` lists the faults it put in a history: beside it, named after it."""
    return history.with_name(f"{history.name}.{FAULT_LIST}")


def input_files(paths: list[Path]) -> list[Path]:
    """Every hand-history file named, or found recursively below a named directory, sorted,
    by its absolute path. In a directory, fault lists (`faults.json`, and `generate`'s
    `NAME.faults.json`) are not hand histories, and are passed over."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(
                p
                for p in path.rglob("*")
                if p.is_file() and p.name.endswith(SUFFIXES) and not p.name.endswith(FAULT_LIST)
            )
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            raise InputError(f"The input {path} does not exist.")
    files = [f.absolute() for f in files]  # records name their file as it is anywhere
    if not files:
        raise InputError(
            "No hand-history files in "
            + ", ".join(map(str, paths))
            + " (looked for "
            + ", ".join(SUFFIXES)
            + ")."
        )
    return files


def loads(text: str | bytes) -> Any:
    """json.loads that keeps the literal text of fractional numbers and flags NaN/Infinity."""
    return json.loads(text, parse_float=JsonNumber, parse_constant=JsonConstant)


def read_blocks(
    path: Path, name: str | None = None, row_groups: range | None = None
) -> Iterator[FilePart]:
    """The blocks of one file; never raises for a bad file, yields quarantine rows instead.

    `name`: what the sources call the file (its path by default), for a file read
    from a copy, such as a Spark executor's. `row_groups`: of a Parquet file, only the
    blocks of these row groups (whole runs of `parquet_runs`), their rows numbered
    within the file: the part a Spark task audits.
    """
    name = str(path) if name is None else name
    try:
        if name.endswith(".parquet"):
            yield from _parquet_blocks(path, name, row_groups)
            return
        with _open(path, name) as stream:
            head = _peek(stream)
            if head is None:
                yield unreadable(name, "is empty: it holds no hand records")
            elif name.endswith((".jsonl", ".jsonl.gz")) or (head == b"{" and _is_jsonl(stream)):
                yield from _line_blocks(name, stream)
            elif head == b"[" and (objects := _objects_of(path, name)) is not None:
                with _open(path, name) as again:
                    yield from array_blocks(name, again, objects)
            else:
                yield from document_blocks(name, stream)
    except (OSError, EOFError, zlib.error, pa.ArrowException) as error:
        yield unreadable(name, f"cannot be read: {error}")


def _objects_of(path: Path, name: str) -> Objects | None:
    """Where the objects of a JSON array file are, when it is a plain array of objects."""
    with _open(path, name) as stream:
        return array_objects(stream)


def _open(path: Path, name: str) -> IO[bytes]:
    """The file's bytes (decompressed), past a byte order mark at its start: UTF-8 text
    may begin with one (as some editors on Windows write it), and it is no part of JSON."""
    stream = (
        typing.cast(IO[bytes], gzip.open(path, "rb"))  # noqa: SIM115 (the caller closes it)
        if name.endswith(".gz")
        else path.open("rb")
    )
    if stream.peek(len(_BOM))[: len(_BOM)] == _BOM:  # type: ignore[attr-defined]
        stream.read(len(_BOM))
    return stream


_BOM = b"\xef\xbb\xbf"


def _peek(stream: IO[bytes]) -> bytes | None:
    """The first non-blank byte, leaving the stream where it was (a BufferedReader)."""
    while True:
        chunk = stream.peek(_CHUNK) if hasattr(stream, "peek") else b""
        stripped = chunk.lstrip()
        if stripped:
            return stripped[:1]
        if not chunk or not stream.read(len(chunk)):
            return None


def _is_jsonl(stream: IO[bytes]) -> bool:
    """A .json file starting with an object is read as JSON Lines when its first line is whole."""
    first = stream.peek(_CHUNK).lstrip().split(b"\n", 1)[0]  # type: ignore[attr-defined]
    try:
        return isinstance(loads(first), dict)
    except (ValueError, RecursionError):
        return False


def _line_blocks(name: str, stream: IO[bytes]) -> Iterator[FilePart]:
    """Blocks of lines (`_records_in_block`). The text is read in large chunks and cut at
    line ends, with no object made per line: reading line by line hands the GIL back and
    forth at every small read, which starves this thread beside workers."""
    parts: list[bytes] = []  # text read and not yet given, in order
    ends = np.zeros(0, np.int64)  # where each whole line of it ends, in the join of `parts`
    size = 0  # bytes in `parts`
    n = 0  # lines of the file before `parts`
    try:
        while True:
            chunk = stream.read(_READ_SIZE)
            if chunk:
                feeds = np.flatnonzero(np.frombuffer(chunk, np.uint8) == _LINE_FEED)
                ends = np.concatenate([ends, feeds + size])
                parts.append(chunk)
                size += len(chunk)
            elif size > (ends[-1] + 1 if len(ends) else 0):  # the last line has no line feed
                ends = np.append(ends, size)
            if _block_ready(ends, 0, chunk):
                data = parts[0] if len(parts) == 1 else b"".join(parts)
                given = 0  # the first byte not yet given
                while _block_ready(ends, given, chunk):
                    block_ends, ends = np.split(ends, [records_in_block(ends, given)])
                    last = int(block_ends[-1])
                    yield _lines_block(name, n, data[given:last], given, block_ends)
                    n += len(block_ends)
                    given = last + 1
                parts = [data[given:]] if given < len(data) else []
                ends -= given
                size = len(data) - given
            if not chunk:
                break
    except (OSError, EOFError, zlib.error) as error:
        if len(ends):
            yield _lines_block(name, n, b"".join(parts)[: ends[-1]], 0, ends)
            n += len(ends)
        yield unreadable(
            name, f"is corrupt after line {n}; the rest of it cannot be read ({error})"
        )


def _block_ready(ends: npt.NDArray[np.int64], given: int, chunk: bytes) -> bool:
    """Whether the lines ending at `ends` (text before `given` is given) fill a block, or
    end the file (no more `chunk`)."""
    return bool(len(ends)) and (
        not chunk
        or len(ends) >= file_parts.LINES_PER_BLOCK
        or ends[-1] - given >= file_parts.BLOCK_BYTES
    )


def _lines_block(
    name: str, n: int, text: bytes, start: int, ends: npt.NDArray[np.int64]
) -> LinesBlock:
    """The lines after line `n` of the file whose text is `text` (starting at `start` in
    the text the `ends` are offsets in). When each starts a JSON object and none ends
    with a carriage return, they are taken as they are; else blank lines are skipped and
    carriage returns dropped."""
    firsts = np.concatenate([[start - 1], ends[:-1]]) + 1 - start  # each line's start
    ordinary = b"\r" not in text and int(firsts[-1]) < len(text)  # the last one not empty
    if ordinary and bool((np.frombuffer(text, np.uint8)[firsts] == _OPEN_BRACE).all()):
        numbers = list(range(n + 1, n + 1 + len(ends)))
        return LinesBlock(name, numbers, text=text, ends=ends - start)
    numbers = []
    lines = []
    for number, line in enumerate(text.split(b"\n"), n + 1):
        if line.strip():
            numbers.append(number)
            lines.append(line[:-1] if line.endswith(b"\r") else line)  # CR LF's CR alone
    return LinesBlock(name, numbers, lines)


def line_range_blocks(name: str, text: bytes) -> Iterator[FilePart]:
    """The lines of `text`, a run of whole lines cut from JSON Lines file `name` elsewhere
    (a Spark task's byte range), as `_line_blocks` gives a file's: numbered from 1 at
    the text's first line, blank lines skipped, a carriage return before a line feed
    dropped. The caller adds the lines before the text to the numbers."""
    return _line_blocks(name, io.BytesIO(text))


def parquet_runs(sizes: Sequence[int], first: int = 0) -> list[range] | None:
    """The row groups of a Parquet file of row groups of `sizes` rows (numbered from
    `first`), as the blocks the local reader audits them in: runs of whole row groups
    of up to ROWS_PER_BATCH rows (a larger row group alone). None where the row groups
    are too large to read whole: the file is then read in batches, in one piece."""
    if not sizes or max(sizes) > 4 * ROWS_PER_BATCH:
        return None
    runs: list[range] = []
    group = 0
    while group < len(sizes):
        start, rows = group, 0
        while group < len(sizes) and (rows == 0 or rows + sizes[group] <= ROWS_PER_BATCH):
            rows += sizes[group]
            group += 1
        runs.append(range(first + start, first + group))
    return runs


def _parquet_blocks(path: Path, name: str, part: range | None = None) -> Iterator[FilePart]:
    try:
        # pre_buffer off: buffering ahead keeps every column chunk read so far alive
        # until the reader finishes, so memory grew with the file.
        parquet = pq.ParquetFile(path, pre_buffer=False)
    except (pa.ArrowException, OSError) as error:
        yield unreadable(name, f"is not a readable Parquet file ({error})")
        return
    meta = parquet.metadata
    sizes = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
    part = part or range(len(sizes))
    runs = parquet_runs(sizes[part.start : part.stop], part.start)
    if runs is not None:
        # Row groups of a modest size: whoever audits a block reads it (a worker).
        dictionaries = dictionary_columns(parquet.schema)
        row = 1 + sum(sizes[: part.start])
        for run in runs:
            yield RowGroupsBlock(
                str(path),
                row,
                tuple(run),
                dictionaries,
                "" if name == str(path) else name,
            )
            row += sum(sizes[g] for g in run)
        return
    assert len(part) == len(sizes), "a Parquet file of large row groups is read whole"
    row = 1
    try:
        for batch in parquet.iter_batches(batch_size=ROWS_PER_BATCH):
            yield ArrowBlock(name, row, batch)
            row += batch.num_rows
    except (pa.ArrowException, OSError) as error:
        yield unreadable(name, f"is corrupt from row {row} on; the rest cannot be read ({error})")
