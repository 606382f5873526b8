"""`verify --append`: new inputs added to the audit already in DIR, as one run over all.

1. Each file's digest is compared with those the audit's runs have read: a file read
   before (or twice now) is skipped whole.
2. The other files are audited into a staging database beside the audit, exactly as a
   plain run audits them, knowing which hand ids the audit already verified (a hand
   arriving again is `duplicate_hand`, as it would be in one run).
3. In one DuckDB transaction the staging tables are added to the audit, and the table
   rules are judged again for every table the new records touch, from its first new
   hand number on (the hands before it cannot change). Anything that fails rolls the
   transaction back: the audit is as it was.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import duckdb

from pipeline.checks.table import QUARANTINE_APPEARANCES, check_table_rules
from pipeline.ledger import (
    LOG_LIMIT,
    VerifiedHands,
    audited_digests,
    connect,
    digest,
    require_version,
)
from pipeline.run import Run, RunSummary, audit_files, run_row, summarize
from pipeline.stages import Stages
from pipeline.store import DB_NAME, NAME_AUDITED_RECORDS, AuditStore, insert_rows
from pipeline.stored import FROM_INPUT

# The tables the new records touch, from their first new hand number on: those of the
# new hands and new quarantined records, and of a quarantined record whose hand the new
# input verifies (the rules leave such a record out from now on).
_SCOPE = """
SELECT table_id, min(hand_no) AS from_no FROM (
    SELECT table_id, hand_no FROM staging.hands
    UNION ALL
    SELECT table_id, hand_no FROM quarantine_appearances WHERE rowid > {after}
    UNION ALL
    SELECT table_id, hand_no FROM quarantine_appearances
    WHERE hand_id IN (SELECT hand_id FROM staging.hands)
) GROUP BY table_id
"""


def append_to(
    run: Run, files: list[Path], out_dir: Path, stages: Stages, workers: int
) -> RunSummary:
    """Add `files` to the audit in `out_dir` (it exists; the caller holds the writer lock)."""
    db = out_dir / DB_NAME
    con = connect(db, out_dir, read_only=True)
    try:
        require_version(con, db)
        fresh = _unread(run, files, audited_digests(con))
        store = AuditStore(out_dir, stages)
        try:
            seen = VerifiedHands(con)
            audit_files(run, fresh, store, stages, workers, seen=seen)
            run.hands_already_audited = seen.stored_found
            staging = store.finish()
        except BaseException:
            store.discard()
            raise
    finally:
        con.close()
    try:
        return _merge(run, db, out_dir, staging, stages)
    finally:
        staging.unlink(missing_ok=True)
        Path(f"{staging}.wal").unlink(missing_ok=True)
        run.progress.close()


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


def _merge(run: Run, db: Path, out_dir: Path, staging: Path, stages: Stages) -> RunSummary:
    """The staging tables into the audit, the table rules judged again, in one transaction."""
    con = connect(db, out_dir, read_only=False)
    try:
        # The commit goes to DuckDB's write-ahead log, and DuckDB checkpoints it into the
        # file when the log passes LOG_LIMIT: a first checkpoint costs a second per 400 MB
        # of audit, whatever the append added; a reader replays the log when it opens.
        con.execute(f"SET checkpoint_threshold = '{LOG_LIMIT}'")
        con.execute("PRAGMA disable_checkpoint_on_shutdown")
        con.execute(f"ATTACH '{staging}' AS staging (READ_ONLY)")
        con.execute("BEGIN TRANSACTION")
        try:
            with stages.stage("merge"):
                after = _last_rowid(con, "quarantine_appearances")
                quarantined = _last_rowid(con, "quarantine")
                for name in FROM_INPUT:
                    con.execute(f"INSERT INTO {name} BY NAME SELECT * FROM staging.{name}")
                con.execute(QUARANTINE_APPEARANCES.format(source="staging.quarantine"))
                con.execute(NAME_AUDITED_RECORDS.format(after=quarantined))
            with stages.stage("table rules"):
                check_table_rules(_Connection(con), _SCOPE.format(after=after))
            summary = summarize(con, run, db, _JUDGED)
            summary.appended = _ledger_counts(con, run)
            insert_rows(con, "runs", run_row(run, summary))
            con.execute("COMMIT")
        except BaseException:
            _roll_back(con)
            raise
        con.execute("DETACH staging")
    finally:
        con.close()
    return summary


def _roll_back(con: duckdb.DuckDBPyConnection) -> None:
    """Undo the merge; a DuckDB that has failed for good has undone it already (its
    write-ahead log holds no commit of it)."""
    with contextlib.suppress(duckdb.Error):
        con.execute("ROLLBACK")


# The hands an append judged: its own, and those the rules across hands judged again.
_JUDGED = (
    "(hand_id IN (SELECT hand_id FROM staging.hands) "
    "OR hand_id IN (SELECT hand_id FROM table_hands WHERE judged))"
)


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


class _Connection:
    """A DuckDB connection as the table rules' store."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con

    def query(self, sql: str, *params: object) -> list[tuple[object, ...]]:
        return self.con.execute(sql, list(params)).fetchall()
