"""`handaudit verify --engine spark`: the same audit as `verify`, run by Apache Spark.

1. The driver lists the input as the local engine does and cuts it into units
   (`units.py`): whole files, and byte ranges of large JSON Lines files. It reads no
   record.
2. Audit: a task per unit reads it with the local engine's reader, audits it as if
   nothing came before it, and writes its tables as Parquet itself (`written.py`).
   It gives back a summary, the slim columns the table rules read, and its hand ids.
3. Repeated hands: the hand ids, gathered by bucket, show the hands verified by two
   units. A later unit is audited again knowing the ids verified before it, exactly
   as the local engine would have met them (rare: a repeated hand across units).
4. The table rules, over each table's slim rows wherever they were read, gathered by
   bucket of hand tables (the local engine's SQL).
5. Each unit's hands and quarantine are finished: their line numbers in the file, and
   the table rules' verdicts.
6. The driver moves exactly the files the tasks reported into `OUT/parquet/` and, when
   OUT is local, builds `OUT/audit.duckdb` from them.

The driver holds counts and sums, the hands the table rules flag and the ids repeated
across units, never the hands themselves.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import pyarrow as pa
from py4j.protocol import Py4JError
from pyspark import RDD, SparkContext
from pyspark.errors import PySparkException

from pipeline.core.evaluator.values import hand_values
from pipeline.core.rules import CONTRACT
from pipeline.engine.run import Run, RunSummary, run_row
from pipeline.helpers.errors import AuditError
from pipeline.helpers.progress import Progress
from pipeline.ingest import Accounting
from pipeline.ingest.quarantine import QuarantineCheck
from pipeline.spark.database import Database
from pipeline.spark.session import spark_context
from pipeline.spark.tasks import (
    Judged,
    Output,
    Repeats,
    UnitSummary,
    audit_units,
    finish_units,
    from_payload,
    gather_outputs,
    known_ids,
)
from pipeline.spark.units import (
    SPLIT_BYTES,
    Unit,
    file_digest,
    is_local,
    list_inputs,
    once,
    plan_units,
)
from pipeline.spark.written import (
    Written,
    assemble,
    conform,
    discard,
    file_schema,
    files_of,
    publish,
    write_file,
)
from pipeline.storage.ledger import write_failure
from pipeline.storage.profiles import profile_rows, table_rows
from pipeline.storage.stored import EARLY


def verify_on_spark(
    inputs: list[str],
    out: str,
    master: str | None = None,
    progress: Progress | None = None,
    mode: str = "new",
) -> RunSummary:
    """Audit `inputs` on Spark into `out` (a local directory, or a URI pyarrow writes);
    `mode`: the run's, as `runs` records it ("append": the first day of a ledger)."""
    progress = progress or Progress(enabled=False)
    started = datetime.now(UTC)
    if is_local(out):
        try:
            Path(out.removeprefix("file:")).mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise AuditError(f"Cannot write the audit to {out}: {error.strerror}") from None
    progress.step("listing the input")
    read, repeated = once(list_inputs(inputs))
    units = plan_units(read, split_bytes())
    progress.step("starting Spark")
    context, archive = spark_context(master)
    run = SparkRun(context, inputs, units, out, progress, started)
    run.repeated, run.mode = repeated, mode
    # The files' digests for the ledger, read beside the audit (as the local engine does).
    digesting = ThreadPoolExecutor(1, thread_name_prefix="digest")
    run.digests = digesting.map(file_digest, read)
    # Spark stops while the driver finishes audit.duckdb (it needs no Spark).
    stopping = threading.Thread(target=archive.stop, args=(context,), name="stop-spark")
    try:
        with spark_job(stopping):
            summary, files = run.audit()
        run.publish(summary, files)
    except OSError as error:  # the driver's own writes: the runs row, the commit
        run.discard()
        raise write_failure(error, Path(out.removeprefix("file:"))) from None
    except BaseException:
        run.discard()
        raise
    finally:
        digesting.shutdown(cancel_futures=True)
        if stopping.is_alive():
            progress.step("stopping Spark")
        stopping.join()
        progress.close()
    summary.seconds = progress.seconds
    summary.steps = progress.steps
    return summary


