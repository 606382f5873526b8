"""A hand id read twice, through the real command: an exact repeat stays `duplicate_hand`
and names the record audited; one with other content is `conflicting_hand`, naming both
sources and the fields that differ; in one run, across appended days, from JSON Lines, a
JSON array and Parquet; the run summary and `divergence_summary` count them apart."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.ingest.records import differing_fields
from tests.cli.test_evaluate_command import handaudit
from tests.conftest import EXAMPLES, load_examples


def _hands() -> list[dict[str, Any]]:
    load_examples("clean")
    path = EXAMPLES / "clean" / "hands.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()[:30]]


def _changed(hand: dict[str, Any]) -> dict[str, Any]:
    """The hand rewritten: when it started, and a player's net and stack."""
    other = copy.deepcopy(hand)
    other["started_at"] = "2026-01-01T00:00:00Z"
    other["players"][1]["net"] = "999.00"
    other["players"][1]["stack_end"] = "1999.00"
    return other


CHANGED = {"started_at", "players[1].net", "players[1].stack_end"}


def _fields(message: str) -> set[str]:
    """The fields a conflict's message names (in the record's order: Parquet's by name)."""
    found = re.search(r": ([^:;]+) differ;", message)
    assert found is not None, message
    return set(found.group(1).split(", "))


def _write(path: Path, hands: list[dict[str, Any]]) -> Path:
    if path.suffix == ".parquet":
        pq.write_table(pa.Table.from_struct_array(pa.array(hands)), path)
    elif path.suffix == ".json":
        path.write_text(json.dumps(hands, indent=1))
    else:
        path.write_text("".join(json.dumps(h) + "\n" for h in hands))
    return path


def _repeats(db: Path) -> list[tuple[str, str, str]]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(
            'SELECT "check", source, message FROM quarantine '
            "WHERE \"check\" IN ('duplicate_hand', 'conflicting_hand') ORDER BY source"
        ).fetchall()


def _place(path: Path, at: int) -> str:
    return f"{path}:row {at}" if path.suffix == ".parquet" else f"{path}:{at}"


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".parquet"])
def test_a_repeat_in_one_run_is_exact_or_conflicting(suffix: str, tmp_path: Path) -> None:
    hands = _hands()
    first = hands[4]
    path = _write(tmp_path / f"hands{suffix}", [*hands, first, _changed(first)])
    run = handaudit("verify", str(path), "--out", str(tmp_path / "audit"))
    assert run.returncode == 1, run.stderr
    assert "(conflicting_hand 1, duplicate_hand 1)" in run.stdout
    found = _repeats(tmp_path / "audit" / "audit.duckdb")
    assert [c for c, *_ in found] == ["duplicate_hand", "conflicting_hand"]
    audited = _audited_source(tmp_path / "audit" / "audit.duckdb", first["hand_id"])
    (_, exact_at, exact), (_, changed_at, conflict) = found
    assert f"is an exact repeat of {audited}" in exact
    assert conflict.startswith(f"{changed_at}: hand {first['hand_id']} conflicts with the record")
    assert audited in conflict
    assert _fields(conflict) == CHANGED
    if suffix != ".json":  # a JSON array's sources are the lines its objects start on
        assert exact_at == _place(path, 31) and changed_at == _place(path, 32)
    # The hand's case file holds every copy: the audited record, then the two repeats.
    case = tmp_path / "case"
    db = str(tmp_path / "audit" / "audit.duckdb")
    assert (
        handaudit("explain", first["hand_id"], "--db", db, "--evidence", str(case)).returncode == 0
    )
    copies = [json.loads((case / f"record{n}.json").read_bytes()) for n in ("", "-2", "-3")]
    assert _differing(copies[0], first) == _differing(copies[1], first) == set()
    assert _differing(copies[2], first) == CHANGED


def _differing(record: dict[str, Any], hand: dict[str, Any]) -> set[str]:
    return set(differing_fields(json.dumps(record), json.dumps(hand)) or [])


def _audited_source(db: Path, hand_id: str) -> str:
    with duckdb.connect(str(db), read_only=True) as con:
        found = con.execute("SELECT source FROM hands WHERE hand_id = ?", [hand_id]).fetchone()
    assert found is not None
    return str(found[0])


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_a_repeat_across_appended_days_is_told_apart(suffix: str, tmp_path: Path) -> None:
    hands = _hands()
    day_1 = _write(tmp_path / f"day1{suffix}", hands[:20])
    day_2 = _write(tmp_path / f"day2{suffix}", [*hands[20:], hands[3], _changed(hands[7])])
    out = str(tmp_path / "audit")
    assert handaudit("verify", str(day_1), "--append", "--out", out).returncode == 0
    second = handaudit("verify", str(day_2), "--append", "--out", out)
    assert second.returncode == 1, second.stderr
    assert "(conflicting_hand 1, duplicate_hand 1)" in second.stdout
    found = _repeats(tmp_path / "audit" / "audit.duckdb")
    assert [c for c, *_ in found] == ["duplicate_hand", "conflicting_hand"]
    assert f"is an exact repeat of {_place(day_1, 4)};" in found[0][2]
    assert f"audited from {_place(day_1, 8)}: " in found[1][2]
    assert _fields(found[1][2]) == CHANGED
    summary = handaudit("report", "divergence_summary", "--db", f"{out}/audit.duckdb")
    assert summary.returncode == 0, summary.stderr
    assert "conflicting_hand" in summary.stdout and "duplicate_hand" in summary.stdout


def test_the_same_record_in_another_format_conflicts_with_nothing_named(tmp_path: Path) -> None:
    # The bytes differ (a JSON line, a Parquet row's canonical JSON), the content does not.
    hands = _hands()
    day_1 = _write(tmp_path / "day1.jsonl", hands[:20])
    day_2 = _write(tmp_path / "day2.parquet", [hands[3]])
    out = str(tmp_path / "audit")
    assert handaudit("verify", str(day_1), "--append", "--out", out).returncode == 0
    assert handaudit("verify", str(day_2), "--append", "--out", out).returncode == 1
    ((check, _, message),) = _repeats(tmp_path / "audit" / "audit.duckdb")
    assert check == "conflicting_hand"
    assert "the same fields and values, written differently" in message


def test_a_conflict_whose_first_record_is_gone_still_says_so(tmp_path: Path) -> None:
    hands = _hands()
    day_1 = _write(tmp_path / "day1.jsonl", hands[:20])
    out = str(tmp_path / "audit")
    assert handaudit("verify", str(day_1), "--append", "--out", out).returncode == 0
    day_1.unlink()
    day_2 = _write(tmp_path / "day2.jsonl", [_changed(hands[7])])
    assert handaudit("verify", str(day_2), "--append", "--out", out).returncode == 1
    ((check, _, message),) = _repeats(tmp_path / "audit" / "audit.duckdb")
    assert check == "conflicting_hand"
    assert "the records' digests differ (the audited record could not be read again" in message
