"""Hypothesis: cover and the largest group, run over a batch's columns, flag what a plain
reading of rules.md section 7 flags, hand by hand."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.core.checks.findings import Findings
from pipeline.core.checks.seating import check_seating
from tests.unit.ingest.helpers import ingest, valid_hand, write_lines

COVER, FLOOR = 20, 60
VARIANTS = st.sampled_from(["taiwanese_jokers"])  # the worked hand deals a joker
# Stacks around the lines the rules draw, in cents.
STACKS = st.sampled_from([0, 1_000, 1_999, 2_000, 4_000, 5_999, 6_000, 8_000, 10_000, 25_000])


def money(cents: int) -> str:
    return f"{Decimal(cents) / 100:.2f}"


def reference(hand: dict[str, Any]) -> set[tuple[str, int | None]]:
    """The (check, seat) of each divergence, read from the rules one hand at a time."""
    value = Decimal(hand["point_value"])
    dealt = [Decimal(p["stack_start"]) for p in hand["players"]]
    n = len(dealt)
    found: set[tuple[str, int | None]] = {
        ("cover", p["seat"])
        for p in hand["players"]
        if Decimal(p["stack_start"]) < COVER * (n - 1) * value
    }
    short = [Decimal(s["stack"]) for s in hand["sitting_out"] if s["reason"] == "short"]
    if short:
        candidates = dealt + [s for s in short if s >= FLOOR * value]
        groups = [
            k
            for k in range(2, 7)
            if sum(stack >= COVER * (k - 1) * value for stack in candidates) >= k
        ]
        if groups and max(groups) > n:
            found.add(("largest_group", None))
    return found


@st.composite
def hands(draw: st.DrawFn, number: int) -> dict[str, Any]:
    hand = valid_hand()
    hand["hand_id"] = f"S-{number}"
    hand["variant"] = draw(VARIANTS)
    hand["point_value"] = draw(st.sampled_from(["0.01", "0.50", "1.00", "2.00"]))
    hand["players"] = hand["players"][: draw(st.integers(2, len(hand["players"])))]
    del hand["settlements"]
    for player in hand["players"]:
        player["stack_start"] = money(draw(STACKS))
    free = [s for s in range(1, 7) if s not in {p["seat"] for p in hand["players"]}]
    seats = draw(st.lists(st.sampled_from(free), unique=True, max_size=len(free)))
    hand["sitting_out"] = [
        {
            "seat": seat,
            "player_id": f"S-p{seat}",
            "stack": money(draw(STACKS)),
            "reason": draw(st.sampled_from(["short", "short", "timeout", "away"])),
        }
        for seat in seats
    ]
    return hand


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_seating_rules_agree_with_a_reading_of_the_rules(
    tmp_path: Path, data: st.DataObject
) -> None:
    records = [data.draw(hands(i)) for i in range(data.draw(st.integers(1, 12)))]
    path = write_lines(tmp_path / "hands.jsonl", [json.dumps(r) for r in records])
    batches, rejects, _ = ingest(path)
    assert [q.message for q in rejects] == []
    found: dict[str, set[tuple[str, int | None]]] = {r["hand_id"]: set() for r in records}
    for batch in batches:
        findings = Findings()
        check_seating(batch, findings)
        for hand, check, seat in zip(findings.hand, findings.check, findings.seat, strict=True):
            found[batch.hands.hand_id[hand].as_py()].add((check, seat))
    assert found == {r["hand_id"]: reference(r) for r in records}
