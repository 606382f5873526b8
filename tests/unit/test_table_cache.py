"""The table cache writes its file only when the work in hand built tables it lacked."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from pipeline.core.evaluator import memo, tables
from pipeline.engine import table_cache


def test_work_that_builds_nothing_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HANDAUDIT_CACHE", str(tmp_path))
    tables.rank5()  # built in this process before the work below
    path = table_cache.cache_file()
    assert path is not None
    # A file holding fewer tables than this process has: nothing to add from this work.
    path.write_bytes(pickle.dumps(dict(list(memo.built().items())[:1])))
    written = path.stat().st_mtime_ns
    with table_cache.cached_tables():
        tables.rank5()
    assert path.stat().st_mtime_ns == written
