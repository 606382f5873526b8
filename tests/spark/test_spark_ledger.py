"""`verify --engine spark --append`: the standing ledger on Spark, its Parquet dataset and
audit.duckdb, one run's audit whatever the days and whichever engine appended them."""

from __future__ import annotations

import hashlib
from pathlib import Path

import duckdb
import pytest

from pipeline.helpers.interrupts import UNCHANGED
from tests.cli.test_audit_kept import interrupted_at
from tests.cli.test_evaluate_command import handaudit
from tests.conftest import EXAMPLES
from tests.property.test_ledger import LINES, audit_rows, split, write_parts
from tests.spark.test_spark_engine import spark_verify

pytestmark = pytest.mark.spark


def spark_append(day: Path, out: Path) -> str:
    done = spark_verify(str(day), "--append", "--out", str(out))
    assert done.returncode in (0, 1), done.stderr[-3000:]
    return done.stdout


def local_append(day: Path, out: Path) -> str:
    done = handaudit("verify", str(day), "--append", "--out", str(out))
    assert done.returncode in (0, 1), done.stderr[-3000:]
    return done.stdout


def dataset_is_the_database(out: Path) -> None:
    """Every table of OUT/parquet holds the rows of its table in audit.duckdb."""
    from pipeline.spark.append import DATASET  # with the spark extra alone
    from pipeline.spark.written import file_schema

    with duckdb.connect(str(out / "audit.duckdb"), read_only=True) as con:
        for name in DATASET:
            columns = ", ".join(f'"{c}"' for c in file_schema(name).names)
            files = f"{out}/parquet/{name}/**/*.parquet"
            published = f"SELECT {columns} FROM read_parquet('{files}', hive_partitioning = false)"
            if not list((out / "parquet").glob(f"{name}/**/*.parquet")):
                published = f"SELECT {columns} FROM {name} LIMIT 0"
            held = f"SELECT {columns} FROM {name}"
            a, b = f"SELECT * FROM ({held})", f"SELECT * FROM ({published})"
            differ = con.execute(
                f"SELECT count(*) FROM (({a} EXCEPT ALL {b}) UNION ALL ({b} EXCEPT ALL {a}))"
            ).fetchall()[0][0]
            assert differ == 0, name


def test_a_week_of_appends_on_spark_is_the_one_local_run(tmp_path: Path) -> None:
    """Seven days of faulty hands of every game, appended out of order (a late day among
    them), one of them by the local engine, the last with hands of the first again; each
    engine skips a day the other appended."""
    parts = split(LINES, [8, 16, 24, 32, 40, 48])
    parts[6] += [line for line in parts[0] if '"hand_no": 3,' in line]  # hands again
    days = write_parts(tmp_path / "input", parts)
    one = handaudit("verify", *map(str, days), "--out", str(tmp_path / "one"))
    assert one.returncode == 1, one.stderr
    ledger = tmp_path / "ledger"
    for n in (0, 2, 1, 4, 5):  # day 2 arrives late
        spark_append(days[n], ledger)
    local_append(days[3], ledger)  # the local engine's day, between Spark's
    assert "files already audited, skipped: 1" in local_append(days[4], ledger)
    assert "files already audited, skipped: 1" in spark_append(days[3], ledger)
    spark_append(days[6], ledger)
    assert audit_rows(ledger / "audit.duckdb") == audit_rows(tmp_path / "one" / "audit.duckdb")
    dataset_is_the_database(ledger)
    with duckdb.connect(str(ledger / "audit.duckdb"), read_only=True) as con:
        runs = con.execute("SELECT mode, len(input_digests) FROM runs ORDER BY started_at")
        assert runs.fetchall() == [("append", 1)] * 6 + [("append", 0)] * 2 + [("append", 1)]
    leftovers = [p.name for p in ledger.iterdir() if p.name.startswith(".")]
    assert leftovers == []


@pytest.fixture(scope="module")
def days(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The faulty hands of every game in two days."""
    return write_parts(tmp_path_factory.mktemp("days"), split(LINES, [30]))


def test_a_spark_append_to_a_local_audit_writes_its_dataset_whole(
    days: list[Path], tmp_path: Path
) -> None:
    ledger = tmp_path / "ledger"
    local_append(days[0], ledger)
    assert not (ledger / "parquet").exists()
    spark_append(days[1], ledger)
    dataset_is_the_database(ledger)


def _state(out: Path) -> dict[str, str]:
    """Every file of OUT, by its bytes."""
    return {
        str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(out.rglob("*"))
        if p.is_file()
    }


def test_an_interrupted_append_leaves_the_audit_and_its_dataset_as_they_were(
    days: list[Path], tmp_path: Path
) -> None:
    ledger = tmp_path / "ledger"
    spark_append(days[0], ledger)
    before = _state(ledger)
    args = (str(days[1]), "--append", "--engine", "spark", "--master", "local[2]")
    stopped = interrupted_at(ledger, "inserting", *args)
    assert stopped.returncode == 130, stopped.stderr[-3000:]
    assert stopped.stderr.strip().splitlines()[-1] == f"handaudit: {UNCHANGED}"
    assert _state(ledger) == before


def test_what_a_spark_append_cannot_do_is_said_before_spark_starts(tmp_path: Path) -> None:
    house = EXAMPLES / "house-rules"
    ledger = tmp_path / "ledger"
    ruled = handaudit(
        "verify", str(house / "asia" / "hands.jsonl"), "--rules", str(house / "house.toml"),
        "--append", "--out", str(ledger),
    )  # fmt: skip
    assert ruled.returncode in (0, 1), ruled.stderr
    refused = spark_verify(str(EXAMPLES / "clean" / "hands.jsonl"), "--append", "--out",
                           str(ledger))  # fmt: skip
    assert refused.returncode == 2 and "house rules" in refused.stderr, refused.stderr
    remote = spark_verify(str(EXAMPLES / "clean" / "hands.jsonl"), "--append", "--out",
                          "s3://bucket/audit")  # fmt: skip
    assert remote.returncode == 2 and "local directory" in remote.stderr, remote.stderr


def test_a_killed_runs_leftovers_go_and_a_dataset_that_is_a_file_is_refused(
    days: list[Path], tmp_path: Path
) -> None:
    ledger = tmp_path / "ledger"
    local_append(days[0], ledger)
    (ledger / "parquet").write_text("not a dataset")
    before = _state(ledger)
    refused = spark_verify(str(days[1]), "--append", "--out", str(ledger))
    assert refused.returncode == 2 and "is not a directory" in refused.stderr, refused.stderr
    assert _state(ledger) == before
    (ledger / "parquet").unlink()
    (ledger / ".parquet-99999.partial" / "players").mkdir(parents=True)  # a killed run's
    (ledger / ".parquet-99999.new").mkdir()
    spark_append(days[1], ledger)
    assert [p.name for p in ledger.iterdir() if p.name.startswith(".")] == []
    dataset_is_the_database(ledger)
