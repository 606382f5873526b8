"""`verify --append`: new inputs added to the audit already in DIR, as one run over all.

1. Each file's digest is compared with those the audit's runs have read: a file read
   before (or twice now) is skipped whole.
2. In one DuckDB transaction on the audit itself, the other files are audited exactly
   as a plain run audits them, knowing which hand ids the audit already verified (a
   hand arriving again is `duplicate_hand`, as it would be in one run); then the table
   rules are judged again for every table the new records touch, from its first new
   hand number on (the hands before it cannot change), and the run's row is written.
   Anything that fails rolls the transaction back: the audit is as it was.
3. The commit goes to DuckDB's write-ahead log, and is checkpointed into the file at
   once, so that audit.duckdb alone is the audit whenever no append is running. A
   failure before the commit rolls back, and gives back what DuckDB wrote into the file
   ahead of the commit; a log that a crash left is folded in before the append begins.

The audit is open for writing all the append long: DuckDB lets no other process open
it meanwhile, and a reader is told so in a sentence.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

import duckdb
import pyarrow as pa

from pipeline import __version__
from pipeline.core.rules import RuleBook
from pipeline.engine.run import Run, RunSummary, audit_files, run_row, summarize
from pipeline.helpers.encoding import macros_sql
from pipeline.helpers.interrupts import audit_written, interrupts_held, pause_at
from pipeline.helpers.stages import Stages
from pipeline.storage.chain import refuse_if_altered, seal_run
from pipeline.storage.files import log_of
from pipeline.storage.ledger import (
    NO_AUTOMATIC_CHECKPOINT,
    LedgerError,
    VerifiedHands,
    audited_digests,
    connect,
    digest,
    require_version,
    upgrade,
    why_not_written,
)
from pipeline.storage.profiles import merged_book, profile_rows, stored_book, table_rows
from pipeline.storage.repeats import tell_repeats
from pipeline.storage.store import DB_NAME, AuditStore, insert_rows
from pipeline.storage.table_rules import QUARANTINE_APPEARANCES, check_table_rules

F = TypeVar("F")

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
# The hands an append added: its summary's counts are theirs.
_NEW = "hand_id IN (SELECT hand_id FROM new_hands)"
# A resend's records that the quarantine holds already, from the same bytes, are not
# stored again (those of earlier runs: rowid up to `before`).
_NEW_QUARANTINE = """
INSERT INTO quarantine BY NAME SELECT * FROM incoming i
WHERE NOT EXISTS (SELECT 1 FROM quarantine q
                  WHERE q.rowid <= {before} AND q."check" = i."check" AND q.raw = i.raw)
