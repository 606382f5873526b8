"""`handaudit verify`: every input record read, audited and stored, the run accounted for.

ingest -> audit_batch (evaluate, score, money, outcome checks) -> store; then the
table rules over the stored hands, and the run row.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from pathlib import Path

import duckdb
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from pipeline.core.rules import CONTRACT, RuleBook
from pipeline.engine.append import LocalFiles, append_to
from pipeline.engine.run import Run, RunSummary, audit_files, run_row, summarize
from pipeline.engine.table_cache import cached_tables
from pipeline.helpers.errors import AuditError
from pipeline.helpers.progress import Progress
from pipeline.helpers.stages import Stages
from pipeline.storage.chain import growing_segments, replaced_digest, seal_run
from pipeline.storage.files import hand_histories
from pipeline.storage.ledger import (
    digest,
    may_replace,
    repeated_files,
    write_failure,
    writer_lock,
)
from pipeline.storage.profiles import profile_rows, table_rows
from pipeline.storage.repeats import tell_repeats
from pipeline.storage.seals import Segment
from pipeline.storage.store import DB_NAME, AuditStore, insert_rows
from pipeline.storage.table_rules import QUARANTINE_APPEARANCES, check_table_rules


def verify(
    inputs: list[Path],
    out_dir: Path,
    *,
    parquet: bool = False,
    progress: Progress | None = None,
    stages: Stages | None = None,
    workers: int = 1,
    append: bool = False,
    replace: bool = False,
    book: RuleBook | None = None,
    signer: Ed25519PrivateKey | None = None,
) -> RunSummary:
    """Audit every input into out_dir/audit.duckdb. Raises InputError before writing anything.

    `workers` threads audit blocks side by side; the output does not depend on it.
    `append`: add the inputs to the audit already there (`ledger.py`), or start one.
    `replace`: a plain run may replace a ledger (an audit that appends built).
    `book`: the rules file's profiles (house-rules.md); None: the contract alone, or on
    an append, the profiles the audit holds. `signer`: the key each run's chain digest
    is signed with (`signing.py`).
    """
    files = hand_histories(inputs)
    if out_dir.exists() and not out_dir.is_dir():
        raise AuditError(f"--out is the directory that holds the audit, and {out_dir} is a file.")
    run = Run(inputs, "append" if append else "new", progress or Progress(enabled=False))
    run.book, run.signer = book or CONTRACT, signer
    given = book is not None
    with writer_lock(out_dir), cached_tables():
        try:
            if append and (out_dir / DB_NAME).exists():
                stages = stages or Stages()
                appender = LocalFiles(stages, workers)
                db = out_dir / DB_NAME
                return append_to(run, files, out_dir, stages, appender, given, _drift(db, run))
            if not append:
                may_replace(out_dir / DB_NAME, replace)
            return _verify(run, files, out_dir, parquet, stages or Stages(), workers)
        except duckdb.Error as error:  # the disk is full, or DuckDB failed to write
            raise write_failure(error, out_dir) from None


def _drift(db: Path, run: Run) -> Callable[[RunSummary, list[Path]], None]:
    """After an append in which some new hand diverged: the tables whose new hands fit
    another profile of the audit better than their mapped one (`drift.py`)."""

    def told(summary: RunSummary, added: list[Path]) -> None:
        if summary.hands_diverged and run.book.house:
            from pipeline.engine.drift import rules_drift

            summary.drift = rules_drift(added, db, run.book)

    return told


def _verify(
    run: Run, files: list[Path], out_dir: Path, parquet: bool, stages: Stages, workers: int
) -> RunSummary:
    store = AuditStore(out_dir, stages)
    files = _once(run, files)
    with ThreadPoolExecutor(1, thread_name_prefix="digest") as beside:
        digests = beside.map(digest, files)  # beside the audit: it reads the same bytes
        growing: Future[dict[str, list[Segment]]] | None = None
        try:
            audit_files(run, files, store, stages, workers)
            insert_rows(store.con, "rule_profiles", profile_rows(run.book))
            insert_rows(store.con, "rule_tables", table_rows(run.book))
            with stages.stage("table rules"):
                store.query(QUARANTINE_APPEARANCES.format(source="quarantine"))
                store.flush()
                # The tables that only grow are final: digested while the rules run.
                growing = beside.submit(growing_segments, store.con.cursor())
                tell_repeats(store.con, run.accounting)
                check_table_rules(store)
            summary = summarize(store.con, run, store.final)
            summary.files_repeated = run.files_skipped
            run.digests = list(digests)
            insert_rows(store.con, "runs", run_row(run, summary))
            with stages.stage("seal"):
                replaces = replaced_digest(store.final)
                seal_run(store.con, run.run_id, replaces, run.signer, growing.result())
            summary.database = store.commit(parquet=parquet)
        except BaseException:
            if growing is not None:  # its connection ends before the database does
                wait([growing])
            store.discard()
            raise
        finally:
            run.progress.close()
    return summary


def _once(run: Run, files: list[Path]) -> list[Path]:
    """The files in order, but for those whose bytes an earlier one has (a file named
    twice, or copied): they are skipped, as an append skips a file read before."""
    repeated = repeated_files(files)
    run.files_skipped = len(repeated)
    return [f for i, f in enumerate(files) if i not in repeated]
