"""Starting Spark for the audit: quiet, with this Python on the executors, or a clear error."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.errors import AuditError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


class SparkUnavailableError(AuditError):
    """The Spark engine cannot start on this machine (no pyspark, no Java)."""


def _java() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").exists():
        return str(Path(home) / "bin" / "java")
    return shutil.which("java")


def require_spark() -> None:
    """Raise a sentence saying what to install when pyspark or Java is missing."""
    # Spark's Arrow functions need pandas beside pyspark.
    if not all(importlib.util.find_spec(name) for name in ("pyspark", "pandas")):
        raise SparkUnavailableError(
            "The Spark engine needs pyspark: pip install 'handaudit[spark]'."
        )
    if _java() is None:
        raise SparkUnavailableError(
            "The Spark engine needs a Java 17+ runtime: install one (Debian: apt install "
            "openjdk-17-jre-headless) or set JAVA_HOME."
        )


def _local_memory() -> str:
    """A third of this machine's memory, between 2 and 8 GB."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return "2g"
    return f"{max(2, min(8, total // 3 >> 30))}g"


def spark_session(master: str | None) -> SparkSession:
    """A Spark session on `master` (None: spark-submit's, or local[*]) whose log shows
    warnings and errors only."""
    from pyspark.sql import SparkSession

    require_spark()
    log4j = resources.files("pipeline.spark") / "log4j2.properties"
    quiet = f"-Dlog4j2.configurationFile={log4j}"
    submitted = "PYSPARK_GATEWAY_PORT" in os.environ  # started by spark-submit
    master = master or ("" if submitted else "local[*]")
    builder = SparkSession.builder.appName("handaudit")
    if master:  # under spark-submit, its --master unless one is given here
        builder = builder.master(master)
    builder = (
        builder.config("spark.driver.extraJavaOptions", quiet)
        .config("spark.executor.extraJavaOptions", quiet)
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.sources.partitionOverwriteMode", "static")
        # A task writes each of its days' files side by side rather than sorting its
        # rows by day first (a hand history spans few days a task).
        .config("spark.sql.maxConcurrentOutputFileWriters", "16")
        # Whole tables travel as one binary value each: Arrow's 64-bit offsets let a
        # batch of them pass 2 GB.
        .config("spark.sql.execution.arrow.useLargeVarTypes", "true")
        # The steps the engine keeps (persists) may still have their shuffles' small
        # partitions joined together: 200 tasks of a few rows each cost seconds.
        .config("spark.sql.optimizer.canChangeCachedPlanOutputPartitioning", "true")
    )
    if master.startswith("local"):
        # Executors run this Python, where the project is installed.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        # In local mode the driver's JVM is the executor too: Spark's default heap of
        # 1 GB is too small for the tables it keeps between steps.
        builder = builder.config("spark.ui.enabled", "false").config(
            "spark.driver.memory", os.environ.get("HANDAUDIT_SPARK_MEMORY", _local_memory())
        )
    try:
        session = builder.getOrCreate()
    except Exception as error:  # the JVM would not start: say why, not a traceback
        raise SparkUnavailableError(f"Spark could not start on {master}: {error}") from None
    session.sparkContext.setLogLevel("WARN")
    return session
