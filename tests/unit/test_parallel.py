"""Blocks audited side by side give the serial audit, row for row and in the same order."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from pipeline.engine.verify import verify
from pipeline.ingest import parts as file_parts
from pipeline.ingest import sources
from pipeline.storage import store
from tests.conftest import EXAMPLES, ROOT

TABLES = ("hands", "players", "row_values", "settlements", "sitting_out", "divergences")


def _stored(database: Path) -> dict[str, list[tuple[object, ...]]]:
    with duckdb.connect(str(database), read_only=True) as con:
        tables = {name: con.execute(f"SELECT * FROM {name}").fetchall() for name in TABLES}
        tables["quarantine"] = con.execute(
            'SELECT source, hand_id, "check", message FROM quarantine'
        ).fetchall()
        tables["runs"] = con.execute(
            "SELECT records_read, verified, quarantined, hands_diverged, divergences, "
            "rake_total, recorded_rake_total FROM runs"
        ).fetchall()
    return tables


@pytest.mark.parametrize(
    "inputs",
    [
        [EXAMPLES / "faults" / "hands.jsonl", EXAMPLES / "edge" / "hands.jsonl"],
        [ROOT / "fixtures" / "sample" / "parquet" / "hands.parquet"],
    ],
    ids=["faults+edge jsonl", "sample parquet"],
)
def test_workers_change_no_output_row(
    inputs: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Small blocks: many of them in flight, and repeated hands in different blocks.
    monkeypatch.setattr(file_parts, "LINES_PER_BLOCK", 37)
    monkeypatch.setattr(sources, "ROWS_PER_BATCH", 37)
    serial = verify(inputs, tmp_path / "serial", workers=1)
    threaded = verify(inputs, tmp_path / "threaded", workers=3)
    assert serial.accounting == threaded.accounting
    assert serial.accounting.by_check.get("duplicate_hand", 0) > 0
    assert _stored(Path(serial.database)) == _stored(Path(threaded.database))


def test_store_buffer_changes_no_output_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Parquet (text read as dictionaries) and JSON Lines (plain text) in one table.
    inputs = [
        ROOT / "fixtures" / "sample" / "parquet" / "hands.parquet",
        EXAMPLES / "edge" / "hands.jsonl",
    ]
    monkeypatch.setattr(file_parts, "LINES_PER_BLOCK", 37)
    whole = verify(inputs, tmp_path / "whole")
    # Inserts of 50 rows or more, mid-run, beside the blocks of 37 hands.
    monkeypatch.setattr(store, "FLUSH_ROWS", 50)
    buffered = verify(inputs, tmp_path / "buffered")
    assert whole.accounting == buffered.accounting
    assert _stored(Path(whole.database)) == _stored(Path(buffered.database))
