"""A Spark standalone cluster on this machine, started from the installed PySpark: one
master and N workers, each its own JVM on 127.0.0.1, whose executors run their own
Python workers. What `make spark-cluster-demo` runs, and what the Spark tests audit on.

    .venv/bin/python scripts/spark_cluster.py demo      # start, audit the sample, stop
    .venv/bin/python scripts/spark_cluster.py start     # start and wait (Ctrl-C stops)

The executors' Python is, by default, one that holds the project's dependencies but
not the project (`bare_python`), as on a shared cluster: the engine ships its own code.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def bare_python(folder: Path) -> Path:
    """A Python for the executors: this interpreter with this environment's packages on
    its path but without the site machinery, so the project's editable install (a .pth
    file) is not seen: `import pipeline` fails there unless the code is shipped."""
    script = folder / "python-without-the-project"
    packages = sysconfig.get_paths()["purelib"]
    base = getattr(sys, "_base_executable", sys.executable)
    script.write_text(
        f'#!/bin/sh\nPYTHONPATH="${{PYTHONPATH:+$PYTHONPATH:}}{packages}" exec {base} -S "$@"\n'
    )
    script.chmod(0o755)
    return script


def _start(command: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)


def _wait_for(log: Path, text: str, process: subprocess.Popen[bytes], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if text in log.read_text(errors="replace"):
            return
        if process.poll() is not None:
            break
        time.sleep(0.2)
    raise RuntimeError(f"{log.name}: no {text!r} after {seconds:.0f} s:\n{log.read_text()[-3000:]}")


@contextmanager
def standalone_cluster(folder: Path, workers: int = 2, cores: int = 1) -> Iterator[str]:
    """A master and `workers` workers of `cores` cores each; yields the master's URL."""
    home = spark_home()
    spark_class = str(home / "bin" / "spark-class")
    env = {**os.environ, "SPARK_HOME": str(home), "SPARK_LOG_DIR": str(folder)}
    port = free_port()
    master = f"spark://127.0.0.1:{port}"
    folder.mkdir(parents=True, exist_ok=True)
    with ExitStack() as stack:
        log = folder / "master.log"
        process = _start(
            [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
             "--port", str(port), "--webui-port", str(free_port())],
            log,
            env,
        )  # fmt: skip
        stack.callback(_stop, process)
        _wait_for(log, "I have been elected leader", process, 60)
        for n in range(workers):
            log = folder / f"worker-{n}.log"
            work = folder / f"worker-{n}"
            process = _start(
                [spark_class, "org.apache.spark.deploy.worker.Worker", master,
                 "--host", "127.0.0.1", "--cores", str(cores), "--memory", "2g",
                 "--webui-port", str(free_port()), "--work-dir", str(work)],
                log,
                env,
            )  # fmt: skip
            stack.callback(_stop, process)
            _wait_for(log, "Successfully registered with master", process, 60)
        yield master


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(20)
    except subprocess.TimeoutExpired:
        process.kill()


def demo() -> int:
    """Start a cluster, audit the bundled sample on it and with the local engine, compare."""
    sample = [str(ROOT / "fixtures" / "sample" / name) for name in ("jsonl", "chinese")]
    with tempfile.TemporaryDirectory(prefix="handaudit-cluster-") as scratch:
        folder = Path(scratch)
        python = bare_python(folder)
        with standalone_cluster(folder / "cluster") as master:
            print(f"master {master}, 2 workers (1 core each); executors' Python: {python}")
            command = [
                sys.executable, "-m", "pipeline", "verify", *sample,
                "--engine", "spark", "--master", master, "--out", str(folder / "spark"),
            ]  # fmt: skip
            print("$ handaudit verify", " ".join(command[4:]))
            env = {**os.environ, "PYSPARK_PYTHON": str(python)}
            spark = subprocess.run(command, env=env, cwd=ROOT, text=True, capture_output=True)
            print(spark.stdout, spark.stderr[-3000:] if spark.returncode > 1 else "", sep="")
        local = [
            sys.executable,
            "-m",
            "pipeline",
            "verify",
            *sample,
            "--out",
            str(folder / "local"),
        ]
        subprocess.run(local, cwd=ROOT, capture_output=True)
        return _compare(folder / "local" / "audit.duckdb", folder / "spark" / "audit.duckdb")


def _compare(local: Path, spark: Path) -> int:
    import duckdb

    tables = ("hands", "players", "settlements", "divergences", "quarantine", "sitting_out")
    differ = []
    for table in tables:
        rows = []
        for db in (local, spark):
            with duckdb.connect(str(db), read_only=True) as con:
                rows.append(sorted(con.execute(f"SELECT * FROM {table}").fetchall(), key=repr))
        print(f"  {table:<12} {len(rows[1]):>6} rows  {'same' if rows[0] == rows[1] else 'DIFFER'}")
        if rows[0] != rows[1]:
            differ.append(table)
    print("The cluster's audit is the local engine's, row for row." if not differ else "")
    return 1 if differ else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("what", choices=["demo", "start"])
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    if a.what == "demo":
        return demo()
    with tempfile.TemporaryDirectory(prefix="handaudit-cluster-") as scratch:
        python = bare_python(Path(scratch))
        with standalone_cluster(Path(scratch) / "cluster", a.workers) as master:
            print(f"master {master}; run, in another shell:")
            print(
                f"  PYSPARK_PYTHON={python} handaudit verify INPUT --engine spark --master {master}"
            )
            try:
                while True:
                    time.sleep(3600)
            except KeyboardInterrupt:
                return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
