"""`verify --engine spark --append`: new inputs audited by Spark into the standing ledger.

The ledger on a cluster is its Parquet dataset, OUT/parquet, and the audit database
beside it, OUT/audit.duckdb (OUT a local directory: a mount the cluster shares). An
append is the local engine's append (`engine.append`), with Spark as its auditor:

1. A file whose digest the audit's runs hold (either engine's) is skipped whole.
2. Spark audits the new units, each as if after every hand the audit holds (a unit
   that holds one of them is audited again knowing it), and writes their tables as
   Parquet (`engine.SparkRun.audit_for_append`).
3. In the append's one DuckDB transaction, those tables join the audit; the table
   rules are judged again for the tables the new records touch, from their first new
   hand number on; the run's row is written.
4. Beside OUT/parquet, the new dataset is assembled: its unchanged files linked, the
   new units' files of the tables that only grow (players, rows, settlements, ...),
   and, from the database, the hands of the days whose hands the rules judged again and
   the tables that an append rewrites (findings, quarantine, runs, rules). Then the
   commit, then the new dataset swapped in.

A failure before the commit leaves the audit and the dataset as they were. Should one
fall between the commit and the swap, the dataset is behind the database: the next
append sees it (their runs differ) and writes the dataset whole from the database. So
does an append to an audit the local engine wrote, which has no dataset yet.
"""

from __future__ import annotations

import os
import shutil
import threading
import uuid
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.core.rules import CONTRACT
from pipeline.engine.append import Joined, append_to
from pipeline.engine.run import Run, RunSummary
from pipeline.helpers.errors import AuditError
from pipeline.helpers.interrupts import pause_at
from pipeline.helpers.progress import Progress
from pipeline.helpers.stages import Stages
from pipeline.ingest.quarantine import QuarantineCheck
from pipeline.spark.engine import SparkRun, spark_job, split_bytes, verify_on_spark
from pipeline.spark.session import spark_context
from pipeline.spark.units import InputFile, file_digest, is_local, list_inputs, plan_units
from pipeline.spark.written import (
    Written,
    day_directory,
    discard,
    export_table,
    publish,
)
from pipeline.storage.files import DB_NAME
from pipeline.storage.ledger import (
    LedgerError,
    VerifiedHands,
    why_not_written,
    write_failure,
    writer_lock,
)
from pipeline.storage.profiles import profile_rows
from pipeline.storage.stored import BY_DAY, COLUMNS, EARLY

# The tables of the dataset (the database's, but for what it derives and its version).
DATASET = tuple(name for name in COLUMNS if name not in ("quarantine_appearances", "audit_info"))
# Tables whose rows an append only adds to: the new units' files join the old ones.
GROWING = EARLY
# Tables an append may change anywhere: written whole from the database each time.
REWRITTEN = ("divergences", "quarantine", "runs", "rule_profiles", "rule_tables", "seals")


def append_on_spark(
    inputs: list[str], out: str, master: str | None = None, progress: Progress | None = None
) -> RunSummary:
    """Append `inputs` to the ledger in `out` on Spark (a plain Spark run where there is
    no audit yet)."""
    progress = progress or Progress(enabled=False)
    if not is_local(out):
        raise AuditError(
            f"--append with --engine spark keeps its ledger in a local directory (a mount "
            f"the cluster shares): OUT/audit.duckdb beside OUT/parquet. {out} is not one."
        )
    out_dir = Path(out.removeprefix("file:"))
    if out_dir.exists() and not out_dir.is_dir():
        raise AuditError(f"--out is the directory that holds the audit, and {out_dir} is a file.")
    out_dir.mkdir(parents=True, exist_ok=True)
    with writer_lock(out_dir):
        _remove_stale(out_dir)
        if not (out_dir / DB_NAME).exists():
            return verify_on_spark(inputs, out, master, progress, mode="append")
        progress.step("listing the input")
        run = Run(list(inputs), "append", progress)
        stages = Stages(enabled=False)
        appender = SparkFiles(out_dir, master, progress)
        try:
            summary = append_to(run, list_inputs(inputs), out_dir, stages, appender)
        except (duckdb.Error, OSError) as error:  # the disk is full, or a write failed
            raise write_failure(error, out_dir) from None
        finally:
            appender.stop()
    summary.seconds = progress.seconds
    summary.steps = progress.steps
    return summary


