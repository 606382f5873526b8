"""The input cut into units, one per Spark task, and each unit read as the local engine
reads a file (no pyspark here: the driver plans, the executors read).

A unit is a whole file; or, for a large plain JSON Lines file, a range of its bytes;
or, for a large local Parquet file, a run of its row groups. The driver cuts the byte
ranges by size alone, reading nothing, and the row groups by the rows its footer counts.
A Parquet unit's rows are numbered within the file by the reader itself. A task owns the lines that
start inside its range: it skips the end of a line begun before it and reads on past
its end to finish its last line. It numbers its lines from 1 and counts them; the
driver adds the lines of the file's earlier units (`Unit.first_line`), which tasks
count over the same bytes they audit, so no pass over the input numbers lines alone.

Files are opened with pyarrow's file systems: local paths, and the URIs pyarrow knows
(s3://, gs://, hdfs://).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import urlparse

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from pipeline.ingest.sources import (
    SUFFIXES,
    FilePart,
    InputError,
    line_range_blocks,
    parquet_runs,
    read_blocks,
)
from pipeline.storage.files import hand_histories
from pipeline.storage.ledger import digest, repeated_bytes

# A task audits at most about this many bytes of a JSON Lines file
# (HANDAUDIT_SPARK_SPLIT_BYTES sets it).
SPLIT_BYTES = 64 << 20
# How much more is read at a time to finish a range's last line.
_TAIL = 1 << 16
# About the bytes of a hand's record in JSON Lines: a Parquet unit holds about
# SPLIT_BYTES / RECORD_BYTES rows, the records of a JSON Lines unit.
RECORD_BYTES = 4096


def is_local(path: str) -> bool:
    """Whether a path names this machine's file system (no scheme, or file:)."""
    scheme = urlparse(path).scheme
    return scheme in ("", "file") or len(scheme) == 1  # a Windows drive letter


@dataclass(frozen=True)
class InputFile:
    """A file of the input in the local engine's order: where it is (`uri`, a local
    absolute path or a URI), the name sources give it, and its size."""

    number: int
    uri: str
    name: str
    size: int


@dataclass(frozen=True)
class Unit:
    """What one task audits: a whole file, the lines starting in bytes [start, end), or
    the row groups `row_groups` of a Parquet file."""

    number: int  # its place in the input's order: units in this order are the input's
    file: InputFile
    start: int = 0
    end: int | None = None  # None: the whole file (or its row groups)
    row_groups: range | None = None
    run: str = ""  # an append's: its files are named apart from the audit's earlier ones

    @property
    def label(self) -> str:
        """What the files the unit's task writes are named by (the same on a retry)."""
        if self.row_groups is not None:
            return f"{self.run}{self.file.number:05}-g{self.row_groups.start:011}"
        return f"{self.run}{self.file.number:05}-{self.start:012}"


def list_inputs(inputs: Sequence[str]) -> list[InputFile]:
    """The files of `inputs` in the local engine's order (local ones by `hand_histories`, so
    that they are named as it names them; others sorted below each given path)."""
    found: list[tuple[str, str, int]] = []
    for given in inputs:
        if is_local(given):
            for local in hand_histories([Path(given.removeprefix("file:"))]):
                found.append((os.path.abspath(local), str(local), local.stat().st_size))
        else:
            found.extend((uri, uri, size) for uri, size in _remote_files(given))
    return [InputFile(n, uri, name, size) for n, (uri, name, size) in enumerate(found)]


def once(files: list[InputFile]) -> tuple[list[InputFile], int]:
    """The files in order, but for those whose bytes an earlier one has (a file named
    twice, or copied), renumbered; and how many were left out, as the local engine
    leaves them out."""
    repeated = repeated_bytes([f.size for f in files], lambda i: file_digest(files[i]))
    kept = [f for i, f in enumerate(files) if i not in repeated]
    return [replace(f, number=n) for n, f in enumerate(kept)], len(repeated)


def file_digest(file: InputFile) -> str:
    """The SHA-256 of a file's bytes, as the ledger records it (`storage.ledger.digest`)."""
    if is_local(file.uri):
        return digest(Path(file.uri.removeprefix("file:")))
    fs, path = pafs.FileSystem.from_uri(file.uri)
    sha = hashlib.sha256()
    with fs.open_input_stream(path) as stream:
        while chunk := stream.read(1 << 22):
            sha.update(chunk)
    return sha.hexdigest()


