"""Opening an audit's DuckDB database, one way for every command: the settings of a run
that writes one (a memory cap that spills to disk, in the audit's own spill directory),
a database another process holds told apart from other failures, and a log beside it
that DuckDB will not replay said in a sentence."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import duckdb

from pipeline.helpers import settings
from pipeline.helpers.errors import AuditError
from pipeline.storage.files import log_of, spill_dir

RETRY_SECONDS = 0.25
# Every connection works offline: DuckDB would otherwise fetch an extension from the
# internet to open a file of another kind (a SQLite database given as the audit, say).
OFFLINE: dict[str, Any] = {
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
}


class ForeignLogError(AuditError):
    """A log beside the audit that DuckDB will not replay into it."""


def writer_config(out_dir: Path) -> dict[str, Any]:
    """DuckDB's settings for a run writing an audit in `out_dir`. DuckDB keeps what it may
    in memory; a cap (HANDAUDIT_DUCKDB_MEMORY) makes it spill to disk instead, so the
    audit's memory does not grow with the input."""
    return {
        "memory_limit": settings.size(*settings.DUCKDB_MEMORY),
        "temp_directory": str(spill_dir(out_dir)),
    }


def connected(
    db: Path, *, read_only: bool, config: dict[str, Any] | None = None, wait: float = 0.0
) -> duckdb.DuckDBPyConnection:
    """A connection to `db`, tried again for up to `wait` seconds while another process
    holds it (`is_locked` tells that error from the others, which are raised at once)."""
    waited = 0.0
    while True:
        try:
            con = duckdb.connect(str(db), read_only=read_only, config=OFFLINE | (config or {}))
            if not read_only:  # times written in UTC, whatever the machine's zone (as
                con.execute("SET TimeZone = 'UTC'")  # the Spark engine's tasks write them)
            return con
        except duckdb.Error as error:
            refuse_foreign_log(db, error)
            if not is_locked(error) or waited >= wait:
                raise
        time.sleep(RETRY_SECONDS)
        waited += RETRY_SECONDS


def is_locked(error: duckdb.Error) -> bool:
    """Whether DuckDB failed because another process holds the file."""
    return "lock" in str(error).lower()


def holder(error: duckdb.Error) -> str:
    """The process DuckDB says holds the file, as far as it says."""
    found = re.search(r"PID \d+", str(error))
    return found.group(0) if found else "a reader or a writer"


def refuse_foreign_log(db: Path, error: duckdb.Error) -> None:
    """A log beside `db` that DuckDB will not replay into it (another file's, or one
    damaged) is said in a sentence that says what to do."""
    text = str(error)
    if "WAL" not in text or not log_of(db).exists():
        return
    raise ForeignLogError(
        f"{log_of(db)} is not a log DuckDB can replay into {db} ({text.splitlines()[0]}). "
        f"It may be damaged, or belong to another copy of the audit: move it away (the "
        f"audit is then what {db.name} holds), or put back the {db.name} it came with."
    )


def not_duckdb(error: duckdb.Error) -> str:
    """What DuckDB's failure to open a file says of it, in a few words: the first line of
    the error, or which other kind of file it took it for."""
    text = str(error)
    other = re.search(r'Extension "(\w+)" is an existing extension', text)
    if other:
        kind = other.group(1)
        return f"DuckDB takes it for a file of its {kind} extension, which handaudit does not load"
    return text.splitlines()[0] if text else type(error).__name__


def has_table(con: duckdb.DuckDBPyConnection, *names: str) -> bool:
    """Whether the database holds every table named, in its own schema (a table of the
    same name elsewhere is not one of them)."""
    found = con.execute(
        "SELECT count(DISTINCT table_name) FROM information_schema.tables "
        "WHERE table_schema = 'main' AND table_catalog = current_database() "
        "AND list_contains(?, table_name)",
        [list(names)],
    ).fetchall()
    return bool(found) and found[0][0] == len(set(names))


def has_column(con: duckdb.DuckDBPyConnection, table: str, column: str) -> bool:
    """Whether the database's table `table` has the column `column` (an audit written by
    an older version may not)."""
    found = con.execute(
        "SELECT count(*) FROM information_schema.columns WHERE table_schema = 'main' "
        "AND table_catalog = current_database() AND table_name = ? AND column_name = ?",
        [table, column],
    ).fetchall()
    return bool(found) and bool(found[0][0])
