"""One run of `verify` (plain or appending): what it read, its row of `runs`, its summary."""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import duckdb
import pyarrow as pa
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from pipeline import __version__
from pipeline.core.rules import CONTRACT, RuleBook
from pipeline.engine.parallel import audit_blocks
from pipeline.helpers.interrupts import pause_at
from pipeline.helpers.progress import Progress
from pipeline.helpers.stages import Stages
from pipeline.ingest import Accounting, blocks
from pipeline.storage.ledger import VerifiedHands
from pipeline.storage.store import AuditStore
from pipeline.storage.table_rules import FIRST_HANDS


@dataclass
class RunSummary:
    database: Path | str  # the audit database, or where another engine wrote the tables
    accounting: Accounting
    hands_diverged: int = 0
    divergences: dict[str, int] = field(default_factory=dict)
    rake_total: Decimal = Decimal("0.00")
    recorded_rake_total: Decimal = Decimal("0.00")
    seconds: float = 0.0
    steps: dict[str, float] = field(default_factory=dict)  # seconds per step, where told
    # Where the audit begins: the players of each table's first audited hand.
    not_checked: tuple[int, int] = (0, 0)  # (players, tables)
    # Appending: files skipped, records of hands audited before, the hands judged (new
    # or judged again), and the audit's hands and diverged hands after the append.
    appended: dict[str, int] = field(default_factory=dict)
    files_repeated: int = 0  # a plain run's files whose bytes an earlier one had
    # Appending: tables whose new hands fit another profile better (`drift.py`).
    drift: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        """Nothing diverged, and nothing was quarantined that the quarantine did not hold
        already from the same bytes."""
        stored = self.accounting.quarantined - self.appended.get("already_quarantined", 0)
        return stored == 0 and not self.divergences

    def text(self) -> str:
        a = self.accounting
        lines = [
            f"audit written to {self.database}",
            f"records read     {a.read:>10,}",
            f"verified         {a.verified:>10,}",
            f"quarantined      {a.quarantined:>10,}"
            + (
                f"  ({', '.join(f'{k} {v}' for k, v in sorted(a.by_check.items()))})"
                if a.by_check
                else ""
            ),
            f"hands diverged   {self.hands_diverged:>10,}",
        ]
        if self.divergences:
            lines.append("divergences by check:")
            width = max(map(len, self.divergences))
            lines += [
                f"  {check:<{width}} {n:>8,}"
                for check, n in sorted(self.divergences.items(), key=lambda kv: (-kv[1], kv[0]))
            ]
        difference = self.rake_total - self.recorded_rake_total
        lines.append(
            f"rake recomputed  {self.rake_total:>10,}  recorded {self.recorded_rake_total:,}"
            f"  recomputed - recorded {difference:,}"
        )
        if self.appended:
            lines += self._ledger_lines()
        lines += self.drift
        if self.files_repeated:
            lines.append(
                f"files given more than once (the same bytes), read once: {self.files_repeated:,}"
            )
        players, tables = self.not_checked
        if players:
            lines.append(
                f"{players:,} players at {tables:,} tables begin the audit without a previous "
                "hand: continuity and Fantasyland not checked (`handaudit report coverage`)"
            )
        rate = a.verified / self.seconds if self.seconds else 0.0
        lines.append(
            f"{self.seconds:.1f} s, {rate:,.0f} hands/s; "
            + (
                "nothing diverged"
                if self.clean
                else "findings: see the divergences "
                "and quarantine tables, or `handaudit explain HAND_ID`"
            )
        )
        if self.steps:  # an engine that told where its time went (Spark's)
            told = ", ".join(f"{step} {seconds:.1f} s" for step, seconds in self.steps.items())
            lines.append(f"where the time went: {told}")
        return "\n".join(lines)

    def _ledger_lines(self) -> list[str]:
        n = self.appended
        return [
            f"appended: files already audited, skipped: {n['files_skipped']:,}; records of "
            f"hands already audited: {n['already_audited']:,}; records the quarantine "
            f"held already (the same bytes), not stored again: {n['already_quarantined']:,}",
            f"earlier hands judged again by the rules across hands: {n['judged_again']:,} (the "
            "counts above are this run's records and new hands)",
            f"the audit now holds {n['hands']:,} hands, {n['diverged']:,} of them diverged",
        ]


