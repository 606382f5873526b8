"""`handaudit verify --engine spark`: the same audit as `verify`, run by Apache Spark.

1. List the input as the local engine does; number the files in its order.
2. Audit in tasks (`tasks.py`): JSON Lines files by blocks of lines (Spark splits
   them), every other file whole. A task audits its unit as if nothing came before.
3. A hand id verified by two units is verified only by the first in input order: the
   later units are audited again, knowing the ids verified before them, exactly as
   the local engine would have met them (rare: a repeated hand across units).
4. The table rules, over each table's hands wherever they were read (`tasks.table_rules`,
   the local engine's SQL), after a shuffle by buckets of hand tables.
5. Every table written as Parquet with Spark's committer to a staging directory, moved
   into `OUT/parquet/` when all are written; `OUT/audit.duckdb` built from them when
   OUT is local.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from decimal import Decimal
from functools import partial
from pathlib import Path
from typing import Any

import pyarrow as pa
from py4j.protocol import Py4JError
from pyspark import StorageLevel
from pyspark.errors import PySparkException
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F  # noqa: N812 (Spark's own spelling)

from pipeline.errors import AuditError
from pipeline.evaluator.values import hand_values
from pipeline.ingest import Accounting
from pipeline.ingest.sources import input_files
from pipeline.progress import Progress
from pipeline.run import Run, RunSummary, run_row
from pipeline.spark import files as inputs_of
from pipeline.spark.inputs import InputFile, is_local
from pipeline.spark.parts import (
    PART,
    PARTS,
    RULES,
    conform,
    explode,
    written_schema,
)
from pipeline.spark.session import spark_session
from pipeline.spark.tasks import Seen, audit_files, audit_lines, table_rules
from pipeline.store import load_parquet_audit
from pipeline.stored import BY_DAY

# Tables written at the same time.
WRITERS = 3
# Spark's split of JSON Lines files: a task audits at most this many bytes of lines
# (HANDAUDIT_SPARK_SPLIT_BYTES, or Spark's spark.sql.files.maxPartitionBytes when set).
SPLIT_BYTES = 64 << 20


def verify_on_spark(
    inputs: list[str], out: str, master: str | None = None, progress: Progress | None = None
) -> RunSummary:
    """Audit `inputs` on Spark into `out` (any path Spark writes)."""
    progress = progress or Progress(enabled=False)
    started = datetime.now(UTC)
    local = [Path(given.removeprefix("file:")) for given in inputs if is_local(given)]
    if local:
        input_files(local)  # a missing input is said before Spark starts, not after
    progress.step("starting Spark")
    spark = spark_session(master)
    try:
        summary = _Run(spark, inputs, out, progress, started).run()
    except (PySparkException, Py4JError) as error:
        raise SparkJobError(f"The Spark job failed: {_cause(error)}") from None
    finally:
        progress.step("stopping Spark")
        spark.stop()
        progress.close()
    summary.steps = progress.steps
    return summary


class SparkJobError(AuditError):
    """A Spark job of the audit failed; Spark's log above says more."""


def _cause(error: Exception) -> str:
    """The last line of what failed (a Python task's error, or the JVM's)."""
    lines = [line.strip() for line in str(error).splitlines()]
    said = [line for line in lines if line and not line.startswith(("at ", "..."))]
    return said[-1].lstrip(": ") if said else type(error).__name__


