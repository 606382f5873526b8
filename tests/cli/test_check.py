"""`handaudit check` through the real command: an audit edited after it was written, by
DuckDB's own API as anyone who can write the file could, is found, named, exit 1; an
untouched audit, after a week of appends, exits 0."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from pipeline.storage.chain import _where, seal_run
from pipeline.storage.seals import segments
from pipeline.storage.signing import private_key
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


def test_a_database_of_another_kind_is_told_offline(tmp_path: Path) -> None:
    """A SQLite file given as the audit: DuckDB would fetch its extension from the internet
    to open it; the commands say what it is instead, in a sentence."""
    other = tmp_path / "audit.sqlite"
    with sqlite3.connect(other) as con:
        con.execute("CREATE TABLE hands (hand_id TEXT)")
    out = tmp_path / "out"
    out.mkdir()
    shutil.copy(other, out / "audit.duckdb")
    for args in (
        ("check", "--db", str(other)),
        ("report", "divergence_summary", "--db", str(other)),
        ("verify", str(FAULTS), "--out", str(out)),
    ):
        told = handaudit(*args)
        assert told.returncode == 2, (args, told.stderr)
        assert "sqlite extension, which handaudit does not load" in told.stderr, told.stderr
        assert len(told.stderr.strip().splitlines()) == 1


def _keys(folder: Path, name: str) -> tuple[Path, Path]:
    """An Ed25519 key pair in PEM files, as openssl writes them."""
    key = Ed25519PrivateKey.generate()
    private = folder / f"{name}.pem"
    private.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    public = folder / f"{name}.pub.pem"
    public.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return private, public


def test_signed_runs_verify_and_a_resigned_chain_does_not(tmp_path: Path) -> None:
    mine, my_public = _keys(tmp_path, "operator")
    theirs, _ = _keys(tmp_path, "editor")
    out = tmp_path / "audit"
    made = handaudit("verify", str(FAULTS), "--out", str(out), "--sign-key", str(mine))
    assert made.returncode == 1, made.stderr
    db = out / "audit.duckdb"
    checked = handaudit("check", "--db", str(db), "--public-key", str(my_public))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "every run signed by the key" in checked.stdout
    # The signature's own columns, edited: the key it keeps, or the signature alone.
    for edit in ("public_key = 'deadbeef'", "signature = NULL"):
        copy = _edited(_copy(db, tmp_path), f"UPDATE runs SET {edit}")
        checked = handaudit("check", "--db", str(copy))
        assert checked.returncode == 1, (edit, checked.stdout)
        assert "its signature is not that of the key it keeps" in checked.stdout
    # An editor who knows the code reseals the edited audit, signed with their own key:
    # the seals and the chain hold, the signature does not.
    _edited(db, "UPDATE players SET net = net + 1 WHERE seat = 1")
    with duckdb.connect(str(db)) as con:
        (run_id,) = con.execute("SELECT run_id FROM runs").fetchall()[0]
        seal_run(con, run_id, None, private_key(theirs))
    assert handaudit("check", "--db", str(db)).returncode == 0  # resealed: consistent
    checked = handaudit("check", "--db", str(db), "--public-key", str(my_public))
    assert checked.returncode == 1
    assert "runs row 1" in checked.stdout and "is not signed by the key given" in checked.stdout


def test_an_unsigned_run_fails_a_check_for_a_signature(audit: Path, tmp_path: Path) -> None:
    _, public = _keys(tmp_path, "operator")
    checked = handaudit("check", "--db", str(audit), "--public-key", str(public))
    assert checked.returncode == 1 and "runs row 1" in checked.stdout
    assert "is not signed." in checked.stdout
    assert "is not signed as asked" in checked.stdout and "altered" not in checked.stdout


def test_a_key_that_cannot_serve_is_one_sentence_and_exit_2(tmp_path: Path) -> None:
    private, public = _keys(tmp_path, "operator")
    rsa_key = tmp_path / "rsa.pem"
    rsa_key.write_bytes(
        rsa.generate_private_key(65537, 2048).private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    (tmp_path / "text.pem").write_text("not a key\n")
    both = tmp_path / "both.pem"  # two keys in one file: which one signs is not guessed
    both.write_bytes(private.read_bytes() + _keys(tmp_path, "other")[0].read_bytes())
    out = str(tmp_path / "audit")
    verify = ("verify", str(FAULTS), "--out", out, "--sign-key")
    cases = [
        ((*verify, str(tmp_path / "none.pem")), "cannot be read"),
        ((*verify, str(tmp_path / "text.pem")), "holds no private key"),
        ((*verify, str(rsa_key)), "is a RSA private key"),
        ((*verify, str(public)), "holds no private key"),
        ((*verify, str(both)), "holds 2 PEM blocks"),
        (("check", "--db", f"{out}/audit.duckdb", "--public-key", str(private)), "holds no public"),
    ]
    for args, words in cases:
        told = handaudit(*args)
        assert told.returncode == 2, (args, told.stdout, told.stderr)
        assert words in told.stderr and len(told.stderr.strip().splitlines()) == 1, told.stderr
    assert not (tmp_path / "audit" / "audit.duckdb").exists()  # refused before anything


def _ledger(tmp_path: Path) -> tuple[Path, list[Path]]:
    """An audit that appends built: the faults set's first days, the last day still to come."""
    load_examples("faults")
    lines = (EXAMPLES / "faults" / "hands.jsonl").read_text().splitlines()
    days = write_parts(tmp_path / "days", split(lines, [20, 40]))
    out = tmp_path / "audit"
    for day in days[:2]:
        assert handaudit("verify", str(day), "--append", "--out", str(out)).returncode == 1
    return out, days


