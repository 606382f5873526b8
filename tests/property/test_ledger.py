"""The ledger's one property: appending in any order gives the audit of one run over
everything, table by table and row by row (and appending a part again changes nothing)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.engine.verify import verify
from pipeline.storage import table_rules
from pipeline.storage.stored import PUBLISHED
from tests.conftest import EXAMPLES

# Every table a user or the rules read, the views spread out (runs differ by nature).
COMPARED = (
    *(name for name in PUBLISHED if name != "runs"),
    "streets",
    "quarantine_appearances",
)
# Faulty Taiwanese hands and faulty hands of every family game, bad records among them.
LINES = [
    line
    for name in ("faults", "family/faults")
    for line in (EXAMPLES / name / "hands.jsonl").read_text().splitlines()
]


def audit_rows(db: Path) -> dict[str, list[str]]:
    """Each compared table's rows, in a canonical order."""
    with duckdb.connect(str(db), read_only=True) as con:
        return {
            name: sorted(map(repr, con.execute(f"SELECT * FROM {name}").fetchall()))
            for name in COMPARED
        }


def _hand_no(line: str) -> int | None:
    try:
        number = json.loads(line).get("hand_no")
    except (ValueError, AttributeError):
        return None
    return number if isinstance(number, int) else None


def split(lines: list[str], cuts: list[int]) -> list[list[str]]:
    """The lines in parts by hand number (`cuts` ascending); a line without a readable
    number goes with the line before it."""
    parts: list[list[str]] = [[] for _ in range(len(cuts) + 1)]
    part = 0
    for line in lines:
        number = _hand_no(line)
        if number is not None:
            part = sum(number >= c for c in cuts)
        parts[part].append(line)
    return parts


def write_parts(folder: Path, parts: list[list[str]]) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, lines in enumerate(parts):
        path = folder / f"day{i + 1}.jsonl"
        path.write_text("".join(line + "\n" for line in lines))
        paths.append(path)
    return paths


def _audit(inputs: list[Path], out: Path, append: bool = True) -> Any:
    return verify(inputs, out, workers=1, append=append)


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    cuts=st.lists(st.integers(2, 60), min_size=1, max_size=3, unique=True).map(sorted),
    lookback=st.sampled_from([1, 3, table_rules.LOOKBACK]),
    data=st.data(),
)
def test_appending_parts_in_any_order_gives_the_one_run_audit(
    cuts: list[int],
    lookback: int,
    data: st.DataObject,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """`lookback`: how far back the rules look for a player's last hand before they search
    the whole history (small, so that the search is taken too)."""
    work = tmp_path_factory.mktemp("ledger")
    table_rules.LOOKBACK, kept = lookback, table_rules.LOOKBACK
    try:
        paths = write_parts(work / "input", split(LINES, cuts))
        _audit(paths, work / "one", append=False)
        for path in data.draw(st.permutations(paths)):
            _audit([path], work / "ledger")
        one = audit_rows(work / "one" / "audit.duckdb")
        assert audit_rows(work / "ledger" / "audit.duckdb") == one
        summary = _audit([data.draw(st.sampled_from(paths))], work / "ledger")
        assert summary.appended["files_skipped"] == 1
        assert audit_rows(work / "ledger" / "audit.duckdb") == one
    finally:
        table_rules.LOOKBACK = kept


def test_days_appended_in_order_again_and_out_of_order(tmp_path: Path) -> None:
    """The issue's case: faulty histories split into days, appended in order, appended
    again, and appended out of order, each the one-run audit."""
    paths = write_parts(tmp_path / "input", split(LINES, [20, 40]))
    _audit(paths, tmp_path / "one", append=False)
    one = audit_rows(tmp_path / "one" / "audit.duckdb")
    for order, name in ((paths, "in_order"), (paths[::-1], "reversed")):
        for path in order:
            _audit([path], tmp_path / name)
        assert audit_rows(tmp_path / name / "audit.duckdb") == one, name
    again = _audit(paths, tmp_path / "in_order")
    assert again.appended["files_skipped"] == len(paths) and again.accounting.read == 0
    assert audit_rows(tmp_path / "in_order" / "audit.duckdb") == one
    with duckdb.connect(str(tmp_path / "in_order" / "audit.duckdb"), read_only=True) as con:
        modes = con.execute("SELECT mode, files_skipped FROM runs ORDER BY started_at").fetchall()
    assert modes == [("append", 0)] * len(paths) + [("append", len(paths))]


def test_a_missing_day_raises_continuity_that_its_arrival_removes(tmp_path: Path) -> None:
    """Across a missing day, the stacks do not continue; when the day arrives, they do."""
    lines = (EXAMPLES / "family" / "clean" / "hands.jsonl").read_text().splitlines()
    day1, day2, day3 = write_parts(tmp_path / "input", split(lines, [15, 30]))
    _audit([day1], tmp_path / "ledger")
    gap = _audit([day3], tmp_path / "ledger")
    assert gap.divergences.get("continuity", 0) > 0
    filled = _audit([day2], tmp_path / "ledger")
    assert not filled.divergences and filled.clean
    with duckdb.connect(str(tmp_path / "ledger" / "audit.duckdb"), read_only=True) as con:
        found = con.execute("SELECT count(*) FROM divergences").fetchall()[0][0]
        diverged = con.execute("SELECT count(*) FROM hands WHERE status <> 'ok'").fetchall()
    assert found == 0 and diverged[0][0] == 0


def test_a_clean_day_audited_alone_raises_no_finding(tmp_path: Path) -> None:
    """A day that starts in the middle of every table: nobody's previous hand is known."""
    lines = (EXAMPLES / "family" / "clean" / "hands.jsonl").read_text().splitlines()
    _, day2, _ = write_parts(tmp_path / "input", split(lines, [15, 30]))
    summary = _audit([day2], tmp_path / "alone", append=False)
    assert summary.clean, summary.text()
    assert summary.not_checked[0] > 0


def test_a_day_of_one_quarantined_record_is_judged_with_its_table(tmp_path: Path) -> None:
    """A quarantined record still takes part in its table's sequence (its stacks are read),
    so a day holding nothing else is judged with the hands after it."""
    hands = [
        json.loads(x) for x in (EXAMPLES / "family/clean/hands.jsonl").read_text().splitlines()
    ]
    table = hands[0]["table_id"]
    at = sorted(h["hand_no"] for h in hands if h["table_id"] == table)[10]
    spoiled = next(h for h in hands if h["table_id"] == table and h["hand_no"] == at)
    spoiled["players"][0]["top"][0] = "Xx"  # a bad card: quarantined, its JSON readable
    lines = [json.dumps(h) for h in hands if h["table_id"] == table]
    before, day, after = write_parts(tmp_path / "input", split(lines, [at, at + 1]))
    assert len(day.read_text().splitlines()) == 1
    _audit([before, day, after], tmp_path / "one", append=False)
    for path in (before, after, day):
        _audit([path], tmp_path / "ledger")
    assert audit_rows(tmp_path / "ledger" / "audit.duckdb") == audit_rows(
        tmp_path / "one" / "audit.duckdb"
    )
