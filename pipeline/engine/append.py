"""`verify --append`: new inputs added to the audit already in DIR, as one run over all.

1. Each file's digest is compared with those the audit's runs have read: a file read
   before (or twice now) is skipped whole.
2. In one DuckDB transaction on the audit itself, the other files are audited exactly
   as a plain run audits them, knowing which hand ids the audit already verified (a
   hand arriving again is `duplicate_hand`, as it would be in one run); then the table
   rules are judged again for every table the new records touch, from its first new
   hand number on (the hands before it cannot change), and the run's row is written.
   Anything that fails rolls the transaction back: the audit is as it was.
3. The commit goes to DuckDB's write-ahead log; DuckDB checkpoints it into the file
   when the log passes `ledger.LOG_LIMIT` (a first checkpoint in a process costs about
   a second per 400 MB of audit, whatever the append added).

The audit is open for writing all the append long: DuckDB lets no other process open
it meanwhile, and a reader is told so in a sentence.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import duckdb
import pyarrow as pa

from pipeline.core.checks.table import QUARANTINE_APPEARANCES, check_table_rules
from pipeline.engine.run import Run, RunSummary, audit_files, run_row, summarize
from pipeline.helpers.stages import Stages
from pipeline.storage.ledger import (
    LOG_LIMIT,
    VerifiedHands,
    audited_digests,
    connect,
    digest,
    require_version,
)
from pipeline.storage.store import DB_NAME, NAME_AUDITED_RECORDS, AuditStore, insert_rows
from pipeline.storage.stored import COLUMNS

# The tables the new records touch, from their first new hand number on: those of the
# new hands and new quarantined records, and of a quarantined record whose hand the new
# input verifies (the rules leave such a record out from now on).
_SCOPE = """
SELECT table_id, min(hand_no) AS from_no FROM (
    SELECT table_id, hand_no FROM new_hands
    UNION ALL
    SELECT table_id, hand_no FROM quarantine_appearances WHERE rowid > {after}
    UNION ALL
    SELECT table_id, hand_no FROM quarantine_appearances
    WHERE hand_id IN (SELECT hand_id FROM new_hands)
) GROUP BY table_id
"""
# The hands an append judged: its own, and those the rules across hands judged again.
_JUDGED = (
    "(hand_id IN (SELECT hand_id FROM new_hands) "
    "OR hand_id IN (SELECT hand_id FROM table_hands WHERE judged))"
)


class _Joined(AuditStore):
    """The store's buffers, written into the audit's own connection and transaction (one
    connection: DuckDB's cursors would each be a transaction of their own); the new
    hands are noted in `new_hands`."""

    def __init__(self, con: duckdb.DuckDBPyConnection, out_dir: Path, stages: Stages) -> None:
        self.out_dir, self.stages, self.con = out_dir, stages, con
        self.final = out_dir / DB_NAME
        self._pending: dict[str, list[pa.Table]] = {name: [] for name in COLUMNS}
        self._inserting = {}
        con.execute(
            "CREATE TEMP TABLE new_hands (hand_id VARCHAR, table_id VARCHAR, hand_no BIGINT)"
        )

    def _insert(self, table_name: str) -> None:
        parts = self._pending[table_name]
        if not parts:
            return
        self._pending[table_name] = []
        rows = pa.concat_tables(parts, promote_options="permissive")
        with self.stages.stage("store"):
            insert_rows(self.con, table_name, rows)
            if table_name == "hands":
                insert_rows(self.con, "new_hands", rows.select(["hand_id", "table_id", "hand_no"]))


def append_to(
    run: Run, files: list[Path], out_dir: Path, stages: Stages, workers: int
) -> RunSummary:
    """Add `files` to the audit in `out_dir` (it exists; the caller holds the writer lock)."""
    db = out_dir / DB_NAME
    con = connect(db, out_dir, read_only=False)
    try:
        require_version(con, db)
        fresh = _unread(run, files, audited_digests(con))
        con.execute(f"SET checkpoint_threshold = '{LOG_LIMIT}'")
        con.execute("PRAGMA disable_checkpoint_on_shutdown")
        con.execute("BEGIN TRANSACTION")
        try:
            summary = _append(run, fresh, con, db, stages, workers)
            con.execute("COMMIT")
        except BaseException:
            _roll_back(con)
            raise
    finally:
        con.close()
        run.progress.close()
    return summary


def _append(
    run: Run,
    files: list[Path],
    con: duckdb.DuckDBPyConnection,
    db: Path,
    stages: Stages,
    workers: int,
) -> RunSummary:
    """The new records into the audit, the rules judged again, the run's row: uncommitted."""
    after = _last_rowid(con, "quarantine_appearances")
    quarantined = _last_rowid(con, "quarantine")
    seen = VerifiedHands(con)
    store = _Joined(con, db.parent, stages)
    audit_files(run, files, store, stages, workers, seen=seen)
    run.hands_already_audited = seen.stored_found
    with stages.stage("table rules"):
        new = f"(SELECT * FROM quarantine WHERE rowid > {quarantined})"
        con.execute(QUARANTINE_APPEARANCES.format(source=new))
        con.execute(NAME_AUDITED_RECORDS.format(after=quarantined))
        check_table_rules(store, _SCOPE.format(after=after))
    summary = summarize(con, run, db, _JUDGED)
    summary.appended = _ledger_counts(con, run)
    insert_rows(con, "runs", run_row(run, summary))
    return summary


def _unread(run: Run, files: list[Path], audited: set[str]) -> list[Path]:
    """The files not read before (by digest), in order; the run keeps every digest."""
    fresh = []
    for path in files:
        sha = digest(path)
        if sha in audited:
            run.files_skipped += 1
            continue
        audited.add(sha)
        run.digests.append(sha)
        fresh.append(path)
    return fresh


def _roll_back(con: duckdb.DuckDBPyConnection) -> None:
    """Undo the merge; a DuckDB that has failed for good has undone it already (its
    write-ahead log holds no commit of it)."""
    with contextlib.suppress(duckdb.Error):
        con.execute("ROLLBACK")


def _ledger_counts(con: duckdb.DuckDBPyConnection, run: Run) -> dict[str, int]:
    found = con.execute(
        f"SELECT count(*) FILTER (WHERE {_JUDGED}), count(*), "
        "count(*) FILTER (WHERE status = 'diverged') FROM hands"
    ).fetchall()[0]
    judged, hands, diverged = found or (0, 0, 0)
    return {
        "files_skipped": run.files_skipped,
        "already_audited": run.hands_already_audited,
        "judged": judged,
        "hands": hands,
        "diverged": diverged,
    }


def _last_rowid(con: duckdb.DuckDBPyConnection, table: str) -> int:
    found = con.execute(f"SELECT coalesce(max(rowid), -1) FROM {table}").fetchall()[0]
    return int(found[0]) if found else -1
