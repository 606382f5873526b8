"""The audit as a standing ledger: what `verify --append` needs beside a plain run.

An append (`append.py`) audits its new files into the audit in one DuckDB transaction,
as a plain run audits them, knowing the hands the audit already holds, and judges the
table rules again where the new hands land. Here: the files' digests, the one writer's
lock on the audit's directory, the stored hand ids looked up a block at a time, the
version of the audit's tables, and the sentences for what stops an append.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb
import pyarrow as pa

from pipeline.helpers import settings
from pipeline.helpers.errors import AuditError
from pipeline.ingest.quarantine import Quarantined
from pipeline.storage.connection import (
    OFFLINE,
    connected,
    has_table,
    holder,
    is_locked,
    not_duckdb,
    refuse_foreign_log,
    writer_config,
)
from pipeline.storage.files import leftovers
from pipeline.storage.stored import RUN_CHAIN, SEALS

# What the audit's tables look like; an append refuses an audit of another version.
# 1: before versions were recorded; 2: runs keep the mode and the inputs' digests, and
# quarantined records keep their players for the table rules; 3: each settlement says
# how it was decided; 4: hands keep their house-rules profile; 5: hands and quarantined
# records keep the digest of their record, and the audit is sealed and chained.
SCHEMA_VERSION = 5
# An append checkpoints once, after its commit: DuckDB is not to do it at the commit.
NO_AUTOMATIC_CHECKPOINT = "1000GB"


class LedgerError(AuditError):
    """An audit that cannot be appended to now, or at all."""


def digest(path: Path) -> str:
    """The SHA-256 of a file's bytes: how the ledger knows a file it has audited."""
    sha = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 22):
            sha.update(chunk)
    return sha.hexdigest()


@contextmanager
def writer_lock(out_dir: Path) -> Iterator[None]:
    """Hold the audit in `out_dir` for one writing run (a lock on the directory itself, so
    nothing is left beside the audit); another run gets a sentence and exit 2."""
    out_dir.mkdir(parents=True, exist_ok=True)
    handle = os.open(out_dir, os.O_RDONLY)
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise LedgerError(
                f"Another handaudit run is writing the audit in {out_dir}; one run writes an "
                "audit at a time: try again when it has finished. The audit is unchanged."
            ) from None
        _clear_leftovers(out_dir)
        yield
    finally:
        os.close(handle)  # and with it the lock


def _clear_leftovers(out_dir: Path) -> None:
    """What a run that was killed left beside the audit (the lock says no run is under way)."""
    for left in leftovers(out_dir):
        if left.is_dir():
            shutil.rmtree(left, ignore_errors=True)
        else:
            left.unlink(missing_ok=True)


def schema_version(con: duckdb.DuckDBPyConnection) -> int:
    """The version of an audit's tables (1 for an audit written before they were kept)."""
    if not has_table(con, "audit_info"):
        return 1
    version = con.execute("SELECT max(schema_version) FROM audit_info").fetchall()[0]
    return int(version[0]) if version and version[0] is not None else 1


# What an append adds to an audit of an older version to bring it to this one (in the
# append's transaction): version 4 kept no record digests (its rows keep none), nor
# seals and a chain (the append seals the audit as it then is).
UPGRADES = {
    4: (
        "ALTER TABLE hands ADD COLUMN record_digest VARCHAR",
        "ALTER TABLE quarantine ADD COLUMN record_digest VARCHAR",
        *(f"ALTER TABLE runs ADD COLUMN {column}" for column in RUN_CHAIN.split(", ")),
        f"CREATE TABLE seals ({SEALS})",
    ),
}


def upgrade(con: duckdb.DuckDBPyConnection, written_by: str) -> None:
    """Bring an audit of a version in UPGRADES to this one, and say so in `audit_info`."""
    version = schema_version(con)
    while version in UPGRADES:
        for statement in UPGRADES[version]:
            con.execute(statement)
        version += 1
        con.execute("INSERT INTO audit_info VALUES (?, ?)", [version, written_by])


def require_version(con: duckdb.DuckDBPyConnection, db: Path) -> None:
    version = schema_version(con)
    if version != SCHEMA_VERSION and version not in UPGRADES:
        raise LedgerError(
            f"The audit {db} was written by another version of handaudit (its tables are "
            f"version {version}; this handaudit appends to version {SCHEMA_VERSION}). Audit "
            "every input again without --append, into a new --out directory, or append "
            "with the version that wrote it."
        )


def audited_digests(con: duckdb.DuckDBPyConnection) -> set[str]:
    """The digests of every file the audit's runs have read."""
    rows = con.execute("SELECT DISTINCT unnest(input_digests) FROM runs").fetchall()
    return {d for (d,) in rows if d}


def repeated_files(files: list[Path]) -> set[int]:
    """The places in `files` of those whose bytes an earlier file has."""
    return repeated_bytes([p.stat().st_size for p in files], lambda i: digest(files[i]))


