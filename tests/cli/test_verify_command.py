"""`handaudit verify` and `explain` as a user runs them: exit codes, files, words not tracebacks."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pyarrow.parquet as pq

from tests.cli.test_audit_kept import interrupted_at
from tests.cli.test_evaluate_command import handaudit
from tests.conftest import EXAMPLES, ROOT

WORKED = ROOT / "fixtures" / "worked_hands.jsonl"


def test_clean_input_exits_0_and_prints_the_summary(tmp_path: Path) -> None:
    result = handaudit("verify", str(EXAMPLES / "clean" / "hands.jsonl"), "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "records read            400" in result.stdout
    assert "nothing diverged" in result.stdout
    assert (tmp_path / "audit.duckdb").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["audit.duckdb"]  # nothing partial left


def test_findings_exit_1_and_missing_input_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(WORKED.read_text().replace('"rake_total": "0.02"', '"rake_total": "0.03"', 1))
    result = handaudit("verify", str(bad), "--out", str(tmp_path / "a"))
    assert result.returncode == 1
    assert "rake_total" in result.stdout
    missing = handaudit("verify", str(tmp_path / "nope.jsonl"), "--out", str(tmp_path / "b"))
    assert missing.returncode == 2
    assert "does not exist" in missing.stderr and "Traceback" not in missing.stderr
    assert not (tmp_path / "b" / "audit.duckdb").exists()


def test_rerun_replaces_and_gives_the_same_rows(tmp_path: Path) -> None:
    def rows() -> list[tuple[object, ...]]:
        with duckdb.connect(str(tmp_path / "audit.duckdb"), read_only=True) as con:
            # The tables in their stored order; the rows view (a join) as a sorted list.
            stored = [
                tuple(r)
                for t in ("hands", "players", "row_values", "settlements", "divergences")
                for r in con.execute(f"SELECT * FROM {t}").fetchall()
            ]
            return stored + sorted(
                tuple(map(str, r)) for r in con.execute("SELECT * FROM rows").fetchall()
            )

    source = str(EXAMPLES / "faults" / "hands.jsonl")
    handaudit("verify", source, "--out", str(tmp_path))
    first = rows()
    handaudit("verify", source, "--out", str(tmp_path))
    assert rows() == first


def test_parquet_tables_beside_the_database(tmp_path: Path) -> None:
    result = handaudit("verify", str(WORKED), "--out", str(tmp_path), "--parquet")
    assert result.returncode in (0, 1), result.stderr
    names = sorted(p.name for p in (tmp_path / "parquet").iterdir())
    assert {
        "hands.parquet",
        "players.parquet",
        "rows.parquet",
        "divergences.parquet",
        "quarantine.parquet",
        "runs.parquet",
        "settlements.parquet",
    } <= set(names)


def test_an_output_that_cannot_be_written_is_said_in_words(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("a file, not a directory")
    out = tmp_path / "taken" / "audit"
    result = handaudit("verify", str(WORKED), "--out", str(out))
    assert result.returncode == 2
    assert "handaudit:" in result.stderr and "Traceback" not in result.stderr
    assert str(out) in result.stderr


def test_interrupted_run_keeps_the_previous_audit(tmp_path: Path) -> None:
    """Ctrl-C while a plain run audits (paused there, so it always lands there): the
    previous audit is byte for byte as it was, and nothing partial is left beside it."""
    out = tmp_path / "out"
    assert handaudit("verify", str(WORKED), "--out", str(out)).returncode in (0, 1)
    before = hashlib.sha256((out / "audit.duckdb").read_bytes()).hexdigest()
    result = interrupted_at(out, "auditing", str(EXAMPLES / "faults" / "hands.jsonl"))
    assert result.returncode == 130, result.stderr
    assert "interrupted" in result.stderr and "Traceback" not in result.stderr
    assert hashlib.sha256((out / "audit.duckdb").read_bytes()).hexdigest() == before
    assert [p.name for p in out.iterdir()] == ["audit.duckdb"]


def test_explain_walks_through_a_hand(tmp_path: Path) -> None:
    handaudit("verify", str(EXAMPLES / "faults" / "hands.jsonl"), "--out", str(tmp_path))
    db = str(tmp_path / "audit.duckdb")
    result = handaudit("explain", "T203000-000023", "--db", db)
    assert result.returncode == 0, result.stderr
    assert "Board 1:" in result.stdout and "| seat | opponent | points |" in result.stdout
    assert "joker_as:" in result.stdout
    quarantined = handaudit("explain", "T203001-000019", "--db", db)
    assert "was quarantined" in quarantined.stdout and "'1h'" in quarantined.stdout
    unknown = handaudit("explain", "nope", "--db", db)
    assert unknown.returncode == 2 and "not in" in unknown.stderr


def test_workers_is_an_option_with_a_floor(tmp_path: Path) -> None:
    source = str(EXAMPLES / "faults" / "hands.jsonl")
    one = handaudit("verify", source, "--out", str(tmp_path / "one"), "--workers", "1")
    two = handaudit("verify", source, "--out", str(tmp_path / "two"), "--workers", "2")
    assert one.returncode == two.returncode == 1
    # The summaries agree but for the time line.
    assert one.stdout.splitlines()[1:-1] == two.stdout.splitlines()[1:-1]
    none = handaudit("verify", source, "--out", str(tmp_path / "none"), "--workers", "0")
    assert none.returncode == 2
    assert "--workers" in none.stderr and "Traceback" not in none.stderr


def test_explain_walks_the_worked_chinese_hands_to_the_same_numbers(tmp_path: Path) -> None:
    """family/worked.md, hands 1 and 2 (fixtures/family_worked_hands.jsonl holds them)."""
    worked = ROOT / "fixtures" / "family_worked_hands.jsonl"
    assert handaudit("verify", str(worked), "--out", str(tmp_path)).returncode == 0
    db = str(tmp_path / "audit.duckdb")
    same_row = handaudit("explain", "C313003-000053", "--db", db).stdout
    assert_shows(
        same_row,
        "straight_flush:AKQJT (+5)",
        "straight_flush:98765 (+5)",
        "full_house:888JJ ",  # in the bottom: no royalty
        "|    1 |        3 |      7 |          |  14.00 |",
        "overall point to seat 1; royalty 5 to seat 1 (bottom)",
        "|    1 | C313003-p1 |     10 |  20.00 | 1.00 |  19.00 |     60.30 |",
        "Rake total: 1.00",
    )
    naturals = handaudit("explain", "C313018-000041", "--db", db).stdout
    assert_shows(
        naturals,
        "natural three_straights",
        "four_of_a_kind:9999A (+4)",
        "seat 3 natural three_straights against seat 5 natural three_flushes",
        "|    1 |        6 |      3 |          |   3.00 | seat 6 surrenders (3)",
        "|    3 | C313018-p3 |     12 |  12.00 | 0.60 |  11.40 |     91.09 |",
        "Rake total: 0.70",
    )


def test_explain_walks_the_worked_open_face_hand_street_by_street(tmp_path: Path) -> None:
    """family/worked.md, hand 3: a foul, and royalties that offset."""
    worked = ROOT / "fixtures" / "family_worked_hands.jsonl"
    assert handaudit("verify", str(worked), "--out", str(tmp_path)).returncode == 0
    shown = handaudit("explain", "O313004-000049", "--db", str(tmp_path / "audit.duckdb")).stdout
    assert_shows(
        shown,
        "|    1 |      1 | Ah 4s 7c 4c Kc |     | Ah 7c Kc    | 4s 4c  |",
        "|    6 |      9 | Kd             |     |             | Kd     |",
        "four_of_a_kind:44448 (+10)",
        "pair:99A (+4)",
        "| high_card:KQ875            | fouls |",
        "|    1 |        5 |      5 |          |   5.00 |",
        "royalties 10 against 4",
        "|    1 |        6 |     16 | seat     |  16.00 | seat 6 fouls; seat 1 wins top, middle",
        "|    6 | O313004-p6 |    -26 | -26.00 | 0.00 | -26.00 |    187.00 |",
    )


def test_explain_walks_the_worked_pineapple_fantasyland(tmp_path: Path) -> None:
    """family/worked.md, hand 4: a Fantasyland entry with three queens, then 17 cards."""
    worked = ROOT / "fixtures" / "family_worked_hands.jsonl"
    assert handaudit("verify", str(worked), "--out", str(tmp_path)).returncode == 0
    db = str(tmp_path / "audit.duckdb")
    entry = handaudit("explain", "P313002-000008", "--db", db).stdout
    assert_shows(
        entry,
        "earns Fantasyland (17 cards)",
        "three_of_a_kind:QQQ (+20)",
        "flush:JT974 (+8)",
        "|    1 |        4 |     40 | seat     |   4.00 |",
        "|    1 | P313002-p1 |     72 |  7.20 | 0.13 |  7.07 |     27.33 |",
    )
    fantasyland = handaudit("explain", "P313002-000009", "--db", db).stdout
    assert_shows(
        fantasyland,
        "|    1 |      1 | 6c 3d 4d 2d Ad 7s Jc Tc 8s 4s 5c Td Qs Qh 8h 8d 2h | Qs Qh Ad |",
        "| in Fantasyland ",
        "pair:QQA (+7)",
        "|    2 |        4 |     -6 | opponent |  -0.60 |",
        "|    1 | P313002-p1 |     46 |  4.60 | 0.13 |  4.47 |     31.80 |",
    )


def assert_shows(text: str, *lines: str) -> None:
    """Each of `lines` is somewhere in `text`."""
    missing = [line for line in lines if line not in text]
    assert missing == [], missing


def test_times_in_findings_are_utc_whatever_the_machines_zone(tmp_path: Path) -> None:
    """A hand numbered after one that started later: the finding quotes the times, in
    UTC on a machine in UTC+14 as on any other (the Spark engine writes them so)."""
    lines = (EXAMPLES / "clean" / "hands.jsonl").read_text().splitlines()
    late = lines[2].replace('"2026-11-08T23:47:25Z"', '"2026-11-08T23:40:00Z"')
    (tmp_path / "h.jsonl").write_text("\n".join([lines[0], lines[1], late]) + "\n")
    found = {}
    for zone in ("UTC", "Pacific/Kiritimati"):
        out = tmp_path / zone.replace("/", "-")
        subprocess.run(
            [sys.executable, "-m", "pipeline", "verify", str(tmp_path / "h.jsonl"),
             "--out", str(out)],
            cwd=ROOT, env={**os.environ, "TZ": zone}, capture_output=True, check=False,
        )  # fmt: skip
        with duckdb.connect(str(out / "audit.duckdb"), read_only=True) as con:
            found[zone] = con.execute(
                "SELECT recorded, message FROM divergences WHERE \"check\" = 'hand_no'"
            ).fetchall()
    assert found["UTC"] and found["Pacific/Kiritimati"] == found["UTC"]
    assert "23:40:00+00" in found["UTC"][0][0]


def test_an_audits_own_files_are_not_read_as_hand_histories(tmp_path: Path) -> None:
    """The audit named as an input is refused; an audit below an input directory (its
    database, its Parquet tables) is passed over, not quarantined record by record."""
    out = tmp_path / "hands" / "audit"
    faults = EXAMPLES / "faults" / "hands.jsonl"
    (tmp_path / "hands").mkdir()
    shutil.copy(faults, tmp_path / "hands" / "day.jsonl")
    first = handaudit("verify", str(faults), "--parquet", "--out", str(out))
    assert first.returncode == 1, first.stderr
    named = handaudit("verify", str(out / "audit.duckdb"), "--out", str(tmp_path / "o"))
    assert named.returncode == 2 and "not a hand history" in named.stderr, named.stderr
    alone = handaudit("verify", str(out), "--out", str(tmp_path / "o"))
    assert alone.returncode == 2 and "only an audit's own files" in alone.stderr
    beside = handaudit("verify", str(tmp_path / "hands"), "--out", str(tmp_path / "o"))
    with duckdb.connect(str(tmp_path / "o" / "audit.duckdb"), read_only=True) as con:
        read = con.execute("SELECT records_read FROM runs").fetchall()
    assert beside.returncode == 1 and read == [(len(faults.read_text().splitlines()),)]


def test_hand_ids_read_as_a_dictionary_audit_as_plain_text(tmp_path: Path) -> None:
    """Parquet may hold any text column dictionary-encoded, the hand ids too: the audit
    is the same (it once stored a dictionary of a dictionary, which DuckDB refused)."""
    plain = ROOT / "fixtures" / "sample" / "parquet" / "hands.parquet"
    table = pq.read_table(plain)
    at = table.column_names.index("hand_id")
    encoded = table.set_column(at, "hand_id", table["hand_id"].dictionary_encode())
    pq.write_table(encoded, tmp_path / "hands.parquet")
    audits = []
    for name, path in (("plain", plain), ("encoded", tmp_path / "hands.parquet")):
        result = handaudit("verify", str(path), "--out", str(tmp_path / name))
        assert result.returncode == 1, result.stderr
        with duckdb.connect(str(tmp_path / name / "audit.duckdb"), read_only=True) as con:
            audits.append(
                [
                    con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall()
                    for t in ("players", "settlements", "divergences")
                ]
            )
    assert audits[0] == audits[1]
