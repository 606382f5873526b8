"""`rules infer` through the real CLI: the public house-rules tables with their rules file
withheld are inferred back, the rules written verify them clean, a table switched from one
profile to another has its change found at the hand it switched, and faults stay faults."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pytest

from pipeline.helpers.interrupts import NOTHING_WRITTEN, PAUSE_AT, PAUSE_FILE
from tests.cli.test_evaluate_command import handaudit
from tests.cli.test_house_rules_generated import RULES, generated
from tests.conftest import EXAMPLES, ROOT

HOUSE = EXAMPLES / "house-rules"


def inferred(*args: str) -> str:
    result = handaudit("rules", "infer", *args)
    assert result.returncode == 0, result.stderr
    return result.stdout


def rows(text: str) -> dict[str, list[str]]:
    """The report's table, by table id: its cells."""
    out = {}
    for line in text.splitlines()[2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        out[cells[0]] = cells
    return out


PROFILES = ("single_board", "jokers_deep", "asia", "low_middle", "ofc_capped", "pineapple_prog")


@pytest.mark.parametrize("profile", PROFILES)
def test_a_withheld_profile_is_read_from_the_hands_and_its_rules_verify_clean(
    tmp_path: Path, profile: str
) -> None:
    written = tmp_path / "inferred.toml"
    table = rows(inferred(str(HOUSE / profile), "--write", str(written)))
    assert len(table) == 4
    for cells in table.values():
        assert cells[6].split(" ")[0] == profile  # the name its hands give, one profile
        assert cells[5] == cells[7] == "25"  # every hand exact under it
    audit = handaudit("verify", str(HOUSE / profile), "--rules", str(written),
                      "--out", str(tmp_path / "audit"))  # fmt: skip
    assert audit.returncode == 0, audit.stdout + audit.stderr


def test_the_values_read_are_the_profile_s() -> None:
    table = rows(inferred(str(HOUSE / "single_board")))
    for cells in table.values():
        assert "boards=1; floor_points=40; home_run_bonus=6; row_points=[1,2,4]" in cells[6]
    table = rows(inferred(str(HOUSE / "asia")))
    for cells in table.values():
        for value in ("home_run=true", "naturals_between=sum", "scoring=2-4", "wheel=second"):
            assert value in cells[6]


@pytest.mark.parametrize("profile", PROFILES)
def test_faults_stay_faults_and_do_not_move_the_fit(profile: str) -> None:
    text = inferred(str(HOUSE / f"{profile}-faults"))
    for table_id, cells in rows(text).items():
        if table_id == "AS-C7006000":  # dealt before its table's asia rules began
            assert "scoring" not in cells[6] and "home_run" not in cells[6]
            # One of its hands names jokers_deep (a fault): not a name for its rules.
            assert not cells[6].startswith("jokers_deep")
            continue
        assert cells[6].split(" ")[0] == profile
        assert int(cells[7]) >= 0.75 * int(cells[5])
    assert "fit none of the candidates: findings, not rules" in text
    assert "Rule changes" not in text


@pytest.mark.parametrize("profile", ["asia", "low_middle", "ofc_capped", "pineapple_prog"])
def test_with_the_rules_file_given_each_table_finds_its_profile(profile: str) -> None:
    text = inferred(str(HOUSE / profile), "--rules", str(RULES))
    table = rows(text)
    assert len(table) == 4
    for cells in table.values():
        assert cells[6] == profile and cells[5] == cells[7]


def test_a_key_no_hand_tells_apart_is_undetermined() -> None:
    # No hand of table JD-T7004002 is a Home Run, and none is near its cover: the bonus
    # cannot be read from it, and is said to be so rather than guessed.
    table = rows(inferred(str(HOUSE / "jokers_deep-faults")))
    assert table["JD-T7004002"][10] == "home_run_bonus"
    assert table["JD-T7004000"][10] == "none"


def _verifies_clean(history: Path, written: Path, folder: Path) -> None:
    """`verify --rules written` finds nothing in `history`."""
    audit = handaudit("verify", str(history), "--rules", str(written), "--out", str(folder / "v"))
    assert audit.returncode == 0, audit.stdout


def _closed_contract(folder: Path, hands: int) -> Path:
    """One closed Chinese table dealt by the contract."""
    out = folder / "standard.jsonl"
    made = handaudit("generate", "--variant", "chinese", "--tables", "1", "--hands", str(hands),
                     "--seed", "5", "--out", str(out))  # fmt: skip
    assert made.returncode == 0, made.stderr
    return out


def _contract(folder: Path, hands: int, seed: int = 3) -> Path:
    """One Taiwanese Jokers table dealt by the contract."""
    out = folder / "contract.jsonl"
    made = handaudit("generate", "--tables", "1", "--hands", str(hands), "--jokers", "1",
                     "--seed", str(seed), "--out", str(out))  # fmt: skip
    assert made.returncode == 0, made.stderr
    return out


def _after(
    first: list[dict[str, Any]], second: Path, year: str = "2027", new: str = "new"
) -> list[dict[str, Any]]:
    """The hands of `second` as the same table's, after those of `first` (its players
    new to the table, their ids prefixed with `new`; its hands dealt in `year`)."""
    hands = [json.loads(line) for line in second.read_text().splitlines()]
    return _after_records(first, hands, year, new)


def _after_records(
    first: list[dict[str, Any]], hands: list[dict[str, Any]], year: str = "2027", new: str = "new"
) -> list[dict[str, Any]]:
    """`_after`, of records read."""
    table, last = first[0]["table_id"], max(h["hand_no"] for h in first)
    for hand in hands:
        hand.pop("rules", None)
        hand["table_id"] = table
        hand["hand_no"] += last
        hand["hand_id"] = f"{table}-{hand['hand_no']:06d}"
        hand["started_at"] = hand["started_at"].replace("2026-", f"{year}-", 1)
        for player in hand["players"] + (hand.get("sitting_out") or []):
            player["player_id"] = f"{new}-{player['player_id']}"  # other players, no history
    return hands


def _written(path: Path, hands: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(h) + "\n" for h in hands))
    return path