def repeated_bytes(sizes: list[int], digest_of: Callable[[int], str]) -> set[int]:
    """The places of files (of `sizes` bytes) whose bytes an earlier one has. Only files
    of one size are read for their digests (`digest_of` a place): commonly, none."""
    by_size: dict[int, list[int]] = {}
    for i, size in enumerate(sizes):
        by_size.setdefault(size, []).append(i)
    repeated: set[int] = set()
    for same_size in by_size.values():
        seen: set[str] = set()
        for i in same_size if len(same_size) > 1 else ():
            sha = digest_of(i)
            if sha in seen:
                repeated.add(i)
            seen.add(sha)
    return repeated


def may_replace(db: Path, replace: bool) -> None:
    """A plain run replaces an audit only if it is not a ledger (built by appends, which
    no one run can give back), or `replace` says so."""
    if replace or not db.exists():
        return
    try:
        con = duckdb.connect(str(db), read_only=True, config=OFFLINE)
    except duckdb.Error as error:
        refuse_foreign_log(db, error)
        raise LedgerError(
            f"The audit {db} cannot be read ({not_duckdb(error)}), so whether "
            "this run would replace appended days cannot be told: add --replace to replace "
            "it with this run's audit."
        ) from None
    try:
        appended = con.execute(
            "SELECT count(*), coalesce(sum(len(input_digests)), 0) FROM runs WHERE mode = 'append'"
        ).fetchall()[0]
    except duckdb.Error:
        appended = (0, 0)
    finally:
        con.close()
    if appended[0]:
        raise LedgerError(
            f"The audit {db} is a ledger of {appended[0]:,} appended runs ({appended[1]:,} "
            "files): a plain verify would replace it with this run's inputs alone. Add "
            "--append to add them to it, or --replace to replace it."
        )


class VerifiedHands(set[str]):
    """Hand ids verified before the records being read: this run's, and the stored
    audit's, looked up a block at a time (the audit's ids are never all in memory).

    The stored ids are hashed once, into a temporary table of DuckDB's (8 bytes an id):
    a block's ids are matched against those integers, and only the ids whose hash is
    there are looked up among the stored strings (a scan of every id a block cost 40 ms
    on a million-hand audit)."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        super().__init__()
        self._con = con
        self.stored: set[str] = set()  # ids met that the audit held before this run
        con.execute("CREATE OR REPLACE TEMP TABLE stored_ids AS SELECT hash(hand_id) h FROM hands")

    def copies(self, rejects: Iterable[Quarantined]) -> int:
        """How many of `rejects` are records of a hand the audit held before this run:
        every copy counts."""
        return sum(
            1 for q in rejects if q.check.value == "duplicate_hand" and q.hand_id in self.stored
        )

    def isdisjoint(self, ids: Iterable[object]) -> bool:
        """Whether none of `ids` was verified before; stored ones met become known."""
        asked = [str(i) for i in ids if i not in self]
        if asked:
            found = self._stored_among(asked)
            self.update(found)
            self.stored.update(found)
        return super().isdisjoint(ids)

    def _stored_among(self, asked: list[str]) -> list[str]:
        self._con.register("asked", pa.table({"hand_id": pa.array(asked, pa.string())}))
        try:
            maybe = self._con.execute(
                "SELECT hand_id FROM asked WHERE hash(hand_id) IN (SELECT h FROM stored_ids)"
            ).fetchall()
            if not maybe:
                return []
            again = "SELECT hand_id FROM hands WHERE hand_id IN (SELECT unnest(?::VARCHAR[]))"
            return [h for (h,) in self._con.execute(again, [[h for (h,) in maybe]]).fetchall()]
        finally:
            self._con.unregister("asked")


def connect(db: Path, out_dir: Path, *, read_only: bool) -> duckdb.DuckDBPyConnection:
    """The audit itself, for an append; a reader holding it is named in a sentence (a
    reader may be done in a moment: the append waits a little first)."""
    wait = settings.seconds(*settings.LOCK_WAIT)
    try:
        return connected(db, read_only=read_only, config=writer_config(out_dir), wait=wait)
    except duckdb.Error as error:
        if not is_locked(error):
            raise
        raise LedgerError(
            f"The audit {db} is open in another process ({holder(error)}), and DuckDB lets "
            "no one read a file while it is written: close it and append again."
        ) from None


def write_failure(error: duckdb.Error | OSError, out_dir: Path) -> AuditError:
    """A sentence for a write DuckDB (or the file system) could not complete, naming
    where and why."""
    return AuditError(
        f"The audit in {out_dir} could not be written: {why_not_written(error, out_dir)}. "
        "Nothing of this run was kept: the audit already there, if any, is as it was before it."
    )


def why_not_written(error: duckdb.Error | OSError, out_dir: Path) -> str:
    """Why DuckDB (or the file system) could not write, in words."""
    text = str(error)
    if "No space left" in text:
        return f"the disk holding {out_dir} is full"
    writer = "DuckDB" if isinstance(error, duckdb.Error) else "the file system"
    return f"{writer} could not write it: " + text.splitlines()[0] if text else type(error).__name__
