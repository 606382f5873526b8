"""Hypothesis: the columnar game checks (players, card, joker, duplicate_card, setting)
give each record the verdict of a plain per-record reading of the rules."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.core.cards import JOKER, SPELLINGS
from tests.unit.ingest.helpers import ingest, valid_hand

ROWS = {"top": 1, "middle": 2, "bottom": 4}
# Cards of the worked hand, others, jokers and texts that are no card.
CARD_TEXTS = st.sampled_from(
    ["Kd", "4h", "Tc", "Qs", "5c", "Js", "As", "3d", "2h", "10h", "JK", "jk", "Xx", "1h", "A"]
)


def reference_check(hand: dict[str, Any]) -> str | None:
    """The first game check a record fails, in their order of precedence."""
    players = hand["players"]
    seats = [p["seat"] for p in players]
    if not 2 <= len(players) <= 6 or len(set(seats)) < len(seats):
        return "players"
    boards = [c for board in hand["boards"] for c in board]
    rows = [c for p in players for r in ROWS for c in p[r]]
    dealt = [c for p in players for c in p.get("cards") or []]
    if any(c not in SPELLINGS for c in boards + rows + dealt):
        return "card"
    jokers = sum(SPELLINGS[c] == JOKER for c in rows)
    on_board = any(SPELLINGS[c] == JOKER for c in boards)
    if on_board or jokers > 2 or (hand["variant"] == "taiwanese" and jokers):
        return "joker"
    standard = [SPELLINGS[c] for c in boards + rows if SPELLINGS[c] != JOKER]
    if len(set(standard)) < len(standard):
        return "duplicate_card"
    for p in players:
        if any(len(p[r]) != k for r, k in ROWS.items()):
            return "setting"
        setting = sorted(SPELLINGS[c] for r in ROWS for c in p[r])
        if "cards" in p and sorted(SPELLINGS[c] for c in p["cards"]) != setting:
            return "setting"
    return None


@st.composite
def dealt_wrong(draw: st.DrawFn) -> dict[str, Any]:
    """The worked hand with some cards, seats, rows or the variant changed."""
    hand = valid_hand()
    hand["variant"] = draw(st.sampled_from(["taiwanese", "taiwanese_jokers"]))
    for _ in range(draw(st.integers(0, 4))):
        player = draw(st.sampled_from(hand["players"]))
        place = draw(st.sampled_from(["board", "cards", *ROWS, "seat", "drop", "swap"]))
        if place == "board":
            board = draw(st.sampled_from(hand["boards"]))
            board[draw(st.integers(0, 4))] = draw(CARD_TEXTS)
        elif place == "seat":
            player["seat"] = draw(st.integers(1, 6))
        elif place == "drop":
            if len(hand["players"]) > 1 and draw(st.booleans()):
                hand["players"].remove(player)
            else:
                player.pop("cards", None)
        elif place == "swap":  # a card moves between rows: same cards, another setting
            a, b = draw(st.sampled_from(list(ROWS))), draw(st.sampled_from(list(ROWS)))
            if player[a]:
                player[b].append(player[a].pop())
        else:
            cards = player.get(place)
            if cards:
                cards[draw(st.integers(0, len(cards) - 1))] = draw(CARD_TEXTS)
    return hand


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(hands=st.lists(dealt_wrong(), min_size=1, max_size=5))
def test_game_checks_agree_with_the_rules_read_record_by_record(
    hands: list[dict[str, Any]], tmp_path: Path
) -> None:
    for i, hand in enumerate(hands):
        hand["hand_id"] = f"H-{i}"
    path = tmp_path / "hands.jsonl"
    path.write_text("".join(json.dumps(h) + "\n" for h in hands))
    _, rejects, accounting = ingest(path)
    found = {q.hand_id: q.check.value for q in rejects}
    assert accounting.read == len(hands)
    assert found == {
        h["hand_id"]: check for h in hands if (check := reference_check(h)) is not None
    }
