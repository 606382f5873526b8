"""`handaudit explain HAND --evidence DIR` through the real command: a folder whose
manifest `sha256sum -c` accepts, whose raw record is the audited bytes and, audited
again alone, gives the hand's own findings."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import duckdb
import pytest

from pipeline.storage.table_rules import TABLE_FINDING
from tests.cli.test_evaluate_command import handaudit
from tests.conftest import EXAMPLES, load_examples

FAULTS = EXAMPLES / "family" / "faults" / "hands.jsonl"
FINDING = 'SELECT "check", seat, opponent, board, "row", expected, recorded FROM divergences'


@pytest.fixture(scope="module")
def audit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    load_examples("family/faults")
    out = tmp_path_factory.mktemp("audit")
    assert handaudit("verify", str(FAULTS), "--out", str(out)).returncode == 1
    return out / "audit.duckdb"


def _findings(db: Path, hand_id: str, own_only: bool) -> list[tuple[object, ...]]:
    where = f"WHERE hand_id = ? AND NOT {TABLE_FINDING}" if own_only else "WHERE hand_id = ?"
    with duckdb.connect(str(db), read_only=True) as con:
        return sorted(con.execute(f"{FINDING} {where}", [hand_id]).fetchall(), key=repr)


def test_a_case_file_holds_the_record_and_its_manifest_checks(audit: Path, tmp_path: Path) -> None:
    with duckdb.connect(str(audit), read_only=True) as con:
        hand_id, digest = con.execute(
            "SELECT h.hand_id, h.record_digest FROM hands h WHERE h.hand_id IN "
            f"(SELECT hand_id FROM divergences WHERE NOT {TABLE_FINDING}) "
            "ORDER BY h.hand_id LIMIT 1"
        ).fetchall()[0]
    case = tmp_path / "case"
    made = handaudit("explain", hand_id, "--db", str(audit), "--evidence", str(case))
    assert made.returncode == 0, made.stderr
    names = {p.name for p in case.iterdir()}
    assert {"record.json", "explanation.txt", "explanation.html", "divergences.json"} <= names
    assert {"rules.json", "runs.json", "MANIFEST.sha256"} <= names
    checked = subprocess.run(
        ["sha256sum", "-c", "MANIFEST.sha256"], cwd=case, capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert len(checked.stdout.splitlines()) == len(names) - 1
    record = (case / "record.json").read_bytes()
    assert subprocess.run(["sha256sum"], input=record, capture_output=True).stdout[:64] == (
        digest.encode()
    )
    told = handaudit("explain", hand_id, "--db", str(audit))
    assert (case / "explanation.txt").read_text() == told.stdout
    assert json.loads((case / "runs.json").read_text())[0]["chain_digest"]
    # The raw record, audited again alone, gives the hand's own findings (not those of
    # the rules across hands, which need the hands around it).
    alone = tmp_path / "alone"
    again = handaudit("verify", str(case / "record.json"), "--out", str(alone))
    assert again.returncode == 1, again.stderr
    found = _findings(alone / "audit.duckdb", hand_id, own_only=True)
    assert found == _findings(audit, hand_id, own_only=True) != []


def test_a_folder_that_holds_anything_is_refused(audit: Path, tmp_path: Path) -> None:
    (tmp_path / "case").mkdir()
    (tmp_path / "case" / "notes.txt").write_text("mine")
    with duckdb.connect(str(audit), read_only=True) as con:
        (hand_id,) = con.execute("SELECT hand_id FROM hands LIMIT 1").fetchall()[0]
    told = handaudit("explain", hand_id, "--db", str(audit), "--evidence", str(tmp_path / "case"))
    assert told.returncode == 2 and "is not an empty folder" in told.stderr
    assert [p.name for p in (tmp_path / "case").iterdir()] == ["notes.txt"]


def test_a_record_gone_from_its_file_is_said_in_the_case(audit: Path, tmp_path: Path) -> None:
    source = tmp_path / "hands.jsonl"
    shutil.copy(FAULTS, source)
    out = tmp_path / "audit"
    assert handaudit("verify", str(source), "--out", str(out)).returncode == 1
    source.write_text("")  # the export was overwritten since
    with duckdb.connect(str(out / "audit.duckdb"), read_only=True) as con:
        (hand_id,) = con.execute("SELECT hand_id FROM hands LIMIT 1").fetchall()[0]
    case = tmp_path / "case"
    made = handaudit("explain", hand_id, "--db", str(out / "audit.duckdb"), "--evidence", str(case))
    assert made.returncode == 0, made.stderr
    assert "is no longer at" in (case / "record-not-found.txt").read_text()
    assert not (case / "record.json").exists()