@dataclass
class SparkFiles:
    """The Spark engine's appender (`engine.append.Appender`)."""

    out: Path
    master: str | None
    progress: Progress
    tag: str = field(default_factory=lambda: f"r{uuid.uuid4().hex[:10]}-")
    written: list[Written] = field(default_factory=list)
    staging: str = ""
    building: str = ""
    run_id: str = ""
    _stopping: threading.Thread | None = None

    def digest(self, file: InputFile) -> str:
        return file_digest(file)

    def fill(self, run: Run, files: list[InputFile], store: Joined, seen: VerifiedHands) -> None:
        _contract_only(run)
        dataset = self.out / "parquet"
        if dataset.exists() and not dataset.is_dir():
            raise AuditError(f"{dataset} is not a directory: the Parquet dataset of the audit "
                             "goes there. Move it away, and append again.")  # fmt: skip
        self.run_id = run.run_id
        if not files:
            return
        files = [replace(f, number=n) for n, f in enumerate(files)]
        units = [replace(u, run=self.tag) for u in plan_units(files, split_bytes())]
        known = store.con.sql("SELECT hand_id FROM hands").to_arrow_table()["hand_id"]
        self.progress.step("starting Spark")
        context, archive = spark_context(self.master)
        spark = SparkRun(context, [f.uri for f in files], units, str(self.out), self.progress,
                         datetime.now(UTC), building=False)  # fmt: skip
        self.staging = spark.staging
        # Spark stops while the append goes on.
        self._stopping = threading.Thread(target=archive.stop, args=(context,))
        with spark_job(self._stopping):
            summaries, self.written = spark.audit_for_append(known.combine_chunks())
        self.progress.step("adding the new hands to the audit")
        for summary in summaries:
            run.accounting.merge(summary.accounting)
        by_unit = {u.label: n for n, u in enumerate(units)}
        for file in sorted(self.written, key=lambda f: (_unit_of(f, by_unit), f.path)):
            rows = _read(store.con, f"{self.staging}/{file.path}", file)
            if file.table == "quarantine":
                run.hands_already_audited += _copies(rows, known)
            store.append(file.table, rows)
        store.flush(done=True)
        pause_at("inserting", store.con)

    def prepare(self, con: duckdb.DuckDBPyConnection) -> None:
        """The new dataset, assembled beside OUT/parquet (the append's run row is in)."""
        self.progress.step("assembling the Parquet dataset")
        self.building = f"{self.out}/.parquet-{os.getpid()}.new"
        shutil.rmtree(self.building, ignore_errors=True)
        old = self.out / "parquet"
        if _in_step(con, old, self.run_id):
            days = _days_judged(con)
            _link_unchanged(old, Path(self.building), days)
            for file in self.written:
                if file.table in GROWING:
                    target = Path(self.building) / file.published
                    target.parent.mkdir(parents=True, exist_ok=True)
                    os.replace(f"{self.staging}/{file.path}", target)
            export_table(con, self.building, "hands", self.tag, days)
            for name in REWRITTEN:
                export_table(con, self.building, name, self.tag)
        else:  # a dataset behind the database, or none: written whole
            for name in DATASET:
                export_table(con, self.building, name, self.tag)

    def publish(self) -> None:
        """The new dataset in place (the audit holds the run already: a failure here is
        said so, and the next append writes the dataset whole)."""
        if self.building:
            self.progress.step("publishing the Parquet dataset")
            try:
                publish(str(self.out), self.building)
            except OSError as error:
                raise LedgerError(
                    f"The append is in the audit in {self.out} ({DB_NAME}), but its Parquet "
                    f"dataset could not be replaced: {why_not_written(error, self.out)}. The "
                    "next `handaudit verify --engine spark --append` there writes it whole."
                ) from None
            self.building = ""
        self.discard()

    def discard(self) -> None:
        discard(*(d for d in (self.staging, self.building) if d))
        self.staging = self.building = ""

    def stop(self) -> None:
        if self._stopping is not None:
            self._stopping.join()


