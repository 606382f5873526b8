"""Hypothesis: the open-face promises of issue 15, whatever the cards and the spoiling.

A placement moved after its street is always caught; a hand that earned Fantasyland whose
next hand does not deal it is always caught; a player's royalties count the same against
every opponent.
"""

from __future__ import annotations

import copy
import itertools
import json
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.core.audit import audit_batch
from pipeline.core.games.chinese import fouled
from pipeline.core.games.open_face import OFC, contract_rules, pair_points, royalties
from pipeline.engine.verify import verify
from pipeline.ingest.decode import decode_lines
from pipeline.ingest.parts import LinesBlock
from pipeline.ingest.validate import validate
from tests.conftest import ROOT, load_examples
from tests.property.test_chinese_scoring import values_of

ROWS = ("top", "middle", "bottom")
WORKED = ROOT / "fixtures" / "family_worked_hands.jsonl"


def open_face_hand() -> dict[str, Any]:
    """family/worked.md's OFC hand (nine streets a player), fresh each call."""
    return next(
        h for line in WORKED.read_text().splitlines() if (h := json.loads(line))["variant"] == "ofc"
    )


def checks_of(hand: dict[str, Any]) -> set[str]:
    line = json.dumps(hand).encode()
    batches, rejects = validate(decode_lines(LinesBlock("h.jsonl", [1], [line])), set())
    found = {q.check.value for q in rejects}
    for batch in batches:
        found |= set(audit_batch(batch).divergences["check"].to_pylist())
    return found


@settings(max_examples=60, deadline=None)
@given(player=st.integers(0, 2), street=st.integers(1, 8), to=st.sampled_from(ROWS))
def test_a_placement_moved_after_its_street_is_caught(player: int, street: int, to: str) -> None:
    """A card placed on another street than the one that dealt it, or in another row than
    the final rows hold it in."""
    hand = open_face_hand()
    assert checks_of(hand) == set()
    streets = hand["players"][player]["streets"]
    row = next(r for r in ROWS if streets[street].get(r))
    card = streets[street][row].pop()
    target = street if to != row else street - 1  # same row: an earlier street
    streets[target].setdefault(to, []).append(card)
    assert "placement" in checks_of(hand)


def test_a_discarded_card_also_in_a_row_is_a_repeated_card() -> None:
    hand = open_face_hand()
    moved = hand["players"][0]["streets"][2]
    moved.setdefault("discard", []).append(moved["bottom"][0])
    assert checks_of(hand) == {"duplicate_card"}


def _fantasyland_pairs() -> list[tuple[dict[str, Any], dict[str, Any], int]]:
    """Consecutive hands of a table where a player earned Fantasyland: (hand, next, seat)."""
    hands = load_examples("family/clean")
    by_table: dict[str, list[dict[str, Any]]] = {}
    for h in hands:
        by_table.setdefault(h["table_id"], []).append(h)
    found = []
    for table in by_table.values():
        table.sort(key=lambda h: h["hand_no"])
        for first, second in itertools.pairwise(table):
            for p in first["players"]:
                if p.get("fantasyland_next") and not p.get("timed_out"):
                    found.append((first, second, p["player_id"]))
    return found


FANTASYLAND = _fantasyland_pairs()


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(which=st.integers(0, len(FANTASYLAND) - 1), drop=st.booleans())
def test_a_fantasyland_not_dealt_in_the_next_hand_is_caught(
    which: int, drop: bool, tmp_path_factory: Any
) -> None:
    first, second, player_id = FANTASYLAND[which]
    second = copy.deepcopy(second)
    if drop:  # the player is not dealt into the next hand at all
        second["players"] = [p for p in second["players"] if p["player_id"] != player_id]
    else:  # dealt in, but not in Fantasyland
        for p in second["players"]:
            if p["player_id"] == player_id:
                p["fantasyland"] = False
    out = tmp_path_factory.mktemp("fantasyland")
    path = Path(out) / "hands.jsonl"
    path.write_text(json.dumps(first) + "\n" + json.dumps(second) + "\n")
    verify([path], out / "audit")
    with duckdb.connect(str(out / "audit" / "audit.duckdb"), read_only=True) as con:
        flagged = con.execute(
            "SELECT hand_id FROM divergences WHERE \"check\" = 'fantasyland'"
        ).fetchall()
        quarantined = con.execute("SELECT hand_id FROM quarantine").fetchall()
    assert (second["hand_id"],) in flagged + quarantined


@st.composite
def three_players(draw: st.DrawFn) -> np.ndarray:
    deck = draw(st.permutations(range(52)))
    return np.array(deck[:39], dtype=np.int8).reshape(3, 13)


@settings(max_examples=300, deadline=None)
@given(cards=three_players())
def test_royalties_count_the_same_against_every_opponent(cards: np.ndarray) -> None:
    values = values_of(cards)
    foul = fouled(values)
    contract, profile = contract_rules(OFC), np.zeros(3, np.int64)
    royalty = royalties(values, contract, profile)
    a, b = np.array([0, 0, 1]), np.array([1, 2, 2])
    with_royalties = pair_points(a, b, values, foul, royalty, contract, profile).points
    without = pair_points(a, b, values, foul, np.zeros_like(royalty), contract, profile).points
    own = np.where(foul, 0, royalty.sum(axis=1))
    both_fouled = foul[a] & foul[b]
    assert (with_royalties - without == np.where(both_fouled, 0, own[a] - own[b])).all()
