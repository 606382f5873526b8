"""The files an audit keeps, and where a report, a page or a generated history may be
written: never over an audit.

An audit is its database and the files its directory keeps for it (DuckDB's log, a run's
partial copy and spill directory, the Parquet tables). A target among them, or any
DuckDB database, is refused before anything is computed, as are targets that cannot be
a file (a directory, a missing directory, `-` for a binary format). What is written goes
to a file beside the target and replaces it whole at the end: an interrupted or failed
write leaves the target as it was and nothing beside it.
"""

from __future__ import annotations

import fnmatch
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from pipeline.helpers.errors import AuditError
from pipeline.ingest.sources import SUFFIXES, InputError, input_files

STDOUT = "-"
DB_NAME = "audit.duckdb"
# What an audit's directory holds for it, beside the database: names, and patterns of
# names (the functions below make them).
_OWNED = (
    DB_NAME,
    f"{DB_NAME}.wal",
    f".{DB_NAME}.*",
    ".duckdb-tmp.*",
    "parquet",
    ".parquet.*",
    ".parquet-*",
)
# A DuckDB database file says so in its first block (after an 8-byte checksum).
_DUCKDB_MAGIC = b"DUCK"


def log_of(db: Path) -> Path:
    """DuckDB's write-ahead log of a database."""
    return Path(f"{db}.wal")


def partial_db(out_dir: Path) -> Path:
    """Where this process writes a new audit before it is swapped in."""
    return out_dir / f".{DB_NAME}.{os.getpid()}.partial"


def spill_dir(out_dir: Path) -> Path:
    """Where this process's DuckDB spills what does not fit in its memory limit."""
    return out_dir / f".duckdb-tmp.{os.getpid()}"


def leftovers(out_dir: Path) -> list[Path]:
    """What runs that were killed left in an audit's directory (call it with the writer's
    lock held: no run is under way)."""
    return [*out_dir.glob(f".{DB_NAME}.*.partial*"), *out_dir.glob(".duckdb-tmp.*")]


class TargetError(AuditError):
    """An output that may not, or cannot, be written where it was asked."""


def checked_target(
    target: Path,
    what: str,
    audits: tuple[Path, ...] = (),
    binary: bool = False,
    makes_its_directory: bool = False,
    inputs: tuple[Path, ...] = (),
) -> Path | None:
    """`target` if `what` may be written there, None for standard output (`-`, text
    only); refused in a sentence otherwise. `audits`: databases this command reads,
    whatever their names. `makes_its_directory`: the writer creates a missing one.
    `inputs`: what the audit read (files, directories), never written over."""
    if str(target) == STDOUT:
        if binary:
            raise TargetError(
                f"{what} is binary and is not written to standard output: give a file name."
            )
        return None
    if target.is_dir():
        raise TargetError(f"{target} is a directory: give a file name for {what}.")
    owner = audit_owning(target, audits)
    if owner is not None:
        raise TargetError(
            f"{target} belongs to the audit {owner}: {what} is not written over it (nothing "
            "was written). Give another file name, outside what the audit keeps."
        )
    read = input_holding(target, inputs)
    if read is not None:
        raise TargetError(
            f"{target} is a hand history the audit read (its input {read}): {what} is not "
            "written over it (nothing was written). Give another file name."
        )
    if _is_duckdb(target):
        raise TargetError(
            f"{target} is a DuckDB database: {what} is not written over one (nothing was "
            "written). Give another file name."
        )
    parent = target.parent
    if not parent.is_dir() and not (makes_its_directory and not parent.exists()):
        kind = "is not a directory" if parent.exists() else "does not exist"
        raise TargetError(f"{parent}, where {what} would go, {kind}: nothing was written.")
    if parent.is_dir() and not (target.exists() and not target.is_file()):
        _probe(parent, what)  # a device or a pipe is written to as it is
    return target


def _probe(folder: Path, what: str) -> None:
    """Refuse, before any work, a directory where no file can be made (a read-only one,
    /proc): `what` is written beside its target first, then put in its place."""
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".handaudit-", suffix=".probe"):
            pass
    except OSError as error:
        raise TargetError(
            f"{folder}, where {what} would go, cannot be written ({error.strerror}): "
            "nothing was written."
        ) from None


def audit_owning(target: Path, audits: tuple[Path, ...] = ()) -> Path | None:
    """The audit database whose files include `target`, if any: one of `audits` (its
    log, its partial copies, by the name given or the file it leads to), or the
    audit.duckdb of a directory above `target` that keeps `target` for it."""
    place = _absolute(target)
    for given in audits:
        for db in {_absolute(given), Path(os.path.abspath(given))}:
            if place in (db, log_of(db)) or same_file(place, db):
                return db
            if place.parent == db.parent and fnmatch.fnmatch(place.name, f".{db.name}.*"):
                return db
    for folder in place.parents:
        db = folder / DB_NAME
        if db.exists() and _owned(place.relative_to(folder)):
            return db
    return None


def hand_histories(given: list[Path]) -> list[Path]:
    """The input files of `given` (`input_files`), but for an audit's own files: one
    named is refused in a sentence, those found below a named directory are passed over
    (an audit read into itself would grow with its own output)."""
    files = []
    for file in input_files(given):
        audit = audit_owning(file)
        if audit is None:
            files.append(file)
        elif any(same_file(file, named) for named in given):
            raise TargetError(
                f"{file} is a file of the audit {audit}, not a hand history: give the "
                "hand-history files."
            )
    if not files:
        named = ", ".join(map(str, given))
        raise InputError(f"No hand-history files in {named}: only an audit's own files.")
    return files


def input_holding(target: Path, inputs: tuple[Path, ...]) -> Path | None:
    """The input that `target` is, or the input directory it would be read from (a
    hand-history file's name below it), if any."""
    place = _absolute(target)
    for given in inputs:
        read = _absolute(given)
        if place == read or same_file(place, read):
            return given
        if read in place.parents and place.name.endswith(SUFFIXES):
            return given
    return None


def _owned(relative: Path) -> bool:
    first = relative.parts[0]
    return any(fnmatch.fnmatch(first, pattern) for pattern in _OWNED)


def _absolute(path: Path) -> Path:
    """The path as the file system finds it: links followed, `..` resolved."""
    return Path(os.path.realpath(path))


def same_file(a: Path, b: Path) -> bool:
    """Two names of one file (a hard link included)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _is_duckdb(path: Path) -> bool:
    if not path.is_file():  # a device or a pipe is written to, never read here
        return False
    try:
        with path.open("rb") as f:
            return f.read(12)[8:12] == _DUCKDB_MAGIC
    except OSError:
        return False


@contextmanager
def replaced_whole(target: Path) -> Iterator[Path]:
    """A file beside `target` to write; it replaces `target` when the block ends well,
    and is removed when it does not. A target that is not a file (a device such as
    /dev/stdout, a pipe) is written to as it is."""
    if target.exists() and not target.is_file():
        yield target
        return
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    try:
        yield partial
        os.replace(partial, target)
    finally:
        with suppress(FileNotFoundError):
            partial.unlink()


def write_whole(target: Path, text: str) -> None:
    """Text into `target`, whole or not at all."""
    try:
        with replaced_whole(target) as partial:
            partial.write_text(text, encoding="utf-8")
    except OSError as error:
        raise TargetError(
            f"{target} could not be written ({error.strerror}): nothing was written."
        ) from None
