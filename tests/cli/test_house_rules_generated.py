"""`generate --rules FILE --profile NAME` through the real CLI: each public profile's tables,
dealt and settled by it, verify clean under the rules file, and every fault listed is
found with nothing else flagged. The slow test runs every profile at 20,000 hands, where
a rule that fails once in thousands of hands shows."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from tests.cli.test_evaluate_command import handaudit
from tests.conftest import EXAMPLES

RULES = EXAMPLES / "house-rules" / "house.toml"
PROFILES = ("single_board", "jokers_deep", "asia", "low_middle", "ofc_capped", "pineapple_prog")


def generated(folder: Path, profile: str, tables: int, hands: int, *extra: str) -> Path:
    out = folder / f"{profile}.jsonl"
    made = handaudit("generate", "--rules", str(RULES), "--profile", profile, "--tables",
                     str(tables), "--hands", str(hands), "--out", str(out), *extra)  # fmt: skip
    assert made.returncode == 0, made.stderr
    return out


def audited(history: Path, out: Path) -> duckdb.DuckDBPyConnection:
    result = handaudit("verify", str(history), "--rules", str(RULES), "--out", str(out))
    assert result.returncode in (0, 1), result.stderr
    return duckdb.connect(str(out / "audit.duckdb"), read_only=True)


def flagged(con: duckdb.DuckDBPyConnection) -> set[tuple[str, str]]:
    return set(con.execute('SELECT hand_id, "check" FROM divergences').fetchall()) | set(
        con.execute('SELECT hand_id, "check" FROM quarantine WHERE hand_id IS NOT NULL').fetchall()
    )


def assert_clean(con: duckdb.DuckDBPyConnection, profile: str, hands: int) -> None:
    assert flagged(con) == set()
    assert con.execute("SELECT count(*), count(*) FILTER (WHERE rules = ?) FROM hands",
                       [profile]).fetchone() == (hands, hands)  # fmt: skip


@pytest.mark.parametrize("profile", PROFILES)
def test_a_profile_generated_verifies_clean_and_its_faults_are_found(
    tmp_path: Path, profile: str
) -> None:
    clean = generated(tmp_path / "clean", profile, 6, 60)
    assert_clean(audited(clean, tmp_path / "clean-audit"), profile, 360)
    faulty = generated(tmp_path / "faulty", profile, 6, 60, "--faults", "0.15", "--seed", "5")
    truth = json.loads(Path(f"{faulty}.faults.json").read_text())
    con = audited(faulty, tmp_path / "faulty-audit")
    listed = {(f["hand_id"], f["check"]) for f in truth}
    found = flagged(con)
    assert listed <= found
    allowed = {h for h, _ in listed} | {e for f in truth for e in f.get("echo_hand_ids", [])}
    assert {h for h, _ in found} <= allowed


def test_a_surrender_where_the_profile_allows_none_is_a_fault_it_finds(tmp_path: Path) -> None:
    faulty = generated(tmp_path, "asia", 12, 80, "--faults", "0.3", "--seed", "2")
    truth = json.loads(Path(f"{faulty}.faults.json").read_text())
    surrendered = {f["hand_id"] for f in truth if f["check"] == "surrender"}
    assert surrendered
    con = audited(faulty, tmp_path / "audit")
    assert {(h, "surrender") for h in surrendered} <= flagged(con)


def test_generate_refuses_a_profile_it_cannot_deal(tmp_path: Path) -> None:
    out = str(tmp_path / "h.jsonl")
    cases = {
        ("--rules", str(RULES)): "--rules and --profile go together",
        ("--rules", str(RULES), "--profile", "nowhere"): "has no profile 'nowhere'",
        ("--rules", str(RULES), "--profile", "asia", "--variant", "ofc"): "deals chinese",
    }
    for args, sentence in cases.items():
        result = handaudit("generate", *args, "--out", out)
        assert result.returncode == 2 and sentence in result.stderr, result.stderr
    assert not Path(out).exists()


@pytest.mark.slow
@pytest.mark.parametrize("profile", PROFILES)
def test_twenty_thousand_hands_of_a_profile_verify_clean(tmp_path: Path, profile: str) -> None:
    history = generated(tmp_path, profile, 100, 200, "--seed", "13")
    assert_clean(audited(history, tmp_path / "audit"), profile, 20_000)


def test_no_floor_deals_a_short_player_who_covers_and_verifies_clean(tmp_path: Path) -> None:
    # floor_points = 0: no floor. Players still top up or leave when short, as at any
    # table, but the largest group deals every one who covers it: the dealer held back
    # those under 60 points, which verify rightly flagged (largest_group, 2 to 3 hands
    # at these seeds).
    rules = tmp_path / "none.toml"
    rules.write_text('[profiles.none]\ngame = "taiwanese"\nfloor_points = 0\n')
    for seed in ("2", "4"):
        out = tmp_path / f"none-{seed}.jsonl"
        made = handaudit("generate", "--rules", str(rules), "--profile", "none", "--tables",
                         "8", "--hands", "200", "--seed", seed, "--out", str(out))  # fmt: skip
        assert made.returncode == 0, made.stderr
        audit = handaudit("verify", str(out), "--rules", str(rules), "--out",
                          str(tmp_path / f"v{seed}"))  # fmt: skip
        assert audit.returncode == 0, audit.stdout


def test_a_floor_at_the_catalogue_s_highest_is_dealt_and_verifies_clean(tmp_path: Path) -> None:
    # Buy-ins, top-ups and the two seats of an idle table reach at least the floor,
    # however high the house sets it (200 points: the usual range ends there).
    rules = tmp_path / "deep.toml"
    rules.write_text('[profiles.deep]\ngame = "taiwanese"\nfloor_points = 200\n')
    out = tmp_path / "deep.jsonl"
    made = handaudit("generate", "--rules", str(rules), "--profile", "deep", "--tables", "4",
                     "--hands", "200", "--out", str(out))  # fmt: skip
    assert made.returncode == 0, made.stderr
    audit = handaudit("verify", str(out), "--rules", str(rules), "--out", str(tmp_path / "v"))
    assert audit.returncode == 0, audit.stdout