def _switched(folder: Path) -> tuple[Path, int]:
    """One table: 40 hands of the contract, then 40 under jokers_deep."""
    first = [json.loads(line) for line in _contract(folder, 40).read_text().splitlines()]
    second = _after(first, generated(folder, "jokers_deep", 1, 40, "--seed", "4"))
    return _written(folder / "switched.jsonl", first + second), max(h["hand_no"] for h in first)


def test_a_switched_table_has_its_change_found_at_the_hand_it_switched(tmp_path: Path) -> None:
    joined, last = _switched(tmp_path)
    written = tmp_path / "inferred.toml"
    text = inferred(str(joined), "--write", str(written))
    assert len(rows(text)) == 1 or "Rule changes:" in text
    (change,) = [line for line in text.splitlines() if line.startswith("table ")]
    assert f"standard until hand {last} " in change
    assert f"from hand {last + 1} " in change
    assert "home_run_bonus 8 -> 12" in change and "row_points [1,2,3] -> [2,3,4]" in change
    rules = written.read_text()
    assert "until = " in rules and "from = " in rules


def _diverged(history: Path, out: Path, hand_id: str, *rules: str) -> set[tuple[str, int]]:
    audit = handaudit("verify", str(history), *rules, "--out", str(out))
    assert audit.returncode in (0, 1), audit.stderr
    with duckdb.connect(str(out / "audit.duckdb"), read_only=True) as con:
        found = con.execute(
            'SELECT "check", coalesce(seat, -1) FROM divergences WHERE hand_id = ?', [hand_id]
        ).fetchall()
    return set(found)


def test_a_faulty_hand_at_a_change_is_shown_under_the_rules_it_is_least_wrong_under(
    tmp_path: Path,
) -> None:
    # The contract's last hand, a cent off in one pair, fits neither rules: under the
    # contract it is one fault, under jokers_deep every amount is wrong. It goes with
    # the contract, and the change is after it.
    first = [json.loads(line) for line in _contract(tmp_path, 40).read_text().splitlines()]
    faulty = first[-1]
    pair = faulty["settlements"][0]
    pair["amount"] = str(Decimal(pair["amount"]) - Decimal("0.01"))
    alone = _written(tmp_path / "first.jsonl", first)
    truth = _diverged(alone, tmp_path / "t", faulty["hand_id"])
    assert truth and {check for check, _ in truth} <= {"pair_amount", "zero_sum"}, truth
    second = _after(first, generated(tmp_path, "jokers_deep", 1, 40, "--seed", "4"))
    joined = _written(tmp_path / "switched.jsonl", first + second)
    written = tmp_path / "inferred.toml"
    text = inferred(str(joined), "--write", str(written))
    (change,) = [line for line in text.splitlines() if line.startswith("table ")]
    assert f"until hand {faulty['hand_no']} " in change, change
    found = _diverged(joined, tmp_path / "v", faulty["hand_id"], "--rules", str(written))
    assert found == truth


def test_a_change_over_the_last_hands_is_found_among_faults_no_rules_explain(
    tmp_path: Path,
) -> None:
    # 990 hands of the contract, four with a net that is not won less rake (no rules make
    # them exact), then 10 under jokers_deep: of 1,000 hands, just the least a change
    # must win. The faults are no part of what a split may gain; the 10 hands are.
    first = [json.loads(line) for line in _contract(tmp_path, 990).read_text().splitlines()]
    for hand in first[100:900:200]:
        player = hand["players"][0]
        for key in ("net", "stack_end"):
            player[key] = str(Decimal(player[key]) + Decimal("0.01"))
    second = _after(first, generated(tmp_path, "jokers_deep", 1, 10, "--seed", "4"))
    text = inferred(str(_written(tmp_path / "switched.jsonl", first + second)))
    (change,) = [line for line in text.splitlines() if line.startswith("table ")]
    assert "standard until hand 990 " in change and "from hand 991 " in change, text
    assert "4 hands fit none" in text


def test_a_table_id_beyond_the_basic_plane_is_written_as_toml_reads_it(tmp_path: Path) -> None:
    # JSON's ASCII escapes write an emoji as two surrogates, which TOML refuses.
    hands = [json.loads(line) for line in _contract(tmp_path, 10).read_text().splitlines()]
    for hand in hands:
        hand["table_id"] = "T\U0001f44d\u00e9"
        hand["hand_id"] = f"T\U0001f44d-{hand['hand_no']:06d}"
    history = _written(tmp_path / "emoji.jsonl", hands)
    written = tmp_path / "inferred.toml"
    inferred(str(history), "--write", str(written))
    assert "T\U0001f44d\u00e9" in written.read_text(encoding="utf-8")
    _verifies_clean(history, written, tmp_path)