def split_bytes() -> int:
    """The bytes of JSON Lines a unit holds (HANDAUDIT_SPARK_SPLIT_BYTES, a whole number
    of bytes above 0)."""
    given = os.environ.get("HANDAUDIT_SPARK_SPLIT_BYTES", "").strip()
    if not given:
        return SPLIT_BYTES
    if not given.isdigit() or int(given) == 0:
        raise AuditError(
            f"HANDAUDIT_SPARK_SPLIT_BYTES is the bytes of JSON Lines a Spark task audits: a "
            f"whole number above 0 (64 MB by default: {SPLIT_BYTES}), not {given!r}."
        )
    return int(given)


class SparkJobError(AuditError):
    """A Spark job of the audit failed; Spark's log above says more."""


@contextlib.contextmanager
def spark_job(stopping: threading.Thread) -> Iterator[None]:
    """Around the Spark jobs of a run: a job that fails is said in a sentence, and Spark
    is stopped on `stopping` (a thread, so that the run goes on meanwhile) at the end."""
    try:
        yield
    except (PySparkException, Py4JError) as error:
        raise SparkJobError(f"The Spark job failed: {_cause(error)}") from None
    finally:
        stopping.start()


def _cause(error: Exception) -> str:
    """What failed, in one line: a Python task's exception, or else the JVM's last word."""
    lines = [line.strip() for line in str(error).splitlines()]
    said = [
        line
        for line in lines
        if line and not line.startswith(("at ", "...", "SQLSTATE", "File ", "^", "~"))
    ]
    raised = [line for line in said if _RAISED.match(line)]
    found = raised or said
    return found[-1].lstrip(": ") if found else type(error).__name__


# A line where Python says what it raised: "OSError: [Errno 28] ...".
_RAISED = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt): ")


