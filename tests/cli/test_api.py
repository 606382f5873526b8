"""The Python API as a notebook uses it: `import pipeline` alone, every report the command
line has with the same rows and totals, the hands, the divergences, a hand explained."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import date
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pytest

import pipeline
from pipeline.helpers.errors import AuditError
from pipeline.outputs import registry
from pipeline.outputs.reports import plain
from tests.cli.test_evaluate_command import handaudit
from tests.conftest import EXAMPLES, ROOT

REPORTS = [name for name, spec in registry.specs().items() if "html" not in spec.options]
# Each report once whole and once filtered the ways it reads filters.
FILTERS: list[dict[str, Any]] = [
    {},
    {"table_id": "T203000"},
    {"player_id": "T203004-p1", "from_day": "2026-01-01", "to_day": "2027-12-31"},
    {"variant": "chinese"},
]
_OPTIONS = {"table_id": "--table", "player_id": "--player", "variant": "--variant"}
_OPTIONS |= {"from_day": "--from", "to_day": "--to"}


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("audit")
    inputs = [EXAMPLES / "faults" / "hands.jsonl", EXAMPLES / "family" / "faults" / "hands.jsonl"]
    assert handaudit("verify", *map(str, inputs), "--out", str(out)).returncode == 1
    return out / "audit.duckdb"


def _cli_json(db: Path, name: str, filters: dict[str, str]) -> dict[str, Any]:
    options = [x for k, v in filters.items() for x in (_OPTIONS[k], v)]
    result = handaudit("report", name, "--db", str(db), "--format", "json", *options)
    assert result.returncode == 0, result.stderr
    envelope: dict[str, Any] = json.loads(result.stdout)
    return envelope


@pytest.mark.parametrize("filters", FILTERS, ids=["whole", "table", "player", "game"])
@pytest.mark.parametrize("name", REPORTS)
def test_every_report_is_the_command_lines(db: Path, name: str, filters: dict[str, Any]) -> None:
    if name == "rules" and "player_id" in filters:
        pytest.skip("the rules report reads no player filter")
    cli = _cli_json(db, name, filters)
    report = pipeline.open_audit(db).report(name, **filters)
    assert isinstance(report.rows, pl.DataFrame)
    rows = [{k: plain(v) for k, v in row.items()} for row in report.rows.to_dicts()]
    assert rows == cli["rows"]
    assert report.rows.columns == (list(cli["rows"][0]) if cli["rows"] else report.rows.columns)
    expected = {k: v for k, v in cli.items() if k not in ("rows", "generated_at")}
    got = {k: v for k, v in report.metadata.items() if k != "generated_at"}
    assert got == expected
    assert report.headline == cli.get("headline", "")
    assert {k: plain(v) for k, v in report.totals.items()} == cli["totals"]


def test_the_api_is_all_a_notebook_imports() -> None:
    code = (
        "import sys, pipeline\n"
        "assert 'polars' not in sys.modules  # imported on first use\n"
        f"a = pipeline.open_audit({str(ROOT / 'nowhere.duckdb')!r})\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert "There is no audit database" in run.stderr, run.stderr
    assert set(pipeline.__all__) >= {"open_audit", "Audit", "Report"}


def test_hands_divergences_and_a_hand_explained(db: Path) -> None:
    audit = pipeline.open_audit(str(db))
    counts = audit.sql(
        "SELECT (SELECT count(*) FROM hands) AS hands, (SELECT count(*) FROM divergences) AS d"
    ).row(0, named=True)
    hands, divergences = audit.hands(), audit.divergences()
    assert hands.height == counts["hands"] and divergences.height == counts["d"]
    assert hands["hand_id"].is_sorted() and hands["hand_id"].n_unique() == hands.height
    table = audit.hands(table_id="T203000")
    assert table.height and set(table["table_id"]) == {"T203000"}
    mine = audit.divergences(table_id="T203000")
    assert set(mine["hand_id"]) <= set(table["hand_id"])
    assert mine.height == divergences.filter(pl.col("table_id") == "T203000").height
    played = audit.hands(player_id="T203004-p1")
    joined = audit.sql(
        "SELECT count(DISTINCT hand_id) AS n FROM players WHERE player_id = ?", "T203004-p1"
    )
    assert played.height == joined["n"][0] > 0
    assert audit.hands(from_day=date(2099, 1, 1)).height == 0
    hand = divergences["hand_id"][0]
    told = handaudit("explain", hand, "--db", str(db))
    assert audit.explain(hand) + "\n" == told.stdout


def test_mistakes_are_sentences(db: Path, tmp_path: Path) -> None:
    audit = pipeline.open_audit(db)
    with pytest.raises(AuditError, match="no report 'nope'"):
        audit.report("nope")
    with pytest.raises(AuditError, match="HTML page"):
        audit.report("audit")
    with pytest.raises(AuditError, match="alpha"):
        audit.report("player_ledger", alpha=0.05)
    with pytest.raises(AuditError, match="2026-11-29"):
        audit.hands(from_day="yesterday")
    with pytest.raises(AuditError, match="No filter 'table'"):
        audit.hands(table="T203000")  # type: ignore[call-arg]
    with pytest.raises(AuditError, match="failed"):
        audit.sql("SELECT nothing FROM nowhere")
    (tmp_path / "x.duckdb").write_text("not a database")
    with pytest.raises(AuditError, match="not an audit database"):
        pipeline.open_audit(tmp_path / "x.duckdb")


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda a: a.sql(""), "no rows"),
        (lambda a: a.sql("SELECT INTERVAL 1 DAY AS i"), "cast it"),
        (lambda a: a.explain(None), "text"),
        (lambda a: a.report("fairness", alpha="0.05"), "alpha is a rate"),
        (lambda a: a.report("player_ledger", from_day=20261105), "from_day is a date"),
        (lambda a: a.report("player_ledger", to_day="2026-13-01"), "to_day is a day"),
        (lambda a: a.report("player_ledger", table_id=203000), "table_id is text"),
        (lambda a: a.report("player_ledger", variant="bridge"), "variant is one of"),
        (lambda a: a.report("audit"), "Audit.page()"),
    ],
)
def test_every_mistake_is_an_audit_error_in_the_apis_words(db: Path, call: Any, words: str) -> None:
    with pytest.raises(AuditError, match=re.escape(words)) as raised:
        call(pipeline.open_audit(db))
    assert "--" not in str(raised.value)


def test_the_page_a_held_file_and_a_changed_directory(db: Path, tmp_path: Path) -> None:
    audit = pipeline.open_audit(db)
    assert audit.page().startswith("<!doctype html>")
    writer = duckdb.connect(str(db))  # this process holds it for writing
    try:
        with pytest.raises(AuditError, match="A connection of this process holds"):
            audit.hands()
    finally:
        writer.close()
    relative = pipeline.open_audit(os.path.relpath(db))
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert relative.hands().height == audit.hands().height
    finally:
        os.chdir(here)