def _remove_stale(out_dir: Path) -> None:
    """What a Spark run killed in OUT left (its staging, a dataset it was assembling):
    no one else writes there while the writer's lock is held."""
    for left in out_dir.glob(".parquet-*"):
        if left.is_dir() and left.name.endswith((".partial", ".new", ".old")):
            shutil.rmtree(left, ignore_errors=True)


def _contract_only(run: Run) -> None:
    """Spark audits by the contract's rules alone (it takes no rules file yet)."""
    if run.book.tables or not profile_rows(run.book).equals(profile_rows(CONTRACT)):
        raise AuditError(
            "This audit holds house rules (a rules file's profiles), and the Spark engine "
            "audits by the contract's rules alone: append to it with the local engine."
        )


def _unit_of(file: Written, by_unit: dict[str, int]) -> int:
    """The unit that wrote a file (`part-LABEL.parquet`, LABEL its unit's, or that with
    -again when it was audited again)."""
    label = file.path.rsplit("/part-", 1)[-1].removesuffix(".parquet").removesuffix("-again")
    return by_unit[label]


def _read(con: duckdb.DuckDBPyConnection, path: str, file: Written) -> pa.Table:
    """A staged file's rows, with the day its directory names (for `hands`)."""
    hive = "true" if file.table in BY_DAY else "false"
    query = f"SELECT * FROM read_parquet(?, hive_partitioning = {hive})"
    rows = con.sql(query, params=[path]).to_arrow_table()
    return rows.select([c for c in rows.column_names if c != "day" or file.table == "hands"])


def _copies(quarantine: pa.Table, known: pa.ChunkedArray) -> int:
    """The new quarantine rows that are copies of a hand the audit held (every copy)."""
    copy = pc.and_(
        pc.equal(quarantine["check"], QuarantineCheck.duplicate_hand.value),
        pc.is_in(quarantine["hand_id"], value_set=known.combine_chunks()),
    )
    return int(pc.sum(copy).as_py() or 0)


def _in_step(con: duckdb.DuckDBPyConnection, dataset: Path, run_id: str) -> bool:
    """Whether the dataset holds the runs the audit held before this append (it is the
    audit's, as far as they go)."""
    runs = dataset / "runs"
    if not runs.is_dir():
        return False
    try:
        published = con.execute(
            "SELECT list_sort(list(run_id)) FROM read_parquet(?)", [f"{runs}/*.parquet"]
        ).fetchall()[0][0]
    except duckdb.Error:
        return False
    held = con.execute(
        "SELECT list_sort(list(run_id)) FROM runs WHERE run_id <> ?", [run_id]
    ).fetchall()[0][0]
    return bool(published == held)


def _days_judged(con: duckdb.DuckDBPyConnection) -> list[int]:
    """The days (since 1970) of the hands this append added or judged again."""
    found = con.execute(
        "SELECT DISTINCT day - DATE '1970-01-01' FROM hands WHERE hand_id IN "
        "(SELECT hand_id FROM new_hands UNION ALL "
        " SELECT hand_id FROM table_hands WHERE judged) ORDER BY 1"
    ).fetchall()
    return [int(day) for (day,) in found]


def _link_unchanged(old: Path, new: Path, days: list[int]) -> None:
    """Every file of the old dataset that stays as it is, linked into the new one."""
    replaced = {f"hands/{day_directory(d)}" for d in days} | set(REWRITTEN)
    for path in old.rglob("*.parquet"):
        relative = path.relative_to(old)
        if str(relative.parent) in replaced or relative.parts[0] in replaced:
            continue
        target = new / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(path, target)
        except OSError:  # a file system without hard links
            shutil.copy2(path, target)
