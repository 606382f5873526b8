"""The real `handaudit` console command, run as a process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT


def handaudit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pipeline", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


def test_evaluate_shows_the_worked_hands() -> None:
    result = handaudit("evaluate", "fixtures/worked_hands.jsonl", "--limit", "4")
    assert result.returncode == 0, result.stderr
    assert "straight_flush:65432 (JK=4c) - Straight Flush, Six high" in result.stdout
    assert "flush:AK973 (JK=Kd,Ad)" in result.stdout
    assert "96 of 96 recorded row values agree" in result.stdout


def test_a_missing_file_is_a_sentence_and_exit_2(tmp_path: Path) -> None:
    result = handaudit("evaluate", str(tmp_path / "nope.jsonl"))
    assert result.returncode == 2
    assert "There is no file" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_wrong_recorded_value_exits_1(tmp_path: Path) -> None:
    line = (ROOT / "fixtures" / "worked_hands.jsonl").read_text().splitlines()[0]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(line.replace('"flush:86532"', '"flush:86533"', 1) + "\n")
    result = handaudit("evaluate", str(bad))
    assert result.returncode == 1
    assert "<- recorded flush:86533" in result.stdout


def test_version_and_help() -> None:
    assert handaudit("--version").stdout.startswith("handaudit ")
    assert "evaluate" in handaudit("--help").stdout


def test_help_shows_flags_as_flags_and_values_by_name() -> None:
    main = handaudit("--help")
    verify = handaudit("verify", "--help")
    assert main.returncode == 0 and verify.returncode == 0
    assert "<bool>" not in main.stdout + verify.stdout
    assert "--version" in main.stdout and "--parquet" in verify.stdout
    assert "DIR" in verify.stdout and "INPUT..." in verify.stdout
