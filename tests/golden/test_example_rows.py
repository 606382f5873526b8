"""Every recorded row value of the example sets (the reference's ground truth), re-evaluated."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from pipeline.cards import format_cards, try_parse
from pipeline.evaluator import value_text
from pipeline.games import TAIWANESE_JOKERS
from pipeline.showdown import showdown
from tests.conftest import EXAMPLES, load_examples

VARIANT = TAIWANESE_JOKERS


def faulty_hand_ids() -> set[str]:
    path = EXAMPLES / "faults" / "faults.json"
    return {f["hand_id"] for f in json.loads(path.read_text())} if path.exists() else set()


def evaluate_examples(
    hands: list[dict[str, Any]],
) -> list[tuple[str, int, int, str, str, str, list[str] | None, list[str]]]:
    """Per recorded row: hand, seat, board, row, recorded value, ours, recorded joker_as, ours."""
    boards = np.stack([np.stack([try_parse(b) for b in h["boards"]]) for h in hands])
    players = [(i, p) for i, h in enumerate(hands) for p in h["players"]]
    settings = {
        row.name: np.stack([try_parse(p[row.name]) for _, p in players]) for row in VARIANT.rows
    }
    result = showdown(VARIANT, boards, settings, np.array([i for i, _ in players]))
    texts = value_text(result.value)
    subs = format_cards(result.joker_as)
    row_index = {row.name: r for r, row in enumerate(VARIANT.rows)}
    out = []
    for k, (i, p) in enumerate(players):
        for rec in p.get("rows") or []:
            b, r = rec["board"] - 1, row_index[rec["row"]]
            out.append(
                (
                    hands[i]["hand_id"],
                    p["seat"],
                    rec["board"],
                    rec["row"],
                    rec["value"],
                    texts[k, b, r],
                    rec.get("joker_as"),
                    [c for c in subs[k, b, r] if c],
                )
            )
    return out


@pytest.mark.parametrize("name", ["clean", "edge"])
def test_every_recorded_row_value_and_joker_substitute(name: str) -> None:
    rows = evaluate_examples(load_examples(name))
    assert len(rows) > 3000
    wrong = [r for r in rows if r[4] != r[5]]
    assert not wrong, wrong[:5]
    jokers = [r for r in rows if r[6]]
    assert jokers  # both sets deal jokers
    # The reference records the first substitute in card order; so do we.
    assert [r for r in jokers if r[6] != r[7]] == []


def test_untouched_hands_of_the_faults_set() -> None:
    faulty = faulty_hand_ids()
    hands = [h for h in load_examples("faults") if h["hand_id"] not in faulty]
    rows = evaluate_examples(hands)
    assert len(rows) > 5000
    assert [r for r in rows if r[4] != r[5]] == []