def test_a_short_player_under_the_floor_leaves_the_hand_exact(tmp_path: Path) -> None:
    # A 150-point floor: a short player sitting out with less (but enough to cover the
    # hand) may not be dealt in. Scored under a lower floor, the hand would have had to
    # deal them (the largest group): the search does not count that check, whose floor
    # is read from the stacks after it.
    rules = tmp_path / "deep.toml"
    rules.write_text(
        '[profiles.deep]\ngame = "taiwanese_jokers"\nrow_points = [2, 3, 4]\n'
        'home_run_bonus = 12\nfloor_points = 150\n\n[[tables]]\nmatch = "*"\nprofile = "deep"\n'
    )
    out = tmp_path / "deep.jsonl"
    made = handaudit("generate", "--rules", str(rules), "--profile", "deep", "--tables", "1",
                     "--hands", "40", "--seed", "4", "--out", str(out))  # fmt: skip
    assert made.returncode == 0, made.stderr
    hands = [json.loads(line) for line in out.read_text().splitlines()]
    for hand in hands:
        hand.pop("rules")
    fewest = min(hands, key=lambda h: len(h["players"]))
    taken = {p["seat"] for p in fewest["players"] + (fewest.get("sitting_out") or [])}
    short = (30 * len(fewest["players"]) + 5) * Decimal(fewest["point_value"])  # covers all
    fewest["sitting_out"] = [*(fewest.get("sitting_out") or []), {
        "seat": min(set(range(1, 7)) - taken), "player_id": "short-1", "stack": str(short),
        "reason": "short"}]  # fmt: skip
    history = _written(tmp_path / "short.jsonl", hands)
    truth = handaudit("verify", str(history), "--rules", str(rules), "--out", str(tmp_path / "t"))
    assert truth.returncode == 0, truth.stdout
    text = inferred(str(history))
    assert rows(text)["G00001"][5:8] == ["40", rows(text)["G00001"][6], "40"], text
    assert "fit none" not in text


def test_rules_that_change_and_change_back_are_two_changes(tmp_path: Path) -> None:
    # The contract, jokers_deep, the contract again: no division in two fits better
    # than the contract alone (it fits both ends), the run between is found.
    first = [json.loads(line) for line in _contract(tmp_path / "a", 40).read_text().splitlines()]
    deep = _after(first, generated(tmp_path / "b", "jokers_deep", 1, 40, "--seed", "4"))
    back = _after(first + deep, _contract(tmp_path / "c", 40, seed=5), "2028", "back")
    joined = _written(tmp_path / "switched.jsonl", first + deep + back)
    written = tmp_path / "inferred.toml"
    text = inferred(str(joined), "--write", str(written))
    changes = [line for line in text.splitlines() if line.startswith("table ")]
    ends = [max(h["hand_no"] for h in part) for part in (first, deep)]
    assert len(changes) == 2, text
    assert f"standard until hand {ends[0]} " in changes[0]
    assert f"from hand {ends[0] + 1} " in changes[0]
    assert f"until hand {ends[1]} " in changes[1]
    assert f"standard from hand {ends[1] + 1} " in changes[1]
    _verifies_clean(joined, written, tmp_path)


def test_a_ledger_says_once_when_a_table_s_new_hands_fit_another_profile(tmp_path: Path) -> None:
    # Day 1: a table mapped to jokers_deep and dealt by it. Day 2: the same table, now
    # dealt by the contract, appended: one line for the table, not one per hand.
    first = [json.loads(line) for line in _contract(tmp_path, 30).read_text().splitlines()]
    day1 = generated(tmp_path, "jokers_deep", 1, 30, "--seed", "4")
    deep = [json.loads(line) for line in day1.read_text().splitlines()]
    table = first[0]["table_id"]
    for hand in deep:
        hand.pop("rules", None)
        hand["table_id"], hand["hand_id"] = table, f"{table}-{hand['hand_no']:06d}"
    day2 = _after(deep, tmp_path / "contract.jsonl")
    rules = tmp_path / "map.toml"
    rules.write_text(
        RULES.read_text().split("# ----")[0]
        + """
[profiles.jokers_deep]
game = "taiwanese_jokers"
row_points = [2, 3, 4]
home_run_bonus = 12
floor_points = 80

[[tables]]
match = "*"
profile = "jokers_deep"
"""
    )
    audit = tmp_path / "audit"
    first_day = handaudit("verify", str(_written(tmp_path / "day1.jsonl", deep)), "--rules",
                          str(rules), "--out", str(audit))  # fmt: skip
    assert first_day.returncode == 0, first_day.stdout + first_day.stderr
    assert "fit profile" not in first_day.stdout
    second_day = handaudit("verify", str(_written(tmp_path / "day2.jsonl", day2)), "--append",
                           "--out", str(audit))  # fmt: skip
    assert second_day.returncode == 1
    (line,) = [x for x in second_day.stdout.splitlines() if "fit profile" in x]
    assert line.startswith(f"table {table}: 30 of its 30 new hands since 2027-")
    assert "fit profile standard better than its mapped profile jokers_deep (" in line


