"""`handaudit check` through the real command: an audit edited after it was written, by
DuckDB's own API as anyone who can write the file could, is found, named, exit 1; an
untouched audit, after a week of appends, exits 0."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest

from tests.cli.test_evaluate_command import handaudit
from tests.conftest import EXAMPLES, load_examples
from tests.property.test_ledger import split, write_parts

FAULTS = EXAMPLES / "family" / "faults" / "hands.jsonl"


@pytest.fixture(scope="module")
def audit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The audit of the family's faulty set, as verify wrote it."""
    load_examples("family/faults")
    out = tmp_path_factory.mktemp("audit")
    made = handaudit("verify", str(FAULTS), "--out", str(out))
    assert made.returncode == 1, made.stderr
    return out / "audit.duckdb"


def _copy(audit: Path, tmp_path: Path) -> Path:
    db = tmp_path / "audit.duckdb"
    shutil.copy(audit, db)
    return db


def _edited(db: Path, *statements: str) -> Path:
    with duckdb.connect(str(db)) as con:
        for statement in statements:
            con.execute(statement)
    return db


def _a_diverged_hand(db: Path) -> str:
    with duckdb.connect(str(db), read_only=True) as con:
        found = con.execute(
            "SELECT hand_id FROM divergences GROUP BY hand_id HAVING count(*) = 2 "
            "ORDER BY hand_id LIMIT 1"
        ).fetchall()
    return str(found[0][0])


def test_the_audit_as_written_is_intact(audit: Path) -> None:
    checked = handaudit("check", "--db", str(audit))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "intact" in checked.stdout and "1 run" in checked.stdout


TAMPERING: dict[str, Callable[[str], list[str]]] = {
    # The four lines: a hand's findings deleted, and its status set to ok.
    "divergences": lambda hand: [
        f"DELETE FROM divergences WHERE hand_id = '{hand}'",
        f"UPDATE hands SET status = 'ok' WHERE hand_id = '{hand}'",
    ],
    "players": lambda hand: [
        f"UPDATE players SET net = net + 1 WHERE hand_id = '{hand}' AND seat = 1"
    ],
    "hands": lambda hand: [
        f"DELETE FROM {table} WHERE hand_id = '{hand}'"
        for table in ("hands", "players", "settlements", "family_row_values", "divergences")
    ],
}


@pytest.mark.parametrize("table", sorted(TAMPERING))
def test_an_edit_is_found_and_named(table: str, audit: Path, tmp_path: Path) -> None:
    db = _copy(audit, tmp_path)
    hand = _a_diverged_hand(db)
    _edited(db, *TAMPERING[table](hand))
    checked = handaudit("check", "--db", str(db))
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert f"Table {table} was altered" in checked.stdout
    assert "hands" in checked.stdout.split(f"Table {table} was altered")[1].splitlines()[0]
    assert "intact" not in checked.stdout


def test_a_dropped_hand_is_counted(audit: Path, tmp_path: Path) -> None:
    db = _copy(audit, tmp_path)
    with duckdb.connect(str(db), read_only=True) as con:
        count = con.execute("SELECT count(*) FROM hands").fetchall()[0][0]
    _edited(db, *TAMPERING["hands"](_a_diverged_hand(db)))
    checked = handaudit("check", "--db", str(db))
    assert f"it holds {count - 1:,} rows where {count:,} were sealed" in checked.stdout


def test_a_changed_runs_row_breaks_the_chain(audit: Path, tmp_path: Path) -> None:
    db = _edited(_copy(audit, tmp_path), "UPDATE runs SET verified = verified + 1")
    checked = handaudit("check", "--db", str(db))
    assert checked.returncode == 1
    assert "runs row 1" in checked.stdout and "was altered" in checked.stdout


def test_resealing_a_table_without_the_chain_is_found(audit: Path, tmp_path: Path) -> None:
    # The seals rewritten to match an edit: the run's table digests no longer do.
    db = _copy(audit, tmp_path)
    _edited(db, "UPDATE players SET net = net + 1 WHERE seat = 1")
    from pipeline.storage.seals import segments

    with duckdb.connect(str(db)) as con:
        for part in segments(con, "players"):
            con.execute(
                "UPDATE seals SET digest = ? WHERE \"table\" = 'players' AND segment = ?",
                [part.digest, part.segment],
            )
    checked = handaudit("check", "--db", str(db))
    assert checked.returncode == 1 and "Table players was altered" in checked.stdout


def test_a_week_of_appends_checks_intact(tmp_path: Path) -> None:
    load_examples("faults")
    lines = (EXAMPLES / "faults" / "hands.jsonl").read_text().splitlines()
    days = write_parts(tmp_path / "days", split(lines, [8, 16, 24, 32, 40, 48]))  # a week
    out = str(tmp_path / "audit")
    for day in days:
        appended = handaudit("verify", str(day), "--append", "--out", out)
        assert appended.returncode in (0, 1), appended.stderr
    checked = handaudit("check", "--db", f"{out}/audit.duckdb")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"{len(days)} runs" in checked.stdout
    # The sixth day's row edited: the chain breaks there.
    _edited(Path(out) / "audit.duckdb", "UPDATE runs SET records_read = 0 WHERE rowid = 5")
    checked = handaudit("check", "--db", f"{out}/audit.duckdb")
    assert checked.returncode == 1 and "runs row 6" in checked.stdout


def test_a_plain_run_over_an_audit_keeps_the_digest_it_replaced(
    audit: Path, tmp_path: Path
) -> None:
    out = tmp_path / "audit"
    out.mkdir()
    shutil.copy(audit, out / "audit.duckdb")
    with duckdb.connect(str(out / "audit.duckdb"), read_only=True) as con:
        before = con.execute("SELECT chain_digest FROM runs").fetchall()[0][0]
    again = handaudit("verify", str(FAULTS), "--out", str(out), "--replace")
    assert again.returncode == 1, again.stderr
    with duckdb.connect(str(out / "audit.duckdb"), read_only=True) as con:
        replaced = con.execute("SELECT replaces_digest FROM runs").fetchall()[0][0]
    assert replaced == before


def test_no_audit_is_a_sentence_and_exit_2(tmp_path: Path) -> None:
    checked = handaudit("check", "--db", str(tmp_path / "none.duckdb"))
    assert checked.returncode == 2 and "no audit database" in checked.stderr
