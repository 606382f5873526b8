"""The Spark engine is exact whatever its units: hands repeated within and across files,
byte ranges and runs of Parquet row groups, give the local engine's every table and view,
row for row and count for count."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.cli.test_evaluate_command import handaudit
from tests.spark.test_spark_engine import (
    FAULTS,
    TABLES,
    _same_summary,
    rows,
    spark_verify,
    three_shuffled_files,
)
from tests.spark.test_spark_ledger import dataset_is_the_database

pytestmark = pytest.mark.spark


def same_tables(spark: Path, local: Path) -> None:
    for table in TABLES:
        got, want = rows(spark / "audit.duckdb", table), rows(local / "audit.duckdb", table)
        assert len(got) == len(want), (table, len(got), len(want))
        assert got == want, table


def test_the_shuffled_faulty_set_in_three_files_gives_the_local_tables(tmp_path: Path) -> None:
    """Hands of one table in three files: the duplicate hands of the set and the table
    rules meet across them. A copy of one file is read once, and both engines' runs
    hold the same digests (their ledgers know the same files)."""
    parts = three_shuffled_files(tmp_path / "in")
    shutil.copy(parts / "part-ab.jsonl", parts / "part-ad.jsonl")
    local = handaudit("verify", str(parts), "--out", str(tmp_path / "local"))
    spark = spark_verify(str(parts), "--out", str(tmp_path / "spark"))
    assert (spark.returncode, local.returncode) == (1, 1), spark.stderr[-3000:]
    same_tables(tmp_path / "spark", tmp_path / "local")
    assert _same_summary(spark.stdout, local.stdout), (spark.stdout, local.stdout)
    assert "read once: 1" in spark.stdout
    dataset_is_the_database(tmp_path / "spark")
    ledger = "(SELECT input_digests, files_skipped, records_read FROM runs)"
    assert rows(tmp_path / "spark" / "audit.duckdb", ledger) == rows(
        tmp_path / "local" / "audit.duckdb", ledger
    )


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> pa.Table:
    """A generated faulty history of four tables, as Parquet rows."""
    out = tmp_path_factory.mktemp("generated") / "hands.parquet"
    made = handaudit(
        "generate", "--tables", "4", "--hands", "400", "--seed", "11", "--faults", "0.05",
        "--format", "parquet", "--out", str(out),
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    return pq.read_table(out)


@pytest.fixture(scope="module")
def quarantined_lines(tmp_path_factory: pytest.TempPathFactory) -> list[int]:
    """The lines of the faulty set that the local engine quarantines (0-based)."""
    out = tmp_path_factory.mktemp("faults")
    handaudit("verify", str(FAULTS), "--out", str(out))
    with duckdb.connect(str(out / "audit.duckdb"), read_only=True) as con:
        sources = con.execute("SELECT source FROM quarantine").fetchall()
    return sorted(int(source.rsplit(":", 1)[1]) - 1 for (source,) in sources)


@pytest.mark.slow  # three Spark runs, each over a JVM's start: `make test-slow`
@settings(
    max_examples=3,
    deadline=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.large_base_example,
    ],
)
@given(data=st.data())
def test_any_cut_of_a_history_with_repeats_gives_the_local_tables(
    tmp_path_factory: pytest.TempPathFactory,
    generated: pa.Table,
    quarantined_lines: list[int],
    data: st.DataObject,
) -> None:
    """The faulty set shuffled, with lines repeated (some twice more, some quarantined),
    cut into JSON Lines files (some gzipped, whole units) and byte ranges at random; a
    generated history in Parquet files of random row groups, with rows repeated within
    a file and across them; all of it in runs of row groups and ranges of random sizes."""
    folder = tmp_path_factory.mktemp("cut")
    rng = data.draw(st.randoms(use_true_random=False), label="shuffle")
    lines = FAULTS.read_text().splitlines(keepends=True)
    every = st.integers(0, len(lines) - 1)
    again = data.draw(st.lists(every, min_size=1, max_size=8), label="again")
    thrice = data.draw(every, label="thrice")
    held = data.draw(st.sampled_from(quarantined_lines), label="quarantined again")
    text = [*lines, *(lines[i] for i in again), *[lines[thrice]] * 2, lines[held]]
    rng.shuffle(text)
    files = data.draw(st.integers(1, 4), label="JSON Lines files")
    cuts = sorted(rng.sample(range(1, len(text)), files - 1))
    for n, (start, end) in enumerate(zip([0, *cuts], [*cuts, len(text)], strict=True)):
        body = "".join(text[start:end]).encode()
        if data.draw(st.booleans(), label=f"file {n} gzipped"):
            (folder / f"{n}-hands.jsonl.gz").write_bytes(gzip.compress(body, mtime=0))
        else:
            (folder / f"{n}-hands.jsonl").write_bytes(body)
    # The generated rows in two Parquet files: some rows again in their own file, and
    # the second file repeating rows of the first.
    order = list(range(generated.num_rows))
    rng.shuffle(order)
    half = len(order) // 2
    first = [*order[:half], *rng.sample(order[:half], 5)]
    second = [*order[half:], *rng.sample(order[:half], 5)]
    for n, taken in enumerate((first, second)):
        group = data.draw(st.integers(5, 120), label=f"parquet {n} row group")
        pq.write_table(generated.take(taken), folder / f"p{n}.parquet", row_group_size=group)
    split = data.draw(st.integers(20_000, 200_000), label="split bytes")
    out = tmp_path_factory.mktemp("out")
    local = handaudit("verify", str(folder), "--out", str(out / "local"))
    spark = spark_verify(
        str(folder), "--out", str(out / "spark"),
        env={"HANDAUDIT_SPARK_SPLIT_BYTES": str(split)},
    )  # fmt: skip
    assert (spark.returncode, local.returncode) == (1, 1), spark.stderr[-3000:]
    same_tables(out / "spark", out / "local")
    assert _same_summary(spark.stdout, local.stdout), (spark.stdout, local.stdout)
