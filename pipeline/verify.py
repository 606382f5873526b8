"""`handaudit verify`: every input record read, audited and stored, the run accounted for.

ingest -> audit_batch (evaluate, score, money, outcome checks) -> store; then the
table rules over the stored hands, and the run row.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

from pipeline import __version__
from pipeline.checks.table import check_table_rules
from pipeline.ingest import Accounting, blocks
from pipeline.ingest.sources import input_files
from pipeline.parallel import audit_blocks
from pipeline.progress import Progress
from pipeline.stages import Stages
from pipeline.store import AuditStore
from pipeline.table_cache import cached_tables


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

    @property
    def clean(self) -> bool:
        return self.accounting.quarantined == 0 and not self.divergences

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
        return "\n".join(lines)


def verify(
    inputs: list[Path],
    out_dir: Path,
    *,
    parquet: bool = False,
    progress: Progress | None = None,
    stages: Stages | None = None,
    workers: int = 1,
) -> RunSummary:
    """Audit every input into out_dir/audit.duckdb. Raises InputError before writing anything.

    `workers` threads audit blocks side by side; the output does not depend on it.
    """
    files = input_files(inputs)
    with cached_tables():
        return _verify(inputs, files, out_dir, parquet, progress, stages, workers)


def _verify(
    inputs: list[Path],
    files: list[Path],
    out_dir: Path,
    parquet: bool,
    progress: Progress | None,
    stages: Stages | None,
    workers: int,
) -> RunSummary:
    progress = progress or Progress(enabled=False)
    started = datetime.now(UTC)
    stages = stages or Stages()
    store = AuditStore(out_dir, stages)
    accounting = Accounting()
    try:
        read = stages.wrap("ingest and validation", blocks(files))
        for audited in audit_blocks(read, workers, stages):
            for audit in audited.audits:
                for name, rows in audit.tables().items():
                    store.append(name, rows)
            store.quarantine(audited.rejects)
            accounting.add(audited.verified, audited.rejects)
            progress.update(read=accounting.read, verified=accounting.verified)
        store.flush()
        with stages.stage("table rules"):
            check_table_rules(store)
        summary = _summarize(store, accounting, progress.seconds)
        store.query(
            "INSERT INTO runs VALUES (?, ?, ?, ?, now(), ?, ?, ?, ?, ?, ?, ?, ?)",
            str(uuid.uuid4()),
            __version__,
            [str(p) for p in inputs],
            started,
            accounting.read,
            accounting.verified,
            accounting.quarantined,
            summary.hands_diverged,
            sum(summary.divergences.values()),
            summary.rake_total,
            summary.recorded_rake_total,
            summary.seconds,
        )
        summary.database = store.commit(parquet=parquet)
    except BaseException:
        store.discard()
        raise
    finally:
        progress.close()
    return summary


def _summarize(store: AuditStore, accounting: Accounting, seconds: float) -> RunSummary:
    summary = RunSummary(store.final, accounting, seconds=seconds)
    summary.divergences = dict(store.query('SELECT "check", count(*) FROM divergences GROUP BY 1'))
    summary.hands_diverged = store.query("SELECT count(*) FROM hands WHERE status = 'diverged'")[0][
        0
    ]
    rake, recorded = store.query(
        "SELECT coalesce(sum(rake_total), 0), coalesce(sum(recorded_rake_total), 0) FROM hands"
    )[0]
    summary.rake_total, summary.recorded_rake_total = Decimal(rake), Decimal(recorded)
    return summary
