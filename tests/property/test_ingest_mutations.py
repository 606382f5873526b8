"""Hypothesis: spoil valid records at random; nothing escapes, every record is counted once,
and the columnar readers (JSON Lines, JSON arrays) agree with the models alone on every record."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.ingest import Quarantined, validate
from pipeline.ingest.decode import record_by_record
from pipeline.ingest.hand_history import JsonConstant, JsonNumber
from tests.unit.ingest.helpers import ingest, valid_hand

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**20), 10**20)
    | st.text(max_size=8)
    | st.sampled_from(
        [
            "12.50",
            "1e2",
            "-0.01",
            "0.001",
            "JK",
            "Ah",
            "1h",
            "2026-11-29T20:15:03Z",
            "taiwanese",
            "seat",
            "top",
        ]
    ),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)


def paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out += paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += paths(v, (*prefix, i))
    return out


@st.composite
def spoiled(draw: st.DrawFn) -> dict[str, Any]:
    hand = valid_hand()
    for _ in range(draw(st.integers(1, 3))):
        where = draw(st.sampled_from(paths(hand)[1:]))
        parent: Any = hand
        for key in where[:-1]:
            parent = parent[key]
        action = draw(st.sampled_from(["replace", "delete", "copy"]))
        if action == "delete":
            del parent[where[-1]]
        elif action == "copy" and isinstance(parent, list):
            parent.append(json.loads(json.dumps(parent[where[-1]])))
        else:
            parent[where[-1]] = draw(JSON_VALUES)
    return hand


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(hands=st.lists(spoiled(), min_size=1, max_size=4))
def test_spoiled_records_are_each_accounted_once(
    hands: list[dict[str, Any]], tmp_path: Path
) -> None:
    for i, hand in enumerate(hands):
        if isinstance(hand.get("hand_id"), str):
            hand["hand_id"] = f"{hand['hand_id']}-{i}"
    lines = tmp_path / "spoiled.jsonl"
    lines.write_text("".join(json.dumps(h) + "\n" for h in hands))
    array = tmp_path / "spoiled.json"
    array.write_text(json.dumps(hands))

    _, fast_rejects, fast = ingest(lines)
    _, array_rejects, from_array = ingest(array)
    careful_rejects, careful_verified = one_by_one(hands)
    assert fast.read == len(hands) == fast.verified + fast.quarantined
    assert from_array.read == len(hands) == from_array.verified + from_array.quarantined
    # Same verdict, record by record, whichever reader took it, and the models alone.
    verdicts = sorted((str(q.hand_id), q.check.value) for q in careful_rejects)
    assert sorted((str(q.hand_id), q.check.value) for q in fast_rejects) == verdicts
    assert sorted((str(q.hand_id), q.check.value) for q in array_rejects) == verdicts
    assert fast.verified == from_array.verified == careful_verified


def one_by_one(hands: list[dict[str, Any]]) -> tuple[list[Quarantined], int]:
    """The records through the models one at a time (record by record), then the game rules."""
    decoder = json.JSONDecoder(parse_float=JsonNumber, parse_constant=JsonConstant)
    texts = [json.dumps(h) for h in hands]
    sources = [f"hands:{i + 1}" for i in range(len(hands))]
    decoded = record_by_record(
        sources, [decoder.decode(t) for t in texts], list(texts), parsed=True
    )
    batches, rejects = validate(decoded, set())
    return rejects, sum(len(b) for b in batches)
