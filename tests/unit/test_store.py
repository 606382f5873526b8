"""The store's inserts run on threads of their own: a failed one still stops the run,
and nothing partial is left behind."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from pipeline.engine.verify import verify
from pipeline.helpers.errors import AuditError
from pipeline.storage import store
from tests.conftest import ROOT

SAMPLE = ROOT / "fixtures" / "sample" / "jsonl" / "hands.jsonl.gz"


def test_a_failed_insert_stops_the_run_and_leaves_nothing_partial(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    insert = store.AuditStore._insert_now

    def disk_full(self: store.AuditStore, table_name: str, rows: pa.Table) -> None:
        if table_name == "settlements":
            raise duckdb.IOException("No space left on device")
        insert(self, table_name, rows)

    monkeypatch.setattr(store, "FLUSH_ROWS", 100)  # inserts while blocks are still read
    monkeypatch.setattr(store.AuditStore, "_insert_now", disk_full)
    out = tmp_path / "out"
    with pytest.raises(AuditError, match=f"the disk holding {out} is full"):
        verify([SAMPLE], out)
    assert [p.name for p in out.iterdir()] == []


def test_queries_see_every_row_appended(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store, "FLUSH_ROWS", 3)
    audit = store.AuditStore(tmp_path)
    try:
        for start in range(0, 10, 2):
            audit.append("sitting_out", pa.table({"hand_id": [f"h{start}", f"h{start + 1}"]}))
        assert audit.query("SELECT hand_id FROM sitting_out") == [(f"h{i}",) for i in range(10)]
    finally:
        audit.discard()