def test_nothing_is_written_over_an_input_or_the_rules_and_nothing_read_is_said(
    tmp_path: Path,
) -> None:
    history = tmp_path / "asia.parquet"
    made = handaudit("generate", "--rules", str(RULES), "--profile", "asia", "--tables", "1",
                     "--hands", "20", "--format", "parquet", "--out", str(history))  # fmt: skip
    assert made.returncode == 0, made.stderr
    rules = tmp_path / "house.toml"
    rules.write_text(RULES.read_text())
    linked = tmp_path / "linked.toml"
    os.link(rules, linked)  # another name of the rules file
    for target in (history, rules, linked, Path("/proc/inferred.toml")):
        began = time.monotonic()
        refused = handaudit("rules", "infer", str(history), "--rules", str(rules),
                            "--write", str(target))  # fmt: skip
        assert refused.returncode == 2 and "nothing was written" in refused.stderr
        assert ".partial" not in refused.stderr and not refused.stdout  # refused before reading
        assert time.monotonic() - began < 30
    assert rules.read_text() == linked.read_text() == RULES.read_text()
    # Parquet's dictionary-encoded rows are read as any (the royalties of closed Chinese).
    assert rows(inferred(str(history)))["C00001"][5] == "20"
    empty = tmp_path / "empty.jsonl"
    empty.write_text("not json\n")
    nothing = handaudit("rules", "infer", str(empty), "--write", str(tmp_path / "none.toml"))
    assert nothing.returncode == 1 and nothing.stdout.startswith("No hand was verified")
    assert "Nothing was written" in nothing.stdout and not (tmp_path / "none.toml").exists()


@pytest.mark.parametrize(
    ("hands", "seeds"),
    [
        ((60, 60), (5, 105)),  # the records of the two read together fit neither
        ((30, 90), (7, 107)),  # a half of the table holds both: what its fit misses, apart
    ],
)
def test_a_switch_between_two_house_profiles_is_found_with_no_rules_given(
    tmp_path: Path, hands: tuple[int, int], seeds: tuple[int, int]
) -> None:
    # asia, then low_middle at the same table: each part's rules read from its own
    # records (the straight flush low_middle pays 6 is seen once, after the switch).
    asia = generated(tmp_path / "a", "asia", 1, hands[0], "--seed", str(seeds[0]))
    first = [json.loads(line) for line in asia.read_text().splitlines()]
    for hand in first:
        hand.pop("rules", None)
    low = generated(tmp_path / "b", "low_middle", 1, hands[1], "--seed", str(seeds[1]))
    joined = _written(tmp_path / "switched.jsonl", first + _after(first, low))
    written = tmp_path / "inferred.toml"
    text = inferred(str(joined), "--write", str(written))
    (change,) = [line for line in text.splitlines() if line.startswith("table ")]
    last = max(h["hand_no"] for h in first)
    assert f"until hand {last} " in change and f"from hand {last + 1} " in change
    assert "middle high -> low" in change and "scoring 2-4 -> 1-6" in change
    _verifies_clean(joined, written, tmp_path)


def test_a_change_is_placed_among_the_hands_that_do_not_tell_the_rules_apart(
    tmp_path: Path,
) -> None:
    # The contract's closed Chinese, then asia: the contract's hands give their own
    # scoring, so the last of them, with no royalty, Home Run or natural, fit asia as
    # well. The change is between the last hand only the contract fits and the first
    # only asia fits, with the hands between named, not at a guessed hand.
    made = _closed_contract(tmp_path, 60)
    first = [json.loads(line) for line in made.read_text().splitlines()]
    second = _after(first, generated(tmp_path, "asia", 1, 60, "--seed", "105"))
    joined = _written(tmp_path / "switched.jsonl", first + second)
    text = inferred(str(joined))
    (change,) = [line for line in text.splitlines() if line.startswith("table ")]
    last = max(h["hand_no"] for h in first)
    until = int(change.split(" until hand ")[1].split(" ")[0])
    since = int(change.split(" from hand ")[1].split(" ")[0])
    assert until < last < since == last + 1, change
    assert f"; hands {until + 1} to {last} between do not tell the two apart;" in change
    # What changed, against the contract's own tables (asia's other royalties are its).
    assert change.endswith(
        "changed: home_run false -> true, royalties.bottom.full_house none -> 1, (not told apart"
        " by one side's hands: scoring)"
    ), change  # the contract's hands give their own scoring: it is not told, so no change


def test_tables_that_do_not_play_fantasyland_do_not_teach_its_entry(tmp_path: Path) -> None:
    # Some generated tables play without Fantasyland: a pair of jacks there earns
    # nothing, which says nothing of ofc_capped's entry (JJ).
    history = generated(tmp_path, "ofc_capped", 8, 100, "--seed", "1")
    assert any(json.loads(line).get("fantasyland_rule") is False
               for line in history.read_text().splitlines())  # fmt: skip
    written = tmp_path / "inferred.toml"
    table = rows(inferred(str(history), "--write", str(written)))
    assert 'entry = "JJ"' in written.read_text()
    without = {json.loads(line)["table_id"] for line in history.read_text().splitlines()
               if json.loads(line).get("fantasyland_rule") is False}  # fmt: skip
    for table_id, cells in table.items():  # no record there tells its Fantasyland
        assert ("fantasyland" in cells[10].split(", ")) == (table_id in without), cells
    _verifies_clean(history, written, tmp_path)