class _Run:
    def __init__(
        self,
        spark: SparkSession,
        inputs: list[str],
        out: str,
        progress: Progress,
        started: datetime,
    ) -> None:
        self.spark, self.inputs, self.out = spark, inputs, out.rstrip("/")
        self.progress, self.started = progress, started
        self.run_id = str(uuid.uuid4())
        self.kept: list[DataFrame] = []
        self.present: set[str] = set()  # the parts the audit gave
        # Buckets of hand tables for the table rules: a few per core, each whole tables.
        self.buckets = 4 * spark.sparkContext.defaultParallelism
        split = os.environ.get("HANDAUDIT_SPARK_SPLIT_BYTES")
        if split or not spark.sparkContext.getConf().contains("spark.sql.files.maxPartitionBytes"):
            spark.conf.set("spark.sql.files.maxPartitionBytes", split or str(SPLIT_BYTES))

    def run(self) -> RunSummary:
        self.progress.step("listing the input")
        listed = inputs_of.listed(self.spark, self.inputs)
        self.progress.step(f"auditing {len(listed.files)} files")
        first = self._keep(self._audited(listed, {}))
        first.count()  # computed and kept here, so that the steps' seconds say where time goes
        self.progress.step("finding hands repeated across units")
        audited = self._without_repeats(listed, first)
        self.present = {row.part for row in audited.select("part").distinct().collect()}
        self.progress.step("table rules")
        found = self._table_rules(audited)
        found.count()
        staging = inputs_of.Staging(self.spark, self.out)
        try:
            self.progress.step("writing the tables")
            tables = {name: self._table(audited, name, found) for name in PARTS}
            hand_values_table = conform(hand_values(), written_schema("hand_values"))
            tables["hand_values"] = self.spark.createDataFrame(hand_values_table)
            # Side by side: one table's job fills the cores while another's starts or
            # commits (Spark runs the jobs of several threads at once).
            with ThreadPoolExecutor(WRITERS, thread_name_prefix="write") as writers:
                written = [
                    writers.submit(staging.write, name, table, name in BY_DAY)
                    for name, table in tables.items()
                ]
                for job in written:
                    job.result()
            self.progress.step("summary and runs")
            summary = self._summary(staging)
            staging.write("runs", self._runs_row(summary), False)
            parquet = staging.commit()
        except BaseException:
            with contextlib.suppress(Exception):  # the failure itself is what to report
                staging.discard()
            raise
        finally:
            for kept in self.kept:
                kept.unpersist()
        if is_local(self.out):
            self.progress.step("building audit.duckdb")
            summary.database = load_parquet_audit(Path(self.out), Path(parquet))
        else:
            summary.database = parquet
        summary.seconds = self.progress.seconds
        return summary

    def _keep(self, frame: DataFrame) -> DataFrame:
        """`frame` computed once, kept for the steps that read it again."""
        kept = frame.persist(StorageLevel.MEMORY_AND_DISK)
        self.kept.append(kept)
        return kept

    def _audited(self, listed: inputs_of.Listed, seen: Seen) -> DataFrame:
        """The task rows of the listed files' units (all of them, or those of `seen`)."""
        schema = _spark_schema(PART)
        by_name = listed.by_spark_path
        parts = []
        again = {number for number, _ in seen}
        whole = [path for path in listed.whole if not seen or by_name[path].number in again]
        if whole:
            files = self.spark.read.format("binaryFile").load(whole)
            task = partial(audit_files, files=by_name, seen=seen, n_buckets=self.buckets)
            parts.append(files.mapInArrow(task, schema))
        split = [path for path in listed.lines if not seen or by_name[path].number in again]
        if split:
            lines = inputs_of.lines_of(self.spark, split)
            if seen:
                lines = lines.where(_unit_in(by_name, listed.spelled, seen))
            task = partial(
                audit_lines,
                files=by_name,
                first_lines=listed.first_lines,
                seen=seen,
                n_buckets=self.buckets,
            )
            parts.append(lines.mapInArrow(task, schema))
        return _union(parts)

    def _ids(self, audited: DataFrame, part: str) -> DataFrame:
        """(hand_id, file_no, block) of each row of a part's tables."""
        rows = audited.where(audited.part == part)
        return rows.select(F.explode("hand_ids").alias("hand_id"), "file_no", "block")

    def _without_repeats(self, listed: inputs_of.Listed, first: DataFrame) -> DataFrame:
        """The task rows once every hand id is verified by its first unit only."""
        units = F.struct("file_no", "block")
        repeated = (
            self._ids(first, "hands")
            .groupBy("hand_id")
            .agg(F.min(units).alias("owner"), F.collect_list(units).alias("units"))
            .where(F.size("units") > 1)
            .collect()
        )
        seen: dict[tuple[int, int], set[str]] = {}
        for row in repeated:
            owner = (row.owner.file_no, row.owner.block)
            for unit in row.units:
                if (unit.file_no, unit.block) > owner:
                    seen.setdefault((unit.file_no, unit.block), set()).add(row.hand_id)
        if not seen:
            return first
        self.progress.step(f"auditing {len(seen)} units again (hands repeated across them)")
        again = {unit: frozenset(ids) for unit, ids in seen.items()}
        redo = self.spark.createDataFrame([(f, b) for f, b in again], "file_no INT, block BIGINT")
        kept = first.join(F.broadcast(redo), ["file_no", "block"], "left_anti")
        return self._keep(_union([kept.select(first.columns), self._audited(listed, again)]))

    def _table_rules(self, audited: DataFrame) -> DataFrame:
        """The table rules' divergences, each hand table's hands seen together."""
        elsewhere: frozenset[str] = frozenset()
        if "quarantine" in self.present:
            quarantined = self._ids(audited, "quarantine").where(F.col("hand_id").isNotNull())
            verified = self._ids(audited, "hands").select("hand_id")
            repeated = quarantined.join(verified, "hand_id", "left_semi").collect()
            elsewhere = frozenset(row.hand_id for row in repeated)
        rules = audited.where(audited.part.startswith(RULES))
        task = partial(table_rules, verified_elsewhere=elsewhere)
        schema = _spark_schema(written_schema("divergences"))
        return self._keep(rules.repartition(self.buckets, "key").mapInArrow(task, schema))

    def _table(self, audited: DataFrame, name: str, found: DataFrame) -> DataFrame:
        """One table's rows, with the table rules' findings (in `divergences`, and as
        the status of the hands they flag). A table written by day is first gathered
        by day, its parts whole, so that each task writes few days' files."""
        if name not in self.present:  # none of the audit's: no job over the parts
            empty = self.spark.createDataFrame(written_schema(name).empty_table())
            return found if name == "divergences" else empty
        parts = audited.where(audited.part == name)
        if name in BY_DAY:
            parts = parts.repartition(self.buckets, "key")
        flagged: frozenset[str] = frozenset()
        if name == "hands":
            flagged = frozenset(row.hand_id for row in found.select("hand_id").distinct().collect())
        task = partial(explode, name=name, diverged=flagged)
        rows = parts.mapInArrow(task, _spark_schema(written_schema(name)))
        return rows.unionByName(found) if name == "divergences" else rows

    def _summary(self, staging: inputs_of.Staging) -> RunSummary:
        """The run summary, from the tables as written."""
        quarantined: dict[str, int] = dict(
            staging.read("quarantine").groupBy("check").count().collect()
        )
        hands = (
            staging.read("hands")
            .agg(
                F.count("*"),
                F.count_if(F.col("status") == "diverged"),
                F.sum("rake_total"),
                F.sum("recorded_rake_total"),
            )
            .first()
        )
        assert hands is not None
        verified, diverged, rake, recorded = hands
        accounting = Accounting(
            read=verified + sum(quarantined.values()),
            verified=verified,
            quarantined=sum(quarantined.values()),
            by_check=quarantined,
        )
        summary = RunSummary(self.out, accounting)
        summary.divergences = dict(staging.read("divergences").groupBy("check").count().collect())
        summary.hands_diverged = diverged
        summary.rake_total = Decimal(rake or 0)
        summary.recorded_rake_total = Decimal(recorded or 0)
        summary.not_checked = _not_checked(staging.read("hands"), staging.read("players"))
        return summary

    def _runs_row(self, summary: RunSummary) -> DataFrame:
        run = Run(list(self.inputs), "new", self.progress, self.run_id, self.started)
        run.accounting = summary.accounting
        return self.spark.createDataFrame(conform(run_row(run, summary), written_schema("runs")))


def _not_checked(hands: DataFrame, players: DataFrame) -> tuple[int, int]:
    """The players of each table's first verified hand, and their tables (`run.not_checked`)."""
    first = hands.groupBy("table_id").agg(F.min(F.struct("hand_no", "hand_id")).alias("first"))
    found = (
        players.join(first.select("table_id", F.col("first.hand_id").alias("hand_id")), "hand_id")
        .agg(F.count("*"), F.countDistinct("table_id"))
        .first()
    )
    return (int(found[0]), int(found[1])) if found else (0, 0)


def _spark_schema(schema: pa.Schema) -> Any:
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(schema)


def _union(parts: Iterable[DataFrame]) -> DataFrame:
    parts = list(parts)
    result = parts[0]
    for part in parts[1:]:
        result = result.unionByName(part)
    return result


def _unit_in(by_name: dict[str, InputFile], spelled: dict[str, str], seen: Seen) -> Column:
    """Lines of the (file, block) units of `seen`."""
    wanted = [
        (spelled[path], block)
        for path, file in by_name.items()
        for (number, block) in seen
        if number == file.number and path in spelled
    ]
    condition = F.lit(False)
    for path, block in wanted:
        condition = condition | ((F.col("path") == path) & (F.col("block") == block))
    return condition