@dataclass
class Run:
    """One run of `verify`: what it was given and how, and what it read."""

    inputs: list[Path] | list[str]  # as given (another engine's may be any URL)
    mode: str  # "new" or "append"
    progress: Progress
    run_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    started: datetime = field(default_factory=lambda: datetime.now(UTC))
    digests: list[str] = field(default_factory=list)  # of the files read, in order
    files_skipped: int = 0  # files already audited (by their digest)
    hands_already_audited: int = 0  # records of hands the audit held before the run
    accounting: Accounting = field(default_factory=Accounting)
    book: RuleBook = CONTRACT  # the profiles its hands are audited under
    signer: Ed25519PrivateKey | None = None  # the key its chain digest is signed with


def run_row(run: Run, summary: RunSummary) -> pa.Table:
    """The run's row of `runs`, by column name."""
    a = run.accounting
    row = {
        "run_id": run.run_id,
        "version": __version__,
        "mode": run.mode,
        "inputs": [_as_stored(p) for p in run.inputs],
        "input_digests": run.digests,
        "files_skipped": run.files_skipped,
        "hands_already_audited": run.hands_already_audited,
        "started_at": run.started,
        "finished_at": datetime.now(UTC),
        "records_read": a.read,
        "verified": a.verified,
        "quarantined": a.quarantined,
        "hands_diverged": summary.hands_diverged,
        "divergences": sum(summary.divergences.values()),
        "rake_total": summary.rake_total,
        "recorded_rake_total": summary.recorded_rake_total,
        "seconds": run.progress.seconds,
    }
    return pa.Table.from_pylist([row])


def _as_stored(given: Path | str) -> str:
    """An input as `runs` keeps it: a local path made absolute (whichever engine read it),
    a URL as given."""
    text = str(given)
    return text if "://" in text else os.path.abspath(text.removeprefix("file:"))


def audit_files(
    run: Run,
    files: list[Path],
    store: AuditStore,
    stages: Stages,
    workers: int,
    seen: set[str] | None = None,
) -> None:
    """Every record of `files` audited into `store` (its table rules not yet run)."""
    pause_at("reading")
    read = stages.wrap("ingest and validation", blocks(files))
    for audited in audit_blocks(read, workers, stages, seen=seen, book=run.book):
        for audit in audited.audits:
            for name, rows in audit.tables().items():
                store.append(name, rows)
        store.quarantine(audited.rejects)
        run.accounting.add(audited.verified, audited.rejects)
        if isinstance(seen, VerifiedHands):
            run.hands_already_audited += seen.copies(audited.rejects)
        run.progress.update(read=run.accounting.read, verified=run.accounting.verified)
        pause_at("auditing")
    store.flush(done=True)
    pause_at("inserting", store.con)


def summarize(
    con: duckdb.DuckDBPyConnection, run: Run, database: Path, judged: str = "TRUE"
) -> RunSummary:
    """The run's summary: its records, and the findings of the hands it judged (`judged`:
    a condition on hands; every hand by default)."""
    summary = RunSummary(database, run.accounting, seconds=run.progress.seconds)
    summary.divergences = dict(
        con.execute(
            f'SELECT "check", count(*) FROM divergences WHERE hand_id IN '
            f"(SELECT hand_id FROM hands WHERE {judged}) GROUP BY 1"
        ).fetchall()
    )
    found = con.execute(
        "SELECT count(*) FILTER (WHERE status = 'diverged'), coalesce(sum(rake_total), 0), "
        f"coalesce(sum(recorded_rake_total), 0) FROM hands WHERE {judged}"
    ).fetchall()[0]
    diverged, rake, recorded = found or (0, 0, 0)
    summary.hands_diverged = diverged
    summary.rake_total, summary.recorded_rake_total = Decimal(rake), Decimal(recorded)
    summary.not_checked = not_checked(con)
    return summary


def not_checked(con: duckdb.DuckDBPyConnection) -> tuple[int, int]:
    """The players of each table's first verified hand, and their tables: where the audit
    begins, their previous hand is not known (chinese-family.md 8)."""
    found = con.execute(  # n_players: the hand's rows of players (`core/audit.py`)
        "SELECT coalesce(sum(n_players), 0), count(*) FROM hands "
        f"WHERE hand_id IN ({FIRST_HANDS.format(where='TRUE')})"
    ).fetchall()[0]
    return (int(found[0]), int(found[1])) if found else (0, 0)