def _remote_files(given: str) -> list[tuple[str, int]]:
    fs, root = pafs.FileSystem.from_uri(given)
    scheme = given.split("://", 1)[0] + "://"
    info = fs.get_file_info(root)
    if info.type == pafs.FileType.File:
        listed = [info]
    else:
        listed = fs.get_file_info(pafs.FileSelector(root, recursive=True))
    files = sorted(
        (scheme + i.path, i.size or 0)
        for i in listed
        if i.type == pafs.FileType.File and i.path.endswith(SUFFIXES)
    )
    if not files:
        raise InputError(f"No hand-history files in {given} (looked for {', '.join(SUFFIXES)}).")
    return files


def plan_units(files: Sequence[InputFile], split_bytes: int = SPLIT_BYTES) -> list[Unit]:
    """Every file a unit, but plain JSON Lines files larger than `split_bytes`, cut into
    ranges of that size, and local Parquet files of more rows than such a range holds,
    cut into runs of row groups of about that many rows."""
    units: list[Unit] = []
    for file in files:
        if file.name.endswith(".jsonl") and file.size > split_bytes:
            for start in range(0, file.size, split_bytes):
                end = min(start + split_bytes, file.size)
                units.append(Unit(len(units), file, start, end))
        elif file.name.endswith(".parquet") and is_local(file.uri):
            for groups in row_group_units(file, max(1, split_bytes // RECORD_BYTES)):
                units.append(Unit(len(units), file, row_groups=groups))
        else:
            units.append(Unit(len(units), file))
    return units


def row_group_units(file: InputFile, rows: int) -> list[range | None]:
    """A local Parquet file's row groups in runs of about `rows` rows; [None] (the file
    whole) when it is one such run, or cannot be cut: its footer unreadable (the task
    then says so as the local engine does), or row groups too large to read whole
    (`parquet_runs`: the local reader reads those in batches)."""
    try:
        meta = pq.read_metadata(file.uri.removeprefix("file:"))
    except (pa.ArrowException, OSError):
        return [None]
    sizes = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
    if parquet_runs(sizes) is None or sum(sizes) <= rows:
        return [None]
    units: list[range | None] = []
    first, held = 0, 0
    for group, size in enumerate(sizes):
        held += size
        if held >= rows:
            units.append(range(first, group + 1))
            first, held = group + 1, 0
    if first < len(sizes):
        units.append(range(first, len(sizes)))
    return units if len(units) > 1 else [None]


class UnitReader:
    """A unit's blocks, as the local reader gives its file's; `lines` once read: the
    lines the unit owns (for a range; the next range's first line follows them)."""

    def __init__(self, unit: Unit) -> None:
        self.unit = unit
        self.lines = 0

    def blocks(self) -> Iterator[FilePart]:
        unit = self.unit
        if unit.end is None:
            with _local_copy(unit.file) as path:
                yield from read_blocks(path, unit.file.name, unit.row_groups)
            return
        fs, where = _filesystem(unit.file.uri)
        with fs.open_input_file(where) as handle:
            text = owned_text(handle, unit.start, unit.end, unit.file.size)
        self.lines = text.count(b"\n")
        if text:
            yield from line_range_blocks(unit.file.name, text)


def owned_text(handle: pafs.NativeFile, start: int, end: int, size: int) -> bytes:
    """The lines that start in bytes [start, end) of a file of `size` bytes, whole."""
    text = handle.read_at(end - start, start)
    if start > 0 and handle.read_at(1, start - 1) != b"\n":
        cut = text.find(b"\n")  # the end of a line the range before owns
        text = b"" if cut < 0 else text[cut + 1 :]
    if not text or text.endswith(b"\n"):
        return text
    tail = [text]
    at = end
    while at < size:
        more = handle.read_at(min(_TAIL, size - at), at)
        cut = more.find(b"\n")
        if cut >= 0:
            tail.append(more[: cut + 1])
            break
        tail.append(more)
        at += len(more)
    return b"".join(tail)


def _filesystem(uri: str) -> tuple[pafs.FileSystem, str]:
    if is_local(uri):
        return pafs.LocalFileSystem(), uri.removeprefix("file:")
    return pafs.FileSystem.from_uri(uri)


@contextmanager
def _local_copy(file: InputFile) -> Iterator[Path]:
    """The file as a local path: itself, or a copy of a remote one for the reader."""
    if is_local(file.uri):
        yield Path(file.uri.removeprefix("file:"))
        return
    fs, path = pafs.FileSystem.from_uri(file.uri)
    with tempfile.TemporaryDirectory(prefix="handaudit-") as scratch:
        copy = Path(scratch) / Path(file.name).name
        with fs.open_input_stream(path) as source, copy.open("wb") as target:
            shutil.copyfileobj(source, target, 1 << 22)
        yield copy
