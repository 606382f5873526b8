"""The real `handaudit verify` on the example sets, read back from the DuckDB file."""

from __future__ import annotations

import json
import random
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tests.cli.test_evaluate_command import handaudit
from tests.conftest import EXAMPLES, load_examples

TABLE_RULES = {"cover", "largest_group", "floor_60", "timeout_sit_out", "continuity", "hand_no"}


def audit(tmp_path: Path, *inputs: Path) -> tuple[int, duckdb.DuckDBPyConnection]:
    result = handaudit("verify", *map(str, inputs), "--out", str(tmp_path / "out"))
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, duckdb.connect(str(tmp_path / "out" / "audit.duckdb"), read_only=True)


def flagged(con: duckdb.DuckDBPyConnection) -> set[tuple[str, str]]:
    return set(con.execute('SELECT hand_id, "check" FROM divergences').fetchall()) | set(
        con.execute('SELECT hand_id, "check" FROM quarantine WHERE hand_id IS NOT NULL').fetchall()
    )


def assert_recomputed_exactly(con: duckdb.DuckDBPyConnection, hands: list[dict[str, Any]]) -> None:
    got = {
        (h, s): r
        for h, s, *r in con.execute(
            "SELECT hand_id, seat, points, won, rake, net, stack_end FROM players"
        ).fetchall()
    }
    pairs = {
        (h, s, o): r
        for h, s, o, *r in con.execute(
            "SELECT hand_id, seat, opponent, points, home_run, amount FROM settlements"
        ).fetchall()
    }
    for hand in hands:
        for p in hand["players"]:
            want = [p["points"], *(Decimal(p[f]) for f in ("won", "rake", "net", "stack_end"))]
            assert list(got[(hand["hand_id"], p["seat"])]) == want, (hand["hand_id"], p["seat"])
        for s in hand.get("settlements") or []:
            want_pair = [s["points"], s["home_run"], Decimal(s["amount"])]
            assert list(pairs[(hand["hand_id"], s["seat"], s["opponent"])]) == want_pair


def test_clean_set_recomputes_everything_and_flags_nothing(tmp_path: Path) -> None:
    hands = load_examples("clean")
    rc, con = audit(tmp_path, EXAMPLES / "clean" / "hands.jsonl")
    assert rc == 0
    assert flagged(con) == set()
    assert_recomputed_exactly(con, hands)
    read, verified, quarantined = con.execute(
        "SELECT records_read, verified, quarantined FROM runs"
    ).fetchone()  # type: ignore[misc]
    assert (read, verified, quarantined) == (400, 400, 0)


def test_edge_set_breaks_only_cover_and_the_floor(tmp_path: Path) -> None:
    hands = load_examples("edge")
    rc, con = audit(tmp_path, EXAMPLES / "edge" / "hands.jsonl")
    assert rc == 1
    assert_recomputed_exactly(con, hands)
    assert {c for _, c in flagged(con)} == {"cover", "floor_60"}
    # The rows view spells each row's cards (stored as codes) as the input wrote them.
    shown = {
        (h, s, b, r): (cards, value, joker_as)
        for h, s, b, r, cards, value, joker_as in con.execute(
            'SELECT hand_id, seat, board, "row", cards, value, joker_as FROM rows'
        ).fetchall()
    }
    want = {
        (hand["hand_id"], p["seat"], r["board"], r["row"]): (
            " ".join(p[r["row"]]),
            r["value"],
            r["joker_as"],
        )
        for hand in hands
        for p in hand["players"]
        for r in p["rows"]
    }
    assert shown == want


def faults_found(con: duckdb.DuckDBPyConnection) -> tuple[list[Any], list[Any]]:
    truth = json.loads((EXAMPLES / "faults" / "faults.json").read_text())
    found = flagged(con)
    allowed = {f["hand_id"] for f in truth} | {e for f in truth for e in f["echo_hand_ids"]}
    missed = [f for f in truth if (f["hand_id"], f["check"]) not in found]
    false = sorted((h, c) for h, c in found if h not in allowed)
    return missed, false


def test_faults_set_every_fault_found_nothing_else(tmp_path: Path) -> None:
    rc, con = audit(tmp_path, EXAMPLES / "faults" / "hands.jsonl")
    assert rc == 1
    assert faults_found(con) == ([], [])


@pytest.mark.parametrize("seed", [1, 2])
def test_faults_shuffled_and_split_across_files(tmp_path: Path, seed: int) -> None:
    lines = (EXAMPLES / "faults" / "hands.jsonl").read_text().splitlines()
    random.Random(seed).shuffle(lines)
    # The duplicate must stay second to be the one quarantined: keep the first copy first.
    parts = tmp_path / "in"
    parts.mkdir()
    third = len(lines) // 3
    for i, chunk in enumerate((lines[:third], lines[third : 2 * third], lines[2 * third :])):
        (parts / f"part{i}.jsonl").write_text("\n".join(chunk) + "\n")
    _, con = audit(tmp_path, parts)
    missed, false = faults_found(con)
    assert false == []
    assert [(f["hand_id"], f["check"]) for f in missed if f["check"] != "duplicate_hand"] == []
