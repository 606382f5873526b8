"""The real `handaudit verify --rules` on the public house-rules examples (house-rules.md),
settled by an independent reference under each profile, and the rules file's refusals."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest

from pipeline.ingest.house_rules import read_rules
from tests.cli.test_evaluate_command import handaudit
from tests.conftest import EXAMPLES, load_examples
from tests.golden.test_verify_examples import assert_recomputed_exactly, flagged

HOUSE = EXAMPLES / "house-rules"
RULES = HOUSE / "house.toml"
# The six profiles, which between them change every key of house-rules.md 2.
AUDITED = ("single_board", "jokers_deep", "asia", "low_middle", "ofc_capped", "pineapple_prog")


def verify(tmp_path: Path, name: str, *extra: str) -> tuple[int, duckdb.DuckDBPyConnection]:
    out = tmp_path / name
    result = handaudit("verify", str(HOUSE / name), "--out", str(out), *extra)
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, duckdb.connect(str(out / "audit.duckdb"), read_only=True)


@pytest.mark.parametrize("profile", AUDITED)
def test_a_profile_clean_set_is_recomputed_exactly(tmp_path: Path, profile: str) -> None:
    code, con = verify(tmp_path, profile, "--rules", str(RULES))
    hands = load_examples(f"house-rules/{profile}")
    assert code == 0 and flagged(con) == set()
    assert_recomputed_exactly(con, hands)
    rows = {
        (h, s, b, r): v
        for h, s, b, r, v in con.execute(
            'SELECT hand_id, seat, board, "row", value FROM rows'
        ).fetchall()
    }
    want = {
        (h["hand_id"], p["seat"], r.get("board"), r["row"]): r["value"]
        for h in hands
        for p in h["players"]
        for r in p["rows"]
    }
    assert rows == want  # a one-board profile's hands show no second board
    dealt = {h["hand_id"]: len(h.get("boards") or []) for h in hands}
    boards = con.execute("SELECT hand_id, board_1, board_2 FROM hands").fetchall()
    assert all((b2 is None) == (dealt[h] < 2) for h, _, b2 in boards)
    named = dict(con.execute("SELECT rules, count(*) FROM hands GROUP BY 1").fetchall())
    assert named == {profile: len(hands)}
    ((game, values, digest),) = con.execute(
        'SELECT game, "values", digest FROM rule_profiles WHERE name = ?', [profile]
    ).fetchall()
    declared = read_rules(RULES).named(profile)
    assert declared is not None and (game, digest) == (declared.variant.name, declared.digest)
    assert json.loads(values) == declared.values


@pytest.mark.parametrize("profile", AUDITED)
def test_the_same_hands_under_the_contract_are_flagged(tmp_path: Path, profile: str) -> None:
    """Without the rules file, the hands that name their profile are quarantined, and the
    others (mapped by table) are quarantined (one board) or diverge: the profile was
    honoured above."""
    code, con = verify(tmp_path, profile)
    assert code == 1
    checks = dict(con.execute('SELECT "check", count(*) FROM quarantine GROUP BY 1').fetchall())
    assert checks.get("rules", 0) == 50  # two tables of 25 hands name their profile
    hands = load_examples(f"house-rules/{profile}")
    assert len({h for h, _ in flagged(con)}) >= 0.8 * len(hands)


@pytest.mark.parametrize("profile", AUDITED)
def test_every_fault_of_a_profile_is_found(tmp_path: Path, profile: str) -> None:
    _, con = verify(tmp_path, f"{profile}-faults", "--rules", str(RULES))
    truth = json.loads((HOUSE / f"{profile}-faults" / "faults.json").read_text())
    listed = {(f["hand_id"], f["check"]) for f in truth}
    found = flagged(con)
    assert listed <= found
    echoes = {e for f in truth for e in f.get("echo_hand_ids", [])}
    faulty = {h for h, _ in listed} | echoes
    assert {h for h, _ in found} <= faulty


BAD_FILES = {
    "not TOML": ("[profiles.x\ngame =", "is not TOML"),
    "an unknown key": (
        '[profiles.x]\ngame = "taiwanese"\nbonus = 3\n',
        "profile x, key bonus: not a key of the rules contract",
    ),
    "a value out of range": (
        '[profiles.x]\ngame = "taiwanese"\nrow_points = [1, 0, 3]\n',
        "profile x, key row_points.1",
    ),
    "a profile named standard": (
        '[profiles.standard]\ngame = "taiwanese"\n',
        "profile standard is the contract itself",
    ),
    "an entry naming no profile": (
        '[[tables]]\nmatch = "T*"\nprofile = "nowhere"\n',
        "tables entry 1 (match 'T*') names profile 'nowhere'",
    ),
    "an unknown game": ('[profiles.x]\ngame = "bridge"\n', "profile x: game must be one of"),
    "profiles that are no table": ("profiles = 3\n", "key profiles: Input should be a valid"),
    "a number past what money can hold": (
        '[profiles.x]\ngame = "ofc"\nscoop_bonus = 99999999999999999999\n',
        "profile x, key scoop_bonus",
    ),
    "a time that is a number": (
        '[profiles.x]\ngame = "ofc"\n[[tables]]\nmatch = "O*"\nprofile = "x"\nuntil = 5\n',
        "tables entry 1, key until: 5 is not an RFC 3339 time",
    ),
}


@pytest.mark.parametrize("case", BAD_FILES)
def test_a_bad_rules_file_is_refused_before_anything_is_read(tmp_path: Path, case: str) -> None:
    text, sentence = BAD_FILES[case]
    rules = tmp_path / "house.toml"
    rules.write_text(text)
    out = tmp_path / "out"
    result = handaudit(
        "verify", str(HOUSE / "single_board"), "--rules", str(rules), "--out", str(out)
    )
    assert result.returncode == 2
    assert sentence in result.stderr and str(rules) in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_an_append_keeps_its_profiles_and_refuses_to_change_one(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    hands = (HOUSE / "single_board" / "hands.jsonl").read_text().splitlines(keepends=True)
    (data / "day1.jsonl").write_text("".join(hands[:50]))
    (data / "day2.jsonl").write_text("".join(hands[50:]))
    out = tmp_path / "audit"
    first = handaudit("verify", str(data / "day1.jsonl"), "--append", "--rules", str(RULES),
                      "--out", str(out))  # fmt: skip
    assert first.returncode == 0, first.stderr
    changed = tmp_path / "changed.toml"
    changed.write_text(RULES.read_text().replace("floor_points = 40", "floor_points = 30"))
    before = (out / "audit.duckdb").read_bytes()
    refused = handaudit("verify", str(data / "day2.jsonl"), "--append", "--rules", str(changed),
                        "--out", str(out))  # fmt: skip
    assert refused.returncode == 2
    assert "changes profile single_board" in refused.stderr
    assert (out / "audit.duckdb").read_bytes() == before
    # Without --rules, the day is audited under the profiles and map the audit holds.
    second = handaudit("verify", str(data / "day2.jsonl"), "--append", "--out", str(out))
    assert second.returncode == 0, second.stdout + second.stderr
    con = duckdb.connect(str(out / "audit.duckdb"), read_only=True)
    assert con.execute("SELECT count(*) FROM hands WHERE rules = 'single_board'").fetchone() == (
        len(hands),
    )


def test_a_profile_no_hand_played_may_change_on_an_append(tmp_path: Path) -> None:
    unused = '\n[profiles.unused]\ngame = "ofc"\nscoop_bonus = {}\n'
    first, second = tmp_path / "first.toml", tmp_path / "second.toml"
    first.write_text(RULES.read_text() + unused.format(4))
    second.write_text(RULES.read_text() + unused.format(5))
    out = tmp_path / "audit"
    for rules in (first, second):
        result = handaudit("verify", str(HOUSE / "single_board"), "--append", "--rules",
                           str(rules), "--out", str(out))  # fmt: skip
        assert result.returncode == 0, result.stderr
    con = duckdb.connect(str(out / "audit.duckdb"), read_only=True)
    stored = con.execute("SELECT \"values\" FROM rule_profiles WHERE name = 'unused'").fetchall()
    assert [json.loads(v) for (v,) in stored] == [{"scoop_bonus": 5}]


def test_a_hand_naming_an_unknown_profile_is_quarantined(tmp_path: Path) -> None:
    record = json.loads((HOUSE / "single_board" / "hands.jsonl").read_text().splitlines()[0])
    record["rules"] = "nowhere"
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "hands.jsonl").write_text(json.dumps(record) + "\n")
    shutil.copy(RULES, tmp_path / "house.toml")
    result = handaudit("verify", str(folder), "--rules", str(tmp_path / "house.toml"),
                       "--out", str(tmp_path / "out"))  # fmt: skip
    assert result.returncode == 1
    con = duckdb.connect(str(tmp_path / "out" / "audit.duckdb"), read_only=True)
    ((check, message, raw),) = con.execute(
        'SELECT "check", message, raw FROM quarantine'
    ).fetchall()
    assert check == "rules" and "profile 'nowhere'" in message and json.loads(raw) == record
