"""The real `handaudit verify` on the Chinese family's example sets (closed Chinese, OFC and
Pineapple): every hand recomputed exactly, every listed fault found, nothing else flagged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import EXAMPLES, load_examples
from tests.golden.test_verify_examples import assert_recomputed_exactly, audit, flagged

GAMES = ("chinese", "ofc", "pineapple_ofc")
PARTS = ("dealt", "top", "middle", "bottom", "discard")


def of_games(hands: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [h for h in hands if h["variant"] in GAMES]


def test_clean_family_hands_recomputed_exactly(tmp_path: Path) -> None:
    hands = of_games(load_examples("family/clean"))
    assert len(hands) > 100
    _, con = audit(tmp_path, EXAMPLES / "family" / "clean" / "hands.jsonl")
    ids = {h["hand_id"] for h in hands}
    assert {h for h, _ in flagged(con) if h in ids} == set()
    assert_recomputed_exactly(con, hands)
    rows = {
        (h, s, r): (cards, value, royalty, board)
        for h, s, r, cards, value, royalty, board in con.execute(
            'SELECT hand_id, seat, "row", cards, value, royalty, board FROM rows'
        ).fetchall()
    }
    fouled = {
        (h, s): tuple(rest)
        for h, s, *rest in con.execute(
            'SELECT hand_id, seat, fouled, recorded_fouled, declare, "natural", fantasyland, '
            "fantasyland_next, recorded_fantasyland_next FROM players"
        ).fetchall()
    }
    for hand in hands:
        for p in hand["players"]:
            key = (hand["hand_id"], p["seat"])
            closed = hand["variant"] == "chinese"
            declared = p.get("declare", "play") if closed else None
            landed = None if closed else (p.get("fantasyland", False), p["fantasyland_next"])
            want: tuple[object, ...] = (p["fouled"], p["fouled"], declared, p.get("natural"))
            want += (None, None, None) if landed is None else (*landed, landed[1])
            assert fouled[key] == want, key
            for r in p["rows"]:
                want = (" ".join(p[r["row"]]), r["value"], r["royalty"], None)
                assert rows[(*key, r["row"])] == want, (key, r)


def test_every_family_fault_found_and_no_other_hand_flagged(tmp_path: Path) -> None:
    truth = json.loads((EXAMPLES / "family" / "faults" / "faults.json").read_text())
    ours = {h["hand_id"] for h in of_games(load_examples("family/faults"))}
    listed = [f for f in truth if f["hand_id"] in ours]
    assert {"placement", "fantasyland", "foul", "royalty", "natural"} <= {
        f["check"] for f in listed
    }
    rc, con = audit(tmp_path, EXAMPLES / "family" / "faults" / "hands.jsonl")
    assert rc == 1
    found = flagged(con)
    allowed = {f["hand_id"] for f in truth} | {e for f in truth for e in f["echo_hand_ids"]}
    missed = [(f["hand_id"], f["check"]) for f in listed if (f["hand_id"], f["check"]) not in found]
    false = sorted((h, c) for h, c in found if h in ours and h not in allowed)
    assert (missed, false) == ([], [])


def test_the_streets_view_gives_back_every_street_as_recorded(tmp_path: Path) -> None:
    """Placements stored as numbers, spelled out by the view: every street of every
    verified open-face player, the faulty ones (placement faults) included, card by card."""
    hands = [h for h in load_examples("family/faults") if h["variant"] in GAMES[1:]]
    _, con = audit(tmp_path, EXAMPLES / "family" / "faults" / "hands.jsonl")
    stored = {
        (h, seat, n): parts
        for h, seat, n, *parts in con.execute(
            "SELECT hand_id, seat, street, dealt, top, middle, bottom, discard FROM streets"
        ).fetchall()
    }
    verified = {h for (h,) in con.execute("SELECT hand_id FROM hands").fetchall()}
    want = {
        (hand["hand_id"], p["seat"], n): [" ".join(street.get(part, [])) for part in PARTS]
        for hand in hands
        if hand["hand_id"] in verified
        for p in hand["players"]
        for n, street in enumerate(p["streets"], start=1)
    }
    assert len(want) > 1000 and stored == want


def test_a_file_mixing_the_games_audits_each_as_alone(tmp_path: Path) -> None:
    taiwanese = (EXAMPLES / "faults" / "hands.jsonl").read_text().splitlines()
    family = (EXAMPLES / "family" / "faults" / "hands.jsonl").read_text().splitlines()
    n = min(len(taiwanese), len(family))
    # Line by line in turns: each file's lines keep their order, so each table's do.
    mixed = [x for pair in zip(taiwanese[:n], family[:n], strict=True) for x in pair]
    (tmp_path / "mixed.jsonl").write_text("\n".join(mixed + taiwanese[n:] + family[n:]) + "\n")
    _, together = audit(tmp_path / "a", tmp_path / "mixed.jsonl")
    _, alone = audit(tmp_path / "b", EXAMPLES / "faults" / "hands.jsonl")
    _, family_alone = audit(tmp_path / "c", EXAMPLES / "family" / "faults" / "hands.jsonl")
    assert flagged(together) == flagged(alone) | flagged(family_alone)