class SparkRun:
    def __init__(
        self,
        sc: SparkContext,
        inputs: list[str],
        units: list[Unit],
        out: str,
        progress: Progress,
        started: datetime,
        building: bool = True,
    ) -> None:
        """`building`: the run builds OUT's audit.duckdb (a plain run, OUT local)."""
        self.sc = sc
        self.inputs, self.units, self.out = inputs, units, out.rstrip("/")
        self.progress, self.started = progress, started
        self.staging = f"{self.out}/.parquet-{os.getpid()}.partial"
        # Buckets of hand tables and of hand ids: one a core.
        self.buckets = max(1, self.sc.defaultParallelism)
        self.building = ""  # the new parquet/ being assembled
        self.repeated = 0  # files left out: an earlier one has their bytes
        self.mode = "new"
        self.digests: Iterator[str] = iter(())  # of the files read, in order
        local = Path(self.out.removeprefix("file:"))
        self.database = Database(local) if is_local(self.out) and building else None

    def audit(self) -> tuple[RunSummary, list[Written]]:
        """Spark's part: every unit audited, the table rules run, the tables finished;
        the run's summary and the files the tasks wrote."""
        self.progress.step(f"auditing {_units(len(self.units))}, and the table rules")
        summaries, judged = self._audit_units([], judge=True)
        files = [f for s in summaries.values() for f in s.files if not f.pending]
        if self.database:  # loaded while Spark goes on, unless they changed
            self.database.settle(self.staging, files)
        files += self._finished(summaries, judged)
        self.progress.step("summary and runs")
        summary = self._summary(summaries, judged)
        files += [f for j in judged if j.written for f in [j.written]]
        files += [self._hand_values(), self._runs_row(summary), *self._rules()]
        return summary, files

    def audit_for_append(self, known: pa.Array) -> tuple[list[UnitSummary], list[Written]]:
        """For an append: every unit audited as if after the hands of `known` (the
        audit's: a unit that holds one is audited again knowing it), and finished but
        for the table rules, which the append judges over the whole audit; the units'
        summaries in order, and the files their tasks wrote."""
        self.progress.step(f"auditing {_units(len(self.units))}")
        summaries, _ = self._audit_units(known_ids(known, self.buckets), judge=False)
        files = [f for s in summaries.values() for f in s.files if not f.pending]
        files += self._finished(summaries, [])
        return [summaries[u.number] for u in self.units], files

    def _audit_units(
        self, known: Sequence[Output], judge: bool
    ) -> tuple[dict[int, UnitSummary], list[Judged]]:
        """Every unit's summary (audited again where it holds hands verified before it,
        by an earlier unit or among `known`), and the table rules' findings (`judge`)."""
        shuffled = self._audited(self.units, {}, known)
        with self._when_audited(self._load_early):
            summaries, repeats, judged = self._gather(shuffled, frozenset(), judge)
        again = _by_unit(r.again for r in repeats)  # each bucket holds some of a unit's
        elsewhere = frozenset(i for r in repeats for i in r.verified_elsewhere)
        if again or (elsewhere and judge):  # rare: the rules are run again knowing them
            self.progress.step(f"auditing {_units(len(again))} again (hands repeated across them)")
            redone = frozenset(again)
            kept = shuffled.filter(lambda output: output[1][1] not in redone)
            more = self._audited([u for u in self.units if u.number in redone], again)
            shuffled = kept.union(more).partitionBy(self.buckets + 1, _key)
            again_summaries, _, judged = self._gather(shuffled, elsewhere, judge)
            summaries.update(again_summaries)
        return summaries, judged

    def publish(self, summary: RunSummary, files: list[Written]) -> None:
        """The tables moved into OUT/parquet, and audit.duckdb beside them when OUT is
        local: both, or neither."""
        if self.database:
            self.progress.step("building audit.duckdb")
            self.database.wait()  # before the files it reads move
        self.building = assemble(self.out, self.staging, files)
        if self.database:
            summary.database = self.database.finish(self.building, files)
            repeats = (QuarantineCheck.duplicate_hand, QuarantineCheck.conflicting_hand)
            summary.accounting.retell(*repeats, self.database.conflicting)
        else:
            summary.database = f"{self.out}/parquet"
        publish(self.out, self.building)

    def discard(self) -> None:
        discard(self.staging, *([self.building] if self.building else []))
        if self.database:
            self.database.discard()

    def _audited(
        self, units: list[Unit], seen: dict[int, frozenset[str]], known: Sequence[Output] = ()
    ) -> RDD[Any]:
        """Each unit's task outputs, gathered by key (`tasks.audit_units`), with `known`
        beside them: the shuffle's writing is part of the audit's tasks."""
        task = partial(audit_units, staging=self.staging, seen=seen, buckets=self.buckets)
        outputs = self.sc.parallelize(units, len(units)).mapPartitions(task)
        if known:
            outputs = outputs.union(self.sc.parallelize(known, min(len(known), self.buckets)))
        return outputs.partitionBy(self.buckets + 1, _key)

    @contextlib.contextmanager
    def _when_audited(self, then: Callable[[], None]) -> Iterator[None]:
        """Around the job run inside: call `then` on a thread once every audit task of
        the job has finished (its first stage). On leaving without an error, `then` has
        run whole: here, if the job ended before the watch saw its first stage end."""
        done, called = threading.Event(), threading.Event()
        tracker = self.sc.statusTracker()
        self.sc.setJobGroup("audit", "the audit of every unit", interruptOnCancel=False)

        def watch() -> None:
            while not done.wait(0.2):
                for job in tracker.getJobIdsForGroup("audit"):
                    info = tracker.getJobInfo(job)
                    stage = tracker.getStageInfo(min(info.stageIds)) if info else None
                    if stage and stage.numTasks and stage.numCompletedTasks == stage.numTasks:
                        called.set()
                        then()
                        return

        watching = threading.Thread(target=watch, name="audit-watch", daemon=True)
        watching.start()
        try:
            yield
        finally:
            done.set()
            watching.join()
        if not called.is_set():
            then()

    def _load_early(self) -> None:
        if self.database:
            self.database.start(self.staging, files_of(self.staging, EARLY))

    def _gather(
        self, shuffled: RDD[Any], elsewhere: frozenset[str], judge: bool
    ) -> tuple[dict[int, UnitSummary], list[Repeats], list[Judged]]:
        """The summaries, repeated ids and table rules' findings of the gathered outputs."""
        task = partial(
            gather_outputs,
            staging=self.staging,
            buckets=self.buckets,
            verified_elsewhere=elsewhere,
            judge=judge,
        )
        results = shuffled.mapPartitionsWithIndex(task).collect()
        summaries = {r.unit: r for r in results if isinstance(r, UnitSummary)}
        repeats = [r for r in results if isinstance(r, Repeats)]
        return summaries, repeats, [r for r in results if isinstance(r, Judged)]

    def _finished(self, summaries: dict[int, UnitSummary], judged: list[Judged]) -> list[Written]:
        """The units' hands and quarantine: finished by a task where their lines follow
        earlier ranges of their file or the table rules flag some of their hands, and
        as they were written otherwise."""
        flagged_units = frozenset().union(*(j.units for j in judged))
        work, done = [], []
        lines_before: dict[int, int] = {}
        for unit in self.units:
            summary = summaries[unit.number]
            before = lines_before.get(unit.file.number, 0)
            lines_before[unit.file.number] = before + summary.lines
            pending = [f for f in summary.files if f.pending]
            if pending and (before or unit.number in flagged_units):
                work.append((unit, before + 1, pending))
            else:
                done += pending
        if not work:
            return done
        self.progress.step(f"numbering lines and flagging hands in {_units(len(work))}")
        flagged = pa.concat_arrays(
            [from_payload(j.flagged)[0].combine_chunks().cast(pa.string()) for j in judged]
            or [pa.array([], pa.string())]
        )
        shared = self.sc.broadcast(flagged)
        task = partial(_finish, staging=self.staging, flagged=shared)
        try:
            finished = self.sc.parallelize(work, len(work)).mapPartitions(task).collect()
        finally:
            shared.unpersist()
        return done + [f for written in finished for f in written]

    def _summary(self, summaries: dict[int, UnitSummary], judged: list[Judged]) -> RunSummary:
        accounting = Accounting()
        summary = RunSummary(self.out, accounting)
        first: dict[str, tuple[int, str, int]] = {}
        for s in summaries.values():
            accounting.merge(s.accounting)
            _add(summary.divergences, s.divergences)
            summary.hands_diverged += s.hands_diverged
            summary.rake_total += s.rake_total
            summary.recorded_rake_total += s.recorded_rake_total
            for table, hand in s.first_hands.items():
                first[table] = min(first.get(table, hand), hand)
        for j in judged:
            _add(summary.divergences, j.divergences)
            summary.hands_diverged += j.newly_diverged
        summary.not_checked = (sum(players for *_, players in first.values()), len(first))
        summary.files_repeated = self.repeated
        return summary

    def _hand_values(self) -> Written:
        rows = conform(hand_values(), file_schema("hand_values"))
        return write_file(self.staging, "hand_values/part-00000.parquet", rows)

    def _rules(self) -> list[Written]:
        """The profiles the hands were audited under (the contract's: Spark takes no
        rules file yet)."""
        return [
            write_file(self.staging, f"{name}/part-00000.parquet", conform(rows, file_schema(name)))
            for name, rows in (
                ("rule_profiles", profile_rows(CONTRACT)),
                ("rule_tables", table_rows(CONTRACT)),
            )
        ]

    def _runs_row(self, summary: RunSummary) -> Written:
        run = Run(list(self.inputs), self.mode, self.progress, str(uuid.uuid4()), self.started)
        run.accounting = summary.accounting
        run.digests, run.files_skipped = list(self.digests), self.repeated
        rows = conform(run_row(run, summary), file_schema("runs"))
        return write_file(self.staging, "runs/part-00000.parquet", rows)


def _by_unit(found: Iterable[dict[int, set[str]]]) -> dict[int, frozenset[str]]:
    """Per unit, the ids verified before it, from every bucket's findings."""
    ids: dict[int, set[str]] = {}
    for per_unit in found:
        for unit, some in per_unit.items():
            ids.setdefault(unit, set()).update(some)
    return {unit: frozenset(held) for unit, held in ids.items()}


def _units(n: int) -> str:
    return f"{n} unit" if n == 1 else f"{n} units"


def _key(key: int) -> int:
    """The partition of an output's key: the key itself (buckets, then the summaries)."""
    return key


def _finish(work: Iterator[Any], staging: str, flagged: Any) -> Iterator[list[Written]]:
    return finish_units(work, staging, flagged.value)


def _add(total: dict[str, int], more: dict[str, int]) -> None:
    for key, n in more.items():
        total[key] = total.get(key, 0) + n
