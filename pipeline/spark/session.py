"""Starting Spark for the audit: quiet, its code shipped to the executors, or a clear error."""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import shutil
import signal
import sys
import tempfile
import threading
import zipfile
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import pipeline
from pipeline.helpers.errors import AuditError
from pipeline.spark.classes import ClassArchive

if TYPE_CHECKING:
    from pyspark import SparkConf, SparkContext


class SparkUnavailableError(AuditError):
    """The Spark engine cannot start on this machine (no pyspark, no Java)."""


def _java() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").exists():
        return str(Path(home) / "bin" / "java")
    return shutil.which("java")


def require_spark() -> None:
    """Raise a sentence saying what to install when pyspark or Java is missing."""
    if importlib.util.find_spec("pyspark") is None:
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


def shipped_package() -> Path:
    """This package as a zip for the executors (`spark.submit.pyFiles`' way): named by its
    contents, so that a changed package is a new file and an executor never runs an old
    one it kept."""
    root = Path(pipeline.__file__).parent
    members = sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix in (".py", ".properties")
    )
    digest = hashlib.sha256()
    for member in members:
        digest.update(str(member.relative_to(root)).encode() + b"\0" + member.read_bytes())
    folder = Path(tempfile.gettempdir()) / "handaudit-spark"
    folder.mkdir(exist_ok=True)
    target = folder / f"handaudit-{digest.hexdigest()[:16]}.zip"
    if not target.exists():
        partial = target.with_suffix(f".{os.getpid()}.partial")
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
            for member in members:
                archive.write(member, Path("pipeline") / member.relative_to(root))
        os.replace(partial, target)
    return target


# The driver's JVM compiles with C1 alone: it schedules and moves bytes, and starts
# 2 s sooner (8.4 s to a first job's end, 5.8 s, on this project's 2-core machine).
_DRIVER_JVM = "-XX:TieredStopAtLevel=1"


def spark_context(master: str | None) -> tuple[SparkContext, ClassArchive]:
    """A Spark context on `master` (None: spark-submit's, or local[*]) whose log shows
    warnings and errors only, with this package shipped to its executors. The engine
    runs on Spark's core alone: no SQL session to start. Stop it with the archive's
    `stop` (`classes.py`)."""
    from pyspark import SparkConf

    require_spark()
    java = _java() or "java"
    archive = ClassArchive(java, _DRIVER_JVM)
    if "PYSPARK_GATEWAY_PORT" in os.environ:  # under spark-submit: its JVM runs already
        archive.path = None
    log4j = resources.files("pipeline.spark") / "log4j2.properties"
    quiet = f"-Dlog4j2.configurationFile={log4j}"
    submitted = "PYSPARK_GATEWAY_PORT" in os.environ  # started by spark-submit
    master = master or ("" if submitted else "local[*]")
    package = shipped_package()
    conf = SparkConf().setAppName("handaudit")
    if master:  # under spark-submit, its --master unless one is given here
        conf = conf.setMaster(master)
    conf = (
        conf.set("spark.driver.extraJavaOptions", f"{quiet} {_DRIVER_JVM} {archive.option()}")
        .set("spark.executor.extraJavaOptions", quiet)
        .set("spark.ui.showConsoleProgress", "false")
        # Python workers are forked by a daemon that has imported the engine and read
        # the evaluator's tables once (`daemon.py`), found in the shipped package: an
        # executor's files are in its working directory, where the daemon starts.
        .set("spark.python.daemon.module", "pipeline.spark.daemon")
        .set("spark.executorEnv.PYTHONPATH", package.name)
    )
    if master.startswith("local"):
        # Executors run this Python, where the project is installed.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        # In local mode the driver's JVM is the executor too.
        conf = conf.set("spark.ui.enabled", "false").set(
            "spark.driver.memory", os.environ.get("HANDAUDIT_SPARK_MEMORY", _local_memory())
        )
    interrupt = signal.getsignal(signal.SIGINT)
    try:
        context = _started(conf, master)
    except SparkUnavailableError:
        if archive.path is None or archive.making is not None:
            raise
        archive.drop()  # perhaps for the archive: once more without it
        conf.set("spark.driver.extraJavaOptions", f"{quiet} {_DRIVER_JVM}")
        context = _started(conf, master)
    if threading.current_thread() is threading.main_thread():
        # PySpark took SIGINT for itself (to cancel its jobs): a Ctrl-C is the command
        # line's again, told truthfully (`helpers.interrupts`); Spark stops with the run.
        signal.signal(signal.SIGINT, interrupt)
    context.setLogLevel("WARN")
    try:
        context.addPyFile(str(package))
    except Exception as error:  # the master gave up on the application as it started
        _stop_gateway()
        raise SparkUnavailableError(f"Spark could not start on {master}: {_first(error)}") from None
    return context, archive


def _started(conf: SparkConf, master: str) -> SparkContext:
    """The context of `conf`; a JVM that would not start said in a sentence, and one a
    Ctrl-C stopped as it started not left running."""
    from pyspark import SparkContext

    try:
        return SparkContext.getOrCreate(conf)
    except KeyboardInterrupt:
        _stop_gateway()
        raise
    except Exception as error:
        raise SparkUnavailableError(f"Spark could not start on {master}: {error}") from None


def _stop_gateway() -> None:
    """The JVM this process started stopped, whatever state its start was left in."""
    from pyspark import SparkContext

    active = SparkContext._active_spark_context
    if active is not None:
        with contextlib.suppress(Exception):
            active.stop()
    gateway = SparkContext._gateway
    process = getattr(gateway, "proc", None)
    if process is not None and process.poll() is None:
        process.kill()
        process.wait()
    SparkContext._gateway = SparkContext._jvm = None


def _first(error: Exception) -> str:
    """An exception's first line of words (a JVM's message runs on with its stack)."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__