@pytest.mark.parametrize("command", [("rules", "infer", "x.jsonl"), ("generate", "--out", "x")])
def test_ctrl_c_while_a_command_that_writes_no_audit_loads_says_nothing_was_written(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    paused = tmp_path / "paused"
    env = {**os.environ, PAUSE_AT: "starting", PAUSE_FILE: str(paused)}
    run = subprocess.Popen(
        [sys.executable, "-m", "pipeline", *command],
        cwd=tmp_path, env={**env, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    while not paused.exists():
        assert run.poll() is None, run.communicate()
        time.sleep(0.01)
    run.send_signal(signal.SIGINT)
    _, stderr = run.communicate(timeout=120)
    assert run.returncode == 130 and stderr.strip() == f"handaudit: {NOTHING_WRITTEN}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["paused"]


def _tables_of(history: Path) -> set[str]:
    return {json.loads(line)["table_id"] for line in history.read_text().splitlines()}


def test_every_profile_of_one_history_is_one_profile_and_verifies_clean(tmp_path: Path) -> None:
    # The six public sets in one history: each profile's tables share one inferred
    # profile (an entry that one table showed and another did not is the same rules),
    # and the rules written verify the history clean.
    history = tmp_path / "six.jsonl"
    with history.open("w") as out:
        for profile in PROFILES:
            out.write((HOUSE / profile / "hands.jsonl").read_text())
    written = tmp_path / "inferred.toml"
    table = rows(inferred(str(history), "--write", str(written)))
    for profile in PROFILES:
        names = {table[t][6].split(" ")[0] for t in _tables_of(HOUSE / profile / "hands.jsonl")}
        assert names == {profile}, (profile, names)
    _verifies_clean(history, written, tmp_path)


def test_a_contract_table_among_house_tables_says_which_entries_it_did_not_show(
    tmp_path: Path,
) -> None:
    # A table dealt by the contract beside asia's: the entries of the royalty and
    # natural tables that asia sets otherwise and that no hand of the table showed (a
    # middle royal flush, a dragon) are named undetermined, whichever value is written.
    contract = _closed_contract(tmp_path, 25)
    history = tmp_path / "mixed.jsonl"
    history.write_text((HOUSE / "asia" / "hands.jsonl").read_text() + contract.read_text())
    written = tmp_path / "inferred.toml"
    (table_id,) = _tables_of(contract)
    cells = rows(inferred(str(history), "--write", str(written)))[table_id]
    assert cells[6] == "standard", cells
    assert "royalties (" in cells[10] and "naturals (" in cells[10], cells
    _verifies_clean(history, written, tmp_path)


def test_a_cap_no_pair_reached_is_undetermined() -> None:
    # ofc_capped's cap (30 points between two players) is told only where a pair's
    # points reached it; elsewhere any cap above the most recorded fits as well.
    reached = set()
    for line in (HOUSE / "ofc_capped" / "hands.jsonl").read_text().splitlines():
        hand = json.loads(line)
        if any(abs(s["points"]) == 30 for s in hand.get("settlements") or []):
            reached.add(hand["table_id"])
    table = rows(inferred(str(HOUSE / "ofc_capped")))
    assert reached and reached != set(table)  # both kinds of table are here
    for table_id, cells in table.items():
        assert ("cap" in cells[10].split(", ")) == (table_id not in reached), cells


def test_repeated_hands_are_named_as_a_verify_names_them(tmp_path: Path) -> None:
    # A record read again whole is a duplicate; one with the same hand id and other
    # content conflicts (the strongest sign of a rewritten history), as verify says.
    lines = (HOUSE / "asia" / "hands.jsonl").read_text().splitlines()
    changed = json.loads(lines[1])
    changed["started_at"] = changed["started_at"].replace("2026-", "2025-", 1)
    history = tmp_path / "repeated.jsonl"
    history.write_text("\n".join([*lines, lines[0], json.dumps(changed)]) + "\n")
    said = inferred(str(history))
    assert "1 conflicting_hand, 1 duplicate_hand" in said, said


def _withheld(history: Path) -> Path:
    """`history` with each hand's own `rules` field taken out: nothing names the rules
    (a line that is not JSON, a fault, is kept as it is)."""
    lines = []
    for line in history.read_text().splitlines():
        try:
            hand = json.loads(line)
        except json.JSONDecodeError:
            lines.append(line)
            continue
        hand.pop("rules", None)
        lines.append(json.dumps(hand))
    out = history.with_name(f"withheld-{history.name}")
    out.write_text("".join(f"{line}\n" for line in lines))
    return out


def _dealt(folder: Path, text: str, *args: str) -> tuple[Path, Path]:
    """A rules file of one profile, `deal` (its TOML values in `text`), mapped to every
    table, and a history dealt by it with its rules withheld."""
    rules = folder / "deal.toml"
    rules.write_text(f'[profiles.deal]\n{text}\n[[tables]]\nmatch = "*"\nprofile = "deal"\n')
    out = folder / "deal.jsonl"
    made = handaudit("generate", "--rules", str(rules), "--profile", "deal", "--out", str(out),
                     *args)  # fmt: skip
    assert made.returncode == 0, made.stderr
    return rules, _withheld(out)


def test_a_scoop_bonus_beyond_the_catalogue_is_read_from_the_scoops(tmp_path: Path) -> None:
    # The catalogue tries 0 to 6; a house may pay 7. The scoops' recorded points, less
    # their rows and royalties, say so. No table here sets a cap, which no hand could
    # tell from one above the points paid: the cap is undetermined.
    _, history = _dealt(tmp_path, 'game = "ofc"\nscoop_bonus = 7\n', "--variant", "ofc",
                        "--tables", "4", "--hands", "60", "--seed", "3")  # fmt: skip
    written = tmp_path / "inferred.toml"
    table = rows(inferred(str(history), "--write", str(written)))
    for cells in table.values():
        assert "scoop_bonus=7" in cells[6] and cells[7] == "60", cells
        assert "cap" in cells[10].split(", "), cells
    _verifies_clean(history, written, tmp_path)


def _flagged(audit: Path) -> set[tuple[str, str]]:
    con = duckdb.connect(str(audit / "audit.duckdb"), read_only=True)
    return set(con.execute('SELECT hand_id, "check" FROM divergences').fetchall())


def _house_dealt(
    folder: Path, profile: str, tables: int, hands: int, *args: str
) -> tuple[Path, Path]:
    """A history dealt by a profile of the house's file with 10% faults, its rules
    withheld, and the house's file with that profile at every table."""
    history = _withheld(generated(folder, profile, tables, hands, "--faults", "0.1", *args))
    true = folder / "true.toml"
    true.write_text(RULES.read_text() + f'\n[[tables]]\nmatch = "*"\nprofile = "{profile}"\n')
    return history, true


def _flags_as_the_true_rules(history: Path, true: Path, written: Path, folder: Path) -> None:
    """Verify under the rules written flags what verify under the true rules flags (and
    each flags something: the history holds faults)."""
    for name, given in (("true", true), ("written", written)):
        audit = handaudit("verify", str(history), "--rules", str(given), "--out",
                          str(folder / name))  # fmt: skip
        assert audit.returncode == 1, audit.stderr
    assert _flagged(folder / "written") == _flagged(folder / "true")


def test_a_stay_a_fault_hides_is_no_better_fit_where_the_next_hand_tells_it(
    tmp_path: Path,
) -> None:
    # A `fantasyland` fault records a player who stayed as let go. A stay rule that lets
    # them go fits that hand, but the next hand deals them Fantasyland all the same, and
    # under that rule the fault is there instead: counted across hands, that rule fits
    # no more hands than the house's, and the fault stays where it was.
    history, true = _house_dealt(tmp_path, "pineapple_prog", 20, 100, "--seed", "113")
    written = tmp_path / "inferred.toml"
    inferred(str(history), "--write", str(written))
    _flags_as_the_true_rules(history, true, written, tmp_path)


def test_floor_faults_do_not_lower_the_floor_written(tmp_path: Path) -> None:
    # A 200-point floor, 8% faults among them players dealt in below it: read as the
    # highest stack that no dealt player contradicts, the floor was 190, and the largest
    # group then flagged correct hands. The floor that flags the fewest is the true one,
    # and the file written finds what the true rules find.
    rules, history = _dealt(
        tmp_path,
        'game = "taiwanese"\nboards = 1\nrow_points = [2, 5, 7]\nhome_run_bonus = 0\n'
        "floor_points = 200\n",
        *("--variant", "taiwanese", "--jokers", "0", "--tables", "6", "--hands", "80"),
        *("--seed", "13", "--faults", "0.08"),
    )
    written = tmp_path / "inferred.toml"
    table = rows(inferred(str(history), "--write", str(written)))
    assert all("floor_points=200" in cells[6] for cells in table.values()), table
    _flags_as_the_true_rules(history, rules, written, tmp_path)


@pytest.mark.parametrize(
    ("text", "floor", "args"),
    [
        ('game = "taiwanese"\n', 60, ("--tables", "3", "--hands", "300", "--seed", "3")),
        (
            'game = "taiwanese_jokers"\nrow_points = [2, 3, 4]\nhome_run_bonus = 12\n'
            "floor_points = 80\n",
            80,
            ("--tables", "4", "--hands", "500", "--seed", "12"),
        ),
    ],
)
def test_a_floor_its_players_top_up_to_outvotes_its_floor_faults(
    tmp_path: Path, text: str, floor: int, args: tuple[str, ...]
) -> None:
    # 5% faults, a few of them a player dealt in below the floor. A lower floor lets
    # those pass and flags no more (it was read: 50 for the contract's 60, 20 or 60 for
    # 80); but the players who ended a hand below the floor added on to reach it before
    # they were dealt in again, hundreds of times against a few: the floor they kept is
    # written, and its floor faults stay faults.
    rules, history = _dealt(tmp_path, text, "--faults", "0.05", *args)
    written = tmp_path / "inferred.toml"
    table = rows(inferred(str(history), "--write", str(written)))
    values = [cells[6] for cells in table.values()]
    assert (
        all(f"floor_points={floor}" in v for v in values)
        if floor != 60
        else all("floor_points" not in v for v in values)
    ), values
    _flags_as_the_true_rules(history, rules, written, tmp_path)
    assert "floor_60" in {check for _, check in _flagged(tmp_path / "written")}


def test_a_floor_won_by_a_vote_or_two_is_undetermined(tmp_path: Path) -> None:
    # No floor, but players top up under 60 points as at any table: 7 of them kept 60
    # before they were dealt again, 3 were dealt in under it, against 3 who kept 50.
    # Four votes to three: the hands do not tell 60 from the lower floors.
    _, history = _dealt(tmp_path, 'game = "taiwanese"\nfloor_points = 0\n', "--tables", "6",
                        "--hands", "40", "--seed", "203", "--faults", "0.1")  # fmt: skip
    for cells in rows(inferred(str(history))).values():
        assert "floor_points" in cells[10].split(", "), cells


def test_tables_of_one_profile_but_their_floors_keep_their_own(tmp_path: Path) -> None:
    # Tables alike but for their floors (150 and 30), 5% faults: one profile for all,
    # the floor was read over all of them, hiding the 150-point tables' floor faults. A
    # table whose own hands tell another floor keeps its own.
    high, low = tmp_path / "high", tmp_path / "low"
    high.mkdir()
    low.mkdir()
    args = ("--tables", "3", "--hands", "200", "--faults", "0.05")
    _, first = _dealt(high, 'game = "taiwanese"\nfloor_points = 150\n', *args, "--seed", "7")
    _, second = _dealt(low, 'game = "taiwanese"\nfloor_points = 30\n', *args, "--seed", "8")
    renamed = [line.replace("G0000", "L0000") for line in second.read_text().splitlines()]
    history = tmp_path / "both.jsonl"
    history.write_text(first.read_text() + "".join(f"{line}\n" for line in renamed))
    true = tmp_path / "true.toml"
    true.write_text(
        '[profiles.high]\ngame = "taiwanese"\nfloor_points = 150\n\n'
        '[profiles.low]\ngame = "taiwanese"\nfloor_points = 30\n\n'
        '[[tables]]\nmatch = "G*"\nprofile = "high"\n\n[[tables]]\nmatch = "L*"\nprofile = "low"\n'
    )
    written = tmp_path / "inferred.toml"
    table = rows(inferred(str(history), "--write", str(written)))
    for table_id, cells in table.items():
        if table_id.startswith("G"):
            assert "floor_points=150" in cells[6] and cells[10] == "none", cells
        else:  # (few of their players fall under 40: 30 and 40 are as good)
            assert "floor_points=30" in cells[6] or "floor_points" in cells[10], cells
    _flags_as_the_true_rules(history, true, written, tmp_path)


def test_a_floor_changed_mid_table_is_a_change_found_where_its_players_tell_it(
    tmp_path: Path,
) -> None:
    # One table: 300 hands under a 150-point floor, then 300 under a 30-point one, the
    # same rules otherwise. No hand's own audit tells the floors apart (the search
    # scores every candidate under the highest), and the floor was read once for the
    # whole table; the players' returns tell them: before, those who fell under 150
    # added on to reach it; after, they are dealt in under it.
    high, low = tmp_path / "high", tmp_path / "low"
    high.mkdir()
    low.mkdir()
    args = ("--tables", "1", "--hands", "300")
    _, before = _dealt(high, 'game = "taiwanese"\nfloor_points = 150\n', *args, "--seed", "7")
    _, after = _dealt(low, 'game = "taiwanese"\nfloor_points = 30\n', *args, "--seed", "8")
    first = [json.loads(line) for line in before.read_text().splitlines()]
    joined = _written(tmp_path / "switched.jsonl", first + _after(first, after))
    written = tmp_path / "inferred.toml"
    text = inferred(str(joined), "--write", str(written))
    (change,) = [line for line in text.splitlines() if line.startswith("table ")]
    last = max(h["hand_no"] for h in first)
    until = int(change.split(" until hand ")[1].split(" ")[0])
    since = int(change.split(" from hand ")[1].split(" ")[0])
    assert until <= last < since, change
    # Few players fell under 40 after: 30 and 40 are as good there (40 is written, the
    # nearer the contract's), and neither is 150.
    assert "changed: floor_points 150 -> 40" in change, change
    _verifies_clean(joined, written, tmp_path)


def _continued(first: Path, second: Path, out: Path) -> Path:
    """Two histories of one table each as one table, the second's hands after the
    first's (`_after`); a record too damaged to move (a fault) is kept as it was."""
    head = first.read_text().splitlines()
    mine = []
    for line in head:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("hand_no"), int):
            mine.append(record)
    lines = list(head)
    for line in second.read_text().splitlines():
        try:
            (moved,) = _after_records(mine, [json.loads(line)])
            lines.append(json.dumps(moved))
        except (ValueError, KeyError, TypeError, AttributeError):
            lines.append(line)
    out.write_text("".join(f"{line}\n" for line in lines))
    return out


def test_a_floor_change_is_placed_where_the_largest_group_first_tells_it(
    tmp_path: Path,
) -> None:
    # No floor for 300 hands, then 100 for 300, 10% faults. The first return that
    # tells 100 comes at hand 367, but hands 303 and 304 deal short of their largest
    # group under the old floor (a seated player with 60 to 100 points left out): the
    # change is placed before them, and the file written flags what the true one does.
    parts = []
    for name, floor, seed in (("none", 0, "863"), ("hundred", 100, "1863")):
        (tmp_path / name).mkdir()
        raw = tmp_path / name / "raw.jsonl"
        made = handaudit("generate", "--rules", str(_floor_rules(tmp_path / name, floor)),
                         "--profile", "deal", "--tables", "1", "--hands", "300", "--seed", seed,
                         "--faults", "0.1", "--out", str(raw))  # fmt: skip
        assert made.returncode == 0, made.stderr
        parts.append(raw)
    history = _withheld(_continued(parts[0], parts[1], tmp_path / "switched.jsonl"))
    true = tmp_path / "true.toml"
    true.write_text(
        '[profiles.none]\ngame = "taiwanese"\nfloor_points = 0\n\n'
        '[profiles.hundred]\ngame = "taiwanese"\nfloor_points = 100\n\n'
        '[[tables]]\nmatch = "*"\nprofile = "none"\nuntil = "2027-01-01T00:00:00Z"\n\n'
        '[[tables]]\nmatch = "*"\nprofile = "hundred"\nfrom = "2027-01-01T00:00:00Z"\n'
    )
    written = tmp_path / "inferred.toml"
    text = inferred(str(history), "--write", str(written))
    (change,) = [line for line in text.splitlines() if line.startswith("table ")]
    assert " from hand 303 " in change and "floor_points 60 -> 100" in change, change
    _flags_as_the_true_rules(history, true, written, tmp_path)


def _floor_rules(folder: Path, floor: int) -> Path:
    rules = folder / "deal.toml"
    rules.write_text(f'[profiles.deal]\ngame = "taiwanese"\nfloor_points = {floor}\n')
    return rules


def test_a_floor_fault_or_two_give_no_table_a_floor_of_its_own(tmp_path: Path) -> None:
    # single_board (a 40-point floor), 30 tables of 40 hands, 10% faults: a table whose
    # few hands hold a floor fault fits a lower floor alone, by a vote. Its own floor is
    # taken only where it wins by MIN_GAIN: else the tables' floor is theirs too.
    history, true = _house_dealt(tmp_path, "single_board", 30, 40, "--seed", "43")
    written = tmp_path / "inferred.toml"
    table = rows(inferred(str(history), "--write", str(written)))
    assert all("floor_points=40" in cells[6] for cells in table.values()), table
    _flags_as_the_true_rules(history, true, written, tmp_path)


def test_an_entry_to_fantasyland_is_read_past_its_faults(tmp_path: Path) -> None:
    # ofc_capped enters from jacks; 10% faults, a few of them a top that entered when
    # it should not or did not when it should. Read only from a table without
    # contradictions, the entry was the contract's queens, which the search never left:
    # jacks fit 7 hands more, and the file written flagged 18 hands the true one does not.
    history, true = _house_dealt(tmp_path, "ofc_capped", 1, 3000, "--seed", "25")
    written = tmp_path / "inferred.toml"
    table = rows(inferred(str(history), "--write", str(written)))
    assert "entry" not in table["O00001"][10], table
    assert 'entry = "JJ"' in written.read_text()
    _flags_as_the_true_rules(history, true, written, tmp_path)


def test_a_table_id_two_games_share_is_written_for_each(tmp_path: Path) -> None:
    # One table id deals the contract's Taiwanese Jokers, then asia's closed game. The
    # entry naming `standard` (any game's contract) came first and took the closed hands
    # too: verified under the written file, they were audited by the contract.
    taiwanese = [json.loads(line) for line in _contract(tmp_path, 30).read_text().splitlines()]
    closed = _after(taiwanese, generated(tmp_path, "asia", 1, 30, "--seed", "5"))
    table = taiwanese[0]["table_id"]
    history = _written(tmp_path / "two.jsonl", taiwanese + closed)
    true = tmp_path / "true.toml"
    true.write_text(RULES.read_text() + f'\n[[tables]]\nmatch = "{table}"\nprofile = "asia"\n')
    written = tmp_path / "inferred.toml"
    inferred(str(history), "--write", str(written))
    for name, given in (("true", true), ("written", written)):
        audit = handaudit("verify", str(history), "--rules", str(given), "--out",
                          str(tmp_path / name))  # fmt: skip
        assert audit.returncode == 0, audit.stdout
    con = duckdb.connect(str(tmp_path / "written" / "audit.duckdb"), read_only=True)
    rules = con.execute("SELECT variant, rules, count(*) FROM hands GROUP BY ALL ORDER BY 1")
    assert rules.fetchall() == [("chinese", "inferred_1", 30), ("taiwanese_jokers", "standard", 30)]


def test_a_name_the_rules_file_gives_other_values_is_not_reused(tmp_path: Path) -> None:
    # The hands name asia; the rules file given calls asia something else (1-6, no
    # doubling Home Run). The hands are audited under the name they give, so what they
    # fit is written under it, and the report says how it differs from the file's.
    wrong = tmp_path / "wrong.toml"
    wrong.write_text(
        RULES.read_text().replace(
            'scoring = "2-4"\nsurrender = false\nhome_run = true',
            'scoring = "1-6"\nsurrender = false\nhome_run = false',
        )
    )
    assert wrong.read_text() != RULES.read_text()
    written = tmp_path / "inferred.toml"
    text = inferred(str(HOUSE / "asia"), "--rules", str(wrong), "--write", str(written))
    assert {cells[6].split(" ")[0] for cells in rows(text).values()} == {"asia"}
    (said,) = [line for line in text.splitlines() if line.startswith("profile asia: ")]
    assert "home_run false -> true" in said and "scoring 1-6 -> 2-4" in said, said
    _verifies_clean(HOUSE / "asia", written, tmp_path)


@pytest.mark.parametrize("profile", ["asia", "pineapple_prog"])
def test_many_small_tables_of_one_profile_are_written_as_it(tmp_path: Path, profile: str) -> None:
    # 80 tables of 5 hands, each too small to tell most keys: their profiles are merged
    # into one (each keeps what its own hands told), under which every hand is exact.
    history = generated(tmp_path, profile, 80, 5, "--seed", "3")
    written = tmp_path / "inferred.toml"
    table = rows(inferred(str(history), "--write", str(written)))
    assert len(table) == 80
    assert {cells[6].split(" ")[0] for cells in table.values()} == {profile}
    assert written.read_text().count("[profiles.") == 1
    _verifies_clean(history, written, tmp_path)