"""


class Joined(AuditStore):
    """The store's buffers, written into the audit's own connection and transaction (one
    connection: DuckDB's cursors would each be a transaction of their own); the new
    hands are noted in `new_hands`. Quarantined records that the audit's quarantine
    holds already, from the same bytes, are counted in `requarantined`, not stored."""

    def __init__(
        self, con: duckdb.DuckDBPyConnection, out_dir: Path, stages: Stages, before: int
    ) -> None:
        super().__init__(out_dir, stages, con)
        self.quarantined_before, self.requarantined = before, 0
        con.execute(
            "CREATE TEMP TABLE new_hands (hand_id VARCHAR, table_id VARCHAR, hand_no BIGINT)"
        )

    def _insert(self, table_name: str, whole_groups: bool = False) -> None:
        rows = self._take(table_name, whole_groups)
        if rows is None:
            return
        with self.stages.stage("store"):
            if table_name == "quarantine":
                self._quarantine_new(rows)
                return
            insert_rows(self.con, table_name, rows)
            if table_name == "hands":
                insert_rows(self.con, "new_hands", rows.select(["hand_id", "table_id", "hand_no"]))

    def _quarantine_new(self, rows: pa.Table) -> None:
        self.con.register("incoming", rows)
        try:
            found = self.con.execute(
                _NEW_QUARANTINE.format(before=self.quarantined_before)
            ).fetchall()
        finally:
            self.con.unregister("incoming")
        self.requarantined += rows.num_rows - (int(found[0][0]) if found else 0)


class Appender(Protocol[F]):
    """Who audits an append's new files into the store (this process, or Spark), and
    what it publishes beside the audit."""

    def digest(self, file: F) -> str:
        """The SHA-256 of a file's bytes (`storage.ledger.digest`)."""

    def fill(self, run: Run, files: list[F], store: Joined, seen: VerifiedHands) -> None:
        """The records of `files` audited into `store`, knowing the hands of `seen`."""

    def prepare(self, con: duckdb.DuckDBPyConnection) -> None:
        """After the run's row, before the commit: what is to be published with it."""

    def publish(self) -> None:
        """Just after the commit: that published."""

    def discard(self) -> None:
        """After a failure: what `fill` and `prepare` left, removed."""


@dataclass
class LocalFiles:
    """The local engine's appender: files read and audited here, on `workers` threads."""

    stages: Stages
    workers: int

    def digest(self, file: Path) -> str:
        return digest(file)

    def fill(self, run: Run, files: list[Path], store: Joined, seen: VerifiedHands) -> None:
        audit_files(run, files, store, self.stages, self.workers, seen=seen)

    def prepare(self, con: duckdb.DuckDBPyConnection) -> None:
        pass

    def publish(self) -> None:
        pass

    def discard(self) -> None:
        pass


def append_to(
    run: Run,
    files: list[F],
    out_dir: Path,
    stages: Stages,
    appender: Appender[F],
    given: bool = False,
    after: Callable[[RunSummary, list[F]], None] | None = None,
) -> RunSummary:
    """Add `files` to the audit in `out_dir` (it exists; the caller holds the writer lock).
    When it returns, audit.duckdb alone holds the audit; when it fails before its commit,
    the audit and its directory are as they were. `after`: told the summary and the
    files added, once they are in the audit."""
    db = out_dir / DB_NAME
    con = connect(db, out_dir, read_only=False)  # DuckDB replays a log a crash left
    kept = _Kept(db)
    try:
        require_version(con, db)
        refuse_if_altered(con, db)
        stored = stored_book(con, str(db))
        used = {name for (name,) in con.execute("SELECT DISTINCT rules FROM hands").fetchall()}
        run.book = merged_book(stored, run.book, used) if given else stored
        con.execute("CHECKPOINT")  # that log into the file, before anything is added
        kept.note()
        fresh = _unread(run, files, audited_digests(con), appender.digest)
        # No checkpoint but ours, after the commit, nor one when the connection closes
        # (after a failure: the file must stay as it was).
        con.execute(f"SET checkpoint_threshold = '{NO_AUTOMATIC_CHECKPOINT}'")
        con.execute("PRAGMA disable_checkpoint_on_shutdown")
        # The checkpoint writes what the append added, and merges no row groups: DuckDB
        # inserts on every core, each leaving a partly filled group, and merging them
        # cost 0.7 s of a 100,000-hand day's checkpoint (it adds 0.7% to the file).
        con.execute("SET max_vacuum_tasks = 0")
        con.execute("BEGIN TRANSACTION")
        con.execute(macros_sql())  # an audit written before audits held them gains them
        upgrade(con, f"handaudit {__version__} (an append)")
        try:
            summary = _append(run, fresh, con, db, stages, appender)
            appender.prepare(con)
            _commit(con, kept, out_dir, appender.publish)
        except BaseException:
            if not kept.committed:
                _roll_back(con)
            appender.discard()  # committed, the next append publishes the run (Spark)
            raise
    finally:
        con.close()
        kept.give_back()
        run.progress.close()
    if after is not None:
        after(summary, fresh)
    return summary


class _Kept:
    """What an append must leave as it found it should it fail before its commit: the
    audit's size (DuckDB writes large inserts into the file before they commit, and a
    rollback does not give the space back) and the absence of a log beside it."""

    def __init__(self, db: Path) -> None:
        self.db, self.size, self.committed = db, -1, False

    def note(self) -> None:
        self.size = self.db.stat().st_size

    def give_back(self) -> None:
        """After a failure before the commit: the blocks written past the audit's last
        checkpoint, and the log, hold nothing the audit refers to."""
        if self.committed or self.size < 0:
            return
        log_of(self.db).unlink(missing_ok=True)
        if self.db.stat().st_size > self.size:
            os.truncate(self.db, self.size)


def _commit(
    con: duckdb.DuckDBPyConnection, kept: _Kept, out_dir: Path, publish: Callable[[], None]
) -> None:
    """Commit, fold the commit into audit.duckdb, and publish what goes with it, a Ctrl-C
    held until all is done."""
    with interrupts_held():
        pause_at("committing")
        con.execute("COMMIT")
        kept.committed = True
        audit_written()
        pause_at("checkpointing")
        try:
            con.execute("CHECKPOINT")
        except duckdb.Error as error:
            raise LedgerError(
                f"The append is in the audit in {out_dir}, in its log beside it "
                f"({DB_NAME}.wal), which could not be folded into {DB_NAME}: "
                f"{why_not_written(error, out_dir)}. Keep the two files together until "
                "the next `handaudit verify --append` there folds it in."
            ) from None
        publish()


def _append(
    run: Run,
    files: list[F],
    con: duckdb.DuckDBPyConnection,
    db: Path,
    stages: Stages,
    appender: Appender[F],
) -> RunSummary:
    """The new records into the audit, the rules judged again, the run's row: uncommitted."""
    after = _last_rowid(con, "quarantine_appearances")
    quarantined = _last_rowid(con, "quarantine")
    seen = VerifiedHands(con)
    store = Joined(con, db.parent, stages, quarantined)
    appender.fill(run, files, store, seen)
    _keep_rules(con, run.book)
    with stages.stage("table rules"):
        new = f"(SELECT * FROM quarantine WHERE rowid > {quarantined})"
        con.execute(QUARANTINE_APPEARANCES.format(source=new))
        tell_repeats(con, run.accounting, quarantined)
        check_table_rules(store, _SCOPE.format(after=after))
    summary = summarize(con, run, db, _NEW)
    summary.appended = _ledger_counts(con, run, store.requarantined)
    insert_rows(con, "runs", run_row(run, summary))
    with stages.stage("seal"):
        seal_run(con, run.run_id, signer=run.signer)
    return summary


def _keep_rules(con: duckdb.DuckDBPyConnection, book: RuleBook) -> None:
    """The profiles the audit did not hold yet, and the map of tables the run read."""
    rows = profile_rows(book)
    con.register("given_profiles", rows)
    try:
        # A profile no hand was audited under may be given new values (`merged_book`).
        con.execute(
            "DELETE FROM rule_profiles r WHERE EXISTS (SELECT 1 FROM given_profiles g "
            "WHERE g.name = r.name AND g.digest <> r.digest)"
        )
        con.execute(
            "INSERT INTO rule_profiles BY NAME SELECT * FROM given_profiles g WHERE NOT EXISTS "
            "(SELECT 1 FROM rule_profiles r WHERE r.name = g.name AND r.game = g.game)"
        )
    finally:
        con.unregister("given_profiles")
    con.execute("DELETE FROM rule_tables")
    insert_rows(con, "rule_tables", table_rows(book))


def _unread(run: Run, files: list[F], audited: set[str], digest_of: Callable[[F], str]) -> list[F]:
    """The files not read before (by digest), in order; the run keeps every digest."""
    fresh = []
    for path in files:
        sha = digest_of(path)
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


def _ledger_counts(con: duckdb.DuckDBPyConnection, run: Run, requarantined: int) -> dict[str, int]:
    again = con.execute(
        f"SELECT count(*) FROM table_hands WHERE judged AND NOT quarantined AND NOT {_NEW}"
    ).fetchall()[0]
    found = con.execute(
        "SELECT count(*), count(*) FILTER (WHERE status = 'diverged') FROM hands"
    ).fetchall()[0]
    hands, diverged = found or (0, 0)
    return {
        "files_skipped": run.files_skipped,
        "already_audited": run.hands_already_audited,
        "already_quarantined": requarantined,
        "judged_again": int(again[0]) if again else 0,
        "hands": hands,
        "diverged": diverged,
    }


def _last_rowid(con: duckdb.DuckDBPyConnection, table: str) -> int:
    found = con.execute(f"SELECT coalesce(max(rowid), -1) FROM {table}").fetchall()[0]
    return int(found[0]) if found else -1