@pytest.mark.parametrize(
    "edit",
    [
        # The edit: a hand's findings deleted, its status set to ok.
        "DELETE FROM divergences WHERE hand_id = (SELECT min(hand_id) FROM divergences)",
        # A row of a table that only grows, and its segment's seal forged to match.
        "UPDATE players SET net = net + 1 WHERE rowid = 3",
        "FORGED",
        # A runs row made up before the chain, as if written before audits were sealed.
        "INSERT INTO runs SELECT * REPLACE ('forged' AS run_id, NULL AS table_digests, "
        "NULL AS chain_digest, finished_at - INTERVAL 300 DAY AS finished_at) FROM runs LIMIT 1",
        # An edit, and every runs row stripped of its seals, as if written before audits
        # were sealed: the append would seal the edit into a new chain.
        "UPDATE players SET net = net + 100 WHERE rowid = 0; UPDATE runs SET "
        "table_digests = NULL, chain_digest = NULL, signature = NULL, public_key = NULL",
    ],
)
def test_an_append_refuses_an_audit_altered_since_its_last_run(edit: str, tmp_path: Path) -> None:
    out, days = _ledger(tmp_path)
    db = out / "audit.duckdb"
    if edit == "FORGED":
        _edited(db, "UPDATE players SET net = net + 1 WHERE rowid = 3")
        with duckdb.connect(str(db)) as con:
            part = next(iter(segments(con, "players")))
            con.execute(
                "UPDATE seals SET digest = ? WHERE \"table\" = 'players' AND segment = 0",
                [part.digest],
            )
    else:
        _edited(db, edit)
    before = db.read_bytes()
    appended = handaudit("verify", str(days[2]), "--append", "--out", str(out))
    assert appended.returncode == 2, appended.stdout + appended.stderr
    assert "was altered since its last run" in appended.stderr
    assert "an append would seal the edit" in appended.stderr
    assert db.read_bytes() == before  # nothing sealed over the edit
    assert handaudit("check", "--db", str(db)).returncode == 1


OTHER = "macros' parameters, schemas, sequences, types, indexes, constraints and comments were"


def test_views_macros_and_column_types_are_sealed(audit: Path, tmp_path: Path) -> None:
    for edit, words in [
        ("CREATE OR REPLACE MACRO card_text(c) AS 'As'", "views and macros were altered"),
        ("DROP VIEW rows", "views and macros were altered"),
        (
            "ALTER TABLE players ALTER COLUMN net TYPE DECIMAL(18,3) "
            "USING (net / 10)::DECIMAL(18,3)",
            "Table players was altered",
        ),
        # A macro's parameters swapped, its body unchanged: every card of `rows` reads 2c.
        ("CREATE OR REPLACE MACRO cards_item(i, word) AS ((word >> (6 * i)) & 63)", OTHER),
        ("CREATE SCHEMA evil; CREATE TABLE evil.hands AS SELECT * FROM main.hands", OTHER),
        ("COMMENT ON TABLE hands IS 'all verified'", OTHER),
        ("ALTER TABLE hands ALTER COLUMN status SET DEFAULT 'ok'", OTHER),
        ("CREATE SEQUENCE s", OTHER),
        ("CREATE INDEX by_net ON players (net)", OTHER),
    ]:
        db = _edited(_copy(audit, tmp_path), edit)
        checked = handaudit("check", "--db", str(db))
        assert checked.returncode == 1 and words in checked.stdout, (edit, checked.stdout)


def test_a_dropped_table_or_broken_seals_are_named_not_crashed(audit: Path, tmp_path: Path) -> None:
    for edit, words in [
        ("DROP TABLE hands", "Table hands was dropped"),
        ("DROP TABLE seals", "Table seals was dropped"),
        ("UPDATE runs SET table_digests = 'not json'", "table digests were altered"),
        ("DELETE FROM seals WHERE \"table\" = 'players'", "Table seals was altered"),
        ("DROP TABLE runs", "Table runs was dropped or altered"),
        ("ALTER TABLE runs RENAME TO earlier", "Table runs was dropped or altered"),
        ("ALTER TABLE runs DROP COLUMN finished_at", "Table runs was dropped or altered"),
    ]:
        db = _edited(_copy(audit, tmp_path), edit)
        checked = handaudit("check", "--db", str(db))
        assert checked.returncode == 1 and words in checked.stdout, (edit, checked.stdout)
        assert "Traceback" not in checked.stderr


def test_the_hands_named_are_those_of_the_rows_that_differ() -> None:
    """A segment past the first names the hands of its own rows (ten rows a hand here)."""
    with duckdb.connect() as con:
        con.execute("CREATE TABLE t AS SELECT 'h' || (range // 10) AS hand_id FROM range(40000)")
        sealed = list(segments(con, "t"))
        said = _where(con, "t", [sealed[1]], sealed)
    assert said.startswith("the rows 16,385 to 32,768 differ (hands h1638, h1639, h1640")
    assert said.endswith("h1642 and 1,634 more)")  # h1638 to h3276: 1,639 hands, 5 named
