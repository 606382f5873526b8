"""`rules infer` scores a trial entry (`naturals.dragon`) only on the hands that may show
it (`Recorded.showing`): what it finds undetermined is what scoring every hand finds, on
the public house-rules sets, clean and faulty, read together."""

from __future__ import annotations

import pytest

from pipeline.engine.infer import infer_tables
from pipeline.engine.pool import read_pool
from pipeline.engine.recorded import Recorded
from tests.conftest import EXAMPLES

SETS = sorted((EXAMPLES / "house-rules").glob("*/hands.jsonl"))


def untold(found: object) -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
    segments = found.segments  # type: ignore[attr-defined]
    return [(s.table_id, s.fit.undetermined, s.fit.entries) for s in segments]


def test_entries_scored_where_they_show_are_undetermined_as_when_scored_everywhere(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert len(SETS) == 12
    shown = untold(infer_tables(read_pool(SETS)))
    assert any(entries for _, _, entries in shown)  # entries were named
    monkeypatch.setattr(Recorded, "showing", lambda self, entry: None)
    assert untold(infer_tables(read_pool(SETS))) == shown
