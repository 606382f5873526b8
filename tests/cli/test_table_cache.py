"""The evaluator's tables kept between runs: same answers cold or warm, never a failure."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import EXAMPLES, ROOT

EDGE = EXAMPLES / "edge" / "hands.jsonl"


def evaluate(cache: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "pipeline", "evaluate", str(EDGE), "--limit", "1000"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        env={**os.environ, "HANDAUDIT_CACHE": cache},
    )
    result.stdout = re.sub(r"evaluated in [0-9.]+ ms", "evaluated in (time)", result.stdout)
    return result


def test_cold_and_warm_runs_agree_and_a_spoilt_cache_is_rebuilt(tmp_path: Path) -> None:
    cold = evaluate(str(tmp_path))
    assert cold.returncode == 0, cold.stderr
    (saved,) = tmp_path.glob("evaluator-tables-*.pickle")
    assert not list(tmp_path.glob("*.partial"))

    written = saved.stat().st_mtime_ns
    warm = evaluate(str(tmp_path))
    assert warm.stdout == cold.stdout
    assert saved.stat().st_mtime_ns == written  # nothing new built, nothing written

    saved.write_bytes(saved.read_bytes()[:1000])  # cut short
    spoilt = evaluate(str(tmp_path))
    assert spoilt.returncode == 0 and spoilt.stdout == cold.stdout
    assert "Traceback" not in spoilt.stderr
    assert saved.stat().st_size > 1_000_000  # written whole again


def test_the_cache_can_be_turned_off(tmp_path: Path) -> None:
    result = evaluate("off")
    assert result.returncode == 0, result.stderr
    assert not list(tmp_path.iterdir())
