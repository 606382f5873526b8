"""An audit written before audits held the encoding macros (by the code of commit
98c8ed6, same schema version) is read, reported, explained and appended to by today's
code: readers get the macros for their connection, an append stores them."""

from __future__ import annotations

import subprocess
import sys
import tarfile
from io import BytesIO
from pathlib import Path

import duckdb
import pytest

import pipeline
from pipeline.helpers.encoding import CANONICAL, MACROS
from tests.cli.test_evaluate_command import handaudit
from tests.conftest import EXAMPLES, ROOT

BEFORE_MACROS = "98c8ed6"


@pytest.fixture(scope="module")
def older(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The audit directory the older code wrote, of the family's faults (open-face streets
    among them)."""
    root = tmp_path_factory.mktemp("older")
    archive = subprocess.run(
        ["git", "archive", BEFORE_MACROS], cwd=ROOT, capture_output=True, check=False
    )
    if archive.returncode != 0:
        pytest.skip(f"commit {BEFORE_MACROS} is not in this clone's history")
    with tarfile.open(fileobj=BytesIO(archive.stdout)) as tar:
        tar.extractall(root / "code", filter="data")
    out = root / "audit"
    made = subprocess.run(
        [sys.executable, "-m", "pipeline", "verify",
         str(EXAMPLES / "family" / "faults" / "hands.jsonl"), "--out", str(out)],
        cwd=root / "code", capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert made.returncode == 1, made.stderr
    return out


def _macros(db: Path) -> set[str]:
    with duckdb.connect(str(db), read_only=True) as con:
        names = con.execute("SELECT function_name FROM duckdb_functions()").fetchall()
    return {n for (n,) in names} & {name for name, _, _ in MACROS}


def test_an_older_audit_is_read_with_the_macros(older: Path) -> None:
    db = older / "audit.duckdb"
    assert _macros(db) == set()
    for name in ("fairness", "player_ledger", "fantasyland"):
        assert handaudit("report", name, "--db", str(db)).returncode == 0, name
    audit = pipeline.open_audit(db)
    hand = audit.divergences()["hand_id"][0]
    assert "###" in audit.explain(hand)
    streets = audit.sql("SELECT card_text(placed_card(placements[1])) AS c FROM player_streets")
    assert streets.height and set(streets["c"]) <= set(CANONICAL)
    assert audit.report("fairness").totals["tests"] > 0


def test_an_append_stores_the_macros(older: Path, tmp_path: Path) -> None:
    out = tmp_path / "audit"
    out.mkdir()
    (out / "audit.duckdb").write_bytes((older / "audit.duckdb").read_bytes())
    day = EXAMPLES / "family" / "clean" / "hands.jsonl"
    appended = handaudit("verify", str(day), "--append", "--out", str(out))
    assert appended.returncode in (0, 1), appended.stderr
    assert _macros(out / "audit.duckdb") == {name for name, _, _ in MACROS}
    # The older audit is upgraded and sealed by the append: the chain starts there.
    checked = handaudit("check", "--db", str(out / "audit.duckdb"))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "1 run chained (1 earlier run written before audits were sealed" in checked.stdout


def test_an_older_audit_is_not_vouched_for(older: Path) -> None:
    checked = handaudit("check", "--db", str(older / "audit.duckdb"))
    assert checked.returncode == 1
    assert "written before audits were sealed" in checked.stdout
