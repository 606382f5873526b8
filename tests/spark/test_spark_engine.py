"""`verify --engine spark` in Spark's local mode: the local engine's rows, table by table.

Each test runs the real command line (a JVM starts each time: about 10 s).
"""

from __future__ import annotations

import gzip
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from pipeline.storage.stored import PUBLISHED
from tests.cli.test_evaluate_command import handaudit
from tests.conftest import EXAMPLES

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
# Every table and view a user reads (the runs row differs by its times and id).
TABLES = (*(name for name in PUBLISHED if name != "runs"), "streets")
FAULTS = EXAMPLES / "faults" / "hands.jsonl"


def spark_verify(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`verify --engine spark` in local[2] (or on HANDAUDIT_TEST_MASTER, a cluster's
    master: its executors' Python in PYSPARK_PYTHON)."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pipeline",
            "verify",
            *args,
            "--engine",
            "spark",
            "--master",
            os.environ.get("HANDAUDIT_TEST_MASTER", "local[2]"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
        env={**os.environ, **(env or {})},
    )


def rows(db: Path, table: str) -> list[tuple[object, ...]]:
    with duckdb.connect(str(db), read_only=True) as con:
        return sorted(con.execute(f"SELECT * FROM {table}").fetchall(), key=repr)


def split_input(tmp_path: Path) -> list[Path]:
    """The faults set in three files of three kinds, plus the family's faults, with one
    hand repeated in a later file and one repeated far down its own file."""
    lines = (EXAMPLES / "faults" / "hands.jsonl").read_text().splitlines(keepends=True)
    first, second, third = lines[:110], lines[110:220], lines[220:]
    first = [*first, lines[3]]  # again, blocks later in its own file
    third = [*third[:40], lines[5], *third[40:], lines[230]]  # from an earlier file, and its own
    parts = tmp_path / "input"
    (parts / "more").mkdir(parents=True)
    (parts / "a.jsonl").write_text("".join(first))
    with gzip.open(parts / "b.jsonl.gz", "wt") as gz:
        gz.write("".join(second))
    records = [json.loads(line) for line in third]
    (parts / "more" / "c.json").write_text(json.dumps(records, indent=1))
    shutil.copy(EXAMPLES / "family" / "faults" / "hands.jsonl", parts / "more" / "d.jsonl")
    return [parts / "a.jsonl", parts / "b.jsonl.gz", parts / "more"]


def three_shuffled_files(folder: Path) -> Path:
    """The public faulty set, its lines shuffled by random.Random(3), cut as `split -n l/3`
    cuts: three files of about a third of the bytes each, at line ends."""
    lines = FAULTS.read_text().splitlines(keepends=True)
    random.Random(3).shuffle(lines)
    text = "".join(lines).encode()
    folder.mkdir(parents=True)
    start = 0
    for part, name in enumerate(("part-aa", "part-ab", "part-ac"), 1):
        end = len(text) if part == 3 else text.index(b"\n", part * len(text) // 3 - 1) + 1
        (folder / f"{name}.jsonl").write_bytes(text[start:end])
        start = end
    return folder


def test_faults_split_over_files_and_partitions_give_the_local_rows(tmp_path: Path) -> None:
    inputs = [str(p) for p in split_input(tmp_path)]
    local = handaudit("verify", *inputs, "--out", str(tmp_path / "local"))
    assert local.returncode == 1, local.stderr
    # Blocks of about 40 KB: the JSON Lines files are read by several tasks each.
    spark = spark_verify(
        *inputs, "--out", str(tmp_path / "spark"), env={"HANDAUDIT_SPARK_SPLIT_BYTES": "40000"}
    )
    assert spark.returncode == 1, spark.stderr
    for table in TABLES:
        want = rows(tmp_path / "local" / "audit.duckdb", table)
        got = rows(tmp_path / "spark" / "audit.duckdb", table)
        assert got == want, table
    quarantined = dict(
        duckdb.connect(str(tmp_path / "spark" / "audit.duckdb"), read_only=True)
        .execute('SELECT "check", count(*) FROM quarantine GROUP BY 1')
        .fetchall()
    )
    # The set's own repeat, and the three added here: a hand of a.jsonl again in the JSON
    # array c.json, written otherwise (conflicting_hand: its bytes differ), and exact ones.
    assert quarantined["duplicate_hand"] >= 3 and quarantined["conflicting_hand"] == 1
    assert _same_summary(spark.stdout, local.stdout), (spark.stdout, local.stdout)
    parquet = tmp_path / "spark" / "parquet"
    assert sorted(p.name for p in parquet.iterdir()) == sorted(
        [
            "hands",
            "players",
            "row_values",
            "family_row_values",
            "hand_values",
            "settlements",
            "sitting_out",
            "divergences",
            "player_streets",
            "quarantine",
            "runs",
            "rule_profiles",
            "rule_tables",
            "seals",
        ]
    )
    assert any(p.name.startswith("day=") for p in (parquet / "players").iterdir())
    assert not [p for p in (tmp_path / "spark").iterdir() if p.name.startswith(".")]


def _same_summary(spark: str, local: str) -> bool:
    """The run summaries agree but for where the audit went and how long it took (and
    Spark's steps, which the local engine does not tell)."""
    told = spark.splitlines()
    assert told[-1].startswith("where the time went: "), told[-1]
    return told[1:-2] == local.splitlines()[1:-1]


def test_clean_set_exits_0_and_the_database_serves_reports(tmp_path: Path) -> None:
    out = tmp_path / "out"
    spark = spark_verify(str(EXAMPLES / "clean" / "hands.jsonl"), "--out", str(out))
    assert spark.returncode == 0, spark.stderr
    assert "nothing diverged" in spark.stdout
    # Spark's log keeps to warnings and errors: no INFO lines, no progress bars.
    assert " INFO " not in spark.stderr and "[Stage" not in spark.stderr, spark.stderr
    report = handaudit("report", "divergence_summary", "--db", str(out / "audit.duckdb"))
    assert report.returncode == 0, report.stderr
    hand = rows(out / "audit.duckdb", "hands")[0][0]
    explain = handaudit("explain", str(hand), "--db", str(out / "audit.duckdb"))
    assert explain.returncode == 0, explain.stderr
    assert str(hand) in explain.stdout
    runs = rows(out / "audit.duckdb", "runs")
    assert len(runs) == 1 and runs[0][5] == runs[0][6]  # every record read was verified
    # The database built from Spark's Parquet is sealed as a local run's is.
    checked = handaudit("check", "--db", str(out / "audit.duckdb"))
    assert checked.returncode == 0 and "1 run chained" in checked.stdout, checked.stdout


def test_without_java_it_says_so_and_exits_2(tmp_path: Path) -> None:
    env = {"PATH": str(Path(sys.executable).parent), "JAVA_HOME": str(tmp_path / "none")}
    result = spark_verify(str(EXAMPLES / "clean" / "hands.jsonl"), "--out", str(tmp_path), env=env)
    assert result.returncode == 2
    assert "needs a Java 17+ runtime" in result.stderr
    assert not (tmp_path / "audit.duckdb").exists()


def test_an_output_that_cannot_be_a_directory_is_said_before_spark_starts(
    tmp_path: Path,
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    result = spark_verify(str(EXAMPLES / "edge" / "hands.jsonl"), "--out", str(blocker / "out"))
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [
        f"handaudit: Cannot write the audit to {blocker / 'out'}: Not a directory"
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small filesystem needs root")
@pytest.mark.parametrize(
    ("size", "said"),
    [
        ("64k", "The Spark job failed: "),  # the tasks cannot write their tables
        ("1m", "The audit in "),  # the tables are written, audit.duckdb cannot be
    ],
)
def test_a_full_disk_is_a_sentence_and_nothing_of_the_run_is_kept(
    tmp_path: Path, size: str, said: str
) -> None:
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(disk)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"no tmpfs here: {mounted.stderr!r}")
    try:
        (disk / "out" / "parquet").mkdir(parents=True)
        (disk / "out" / "parquet" / "earlier").write_text("an earlier run's tables")
        result = spark_verify(str(EXAMPLES / "faults" / "hands.jsonl"), "--out", str(disk / "out"))
        assert result.returncode == 2, result.stderr
        last = result.stderr.strip().splitlines()[-1]
        assert last.startswith(f"handaudit: {said}"), result.stderr
        assert "No space left on device" in last or "is full" in last, last
        assert sorted(p.name for p in (disk / "out").iterdir()) == ["parquet"]
        assert [p.name for p in (disk / "out" / "parquet").iterdir()] == ["earlier"]
    finally:
        subprocess.run(["umount", str(disk)], check=False)


def test_edge_set_table_rules_alone_give_the_local_rows(tmp_path: Path) -> None:
    """The edge set diverges by the table rules only: no hand diverges in its batch."""
    edge = str(EXAMPLES / "edge" / "hands.jsonl")
    local = handaudit("verify", edge, "--out", str(tmp_path / "local"))
    spark = spark_verify(edge, "--out", str(tmp_path / "spark"))
    assert (spark.returncode, local.returncode) == (1, 1), spark.stderr
    for table in TABLES:
        assert rows(tmp_path / "spark" / "audit.duckdb", table) == rows(
            tmp_path / "local" / "audit.duckdb", table
        ), table
    assert _same_summary(spark.stdout, local.stdout)


def test_a_standalone_cluster_whose_python_lacks_the_project_gives_the_local_rows(
    tmp_path: Path,
) -> None:
    """A master and two workers, each its own JVM, started from the installed PySpark;
    the executors' Python holds the dependencies but not the project: the engine ships
    its code. The faulty mixed history, split over files and byte ranges, and the
    faulty set shuffled into three more files: its hands repeated across units."""
    from scripts.spark_cluster import bare_python, standalone_cluster

    python = bare_python(tmp_path)
    lacks = subprocess.run(
        [str(python), "-c", "import pipeline"], capture_output=True, text=True, cwd=tmp_path
    )
    assert "No module named 'pipeline'" in lacks.stderr, lacks.stderr
    shuffled = three_shuffled_files(tmp_path / "shuffled")  # the same hands again
    inputs = [*(str(p) for p in split_input(tmp_path)), str(shuffled)]
    local = handaudit("verify", *inputs, "--out", str(tmp_path / "local"))
    with standalone_cluster(tmp_path / "cluster") as master:
        spark = subprocess.run(
            [sys.executable, "-m", "pipeline", "verify", *inputs, "--engine", "spark",
             "--master", master, "--out", str(tmp_path / "spark")],
            capture_output=True,
            text=True,
            cwd=tmp_path,  # not the project's folder: nothing found there by chance
            timeout=600,
            env={**os.environ, "PYSPARK_PYTHON": str(python),
                 "HANDAUDIT_SPARK_SPLIT_BYTES": "40000"},
        )  # fmt: skip
    assert spark.returncode == 1, spark.stderr[-3000:]
    for table in TABLES:
        assert rows(tmp_path / "spark" / "audit.duckdb", table) == rows(
            tmp_path / "local" / "audit.duckdb", table
        ), table
    assert _same_summary(spark.stdout, local.stdout), (spark.stdout, local.stdout)
    executors = list((tmp_path / "cluster").glob("worker-*/app-*/*/stderr"))
    assert len(executors) == 2, executors  # one executor on each worker ran the tasks


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (["--engine", "spark", "--workers", "2"], "--workers sets the local engine's threads"),
        (["--master", "local[2]"], "--master names Spark's master"),
    ],
)
def test_an_option_the_engine_would_not_use_is_refused(
    tmp_path: Path, given: list[str], said: str
) -> None:
    result = handaudit(
        "verify", str(EXAMPLES / "edge" / "hands.jsonl"), "--out", str(tmp_path), *given
    )
    assert result.returncode == 2
    assert said in result.stderr
    assert not (tmp_path / "audit.duckdb").exists()


def test_the_drivers_class_archive_is_made_once_and_a_broken_one_is_dropped(
    tmp_path: Path,
) -> None:
    """The first run makes the archive of Spark's classes (`spark/classes.py`); a cut one
    stops the JVM from starting, so it is removed and Spark started without it."""
    cache = tmp_path / "cache"
    env = {"HANDAUDIT_CACHE": str(cache)}
    edge = str(EXAMPLES / "edge" / "hands.jsonl")
    first = spark_verify(edge, "--out", str(tmp_path / "a"), env=env)
    assert first.returncode == 1, first.stderr
    [archive] = cache.glob("spark-classes-*.jsa")
    assert archive.stat().st_size > 1 << 20
    assert not list(cache.glob(".spark-classes-*"))  # no partial one left
    archive.write_bytes(archive.read_bytes()[:100_000])
    second = spark_verify(edge, "--out", str(tmp_path / "b"), env=env)
    assert second.returncode == 1, second.stderr
    assert not archive.exists()
    assert rows(tmp_path / "b" / "audit.duckdb", "divergences") == rows(
        tmp_path / "a" / "audit.duckdb", "divergences"
    )
