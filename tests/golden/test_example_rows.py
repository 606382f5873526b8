"""Every recorded row value of the example sets (the reference's ground truth), re-evaluated."""

from __future__ import annotations

import itertools
import json
from typing import Any

import numpy as np
import pytest

from pipeline.core.cards import format_cards, try_parse
from pipeline.core.evaluator import value_text
from pipeline.core.evaluator.alone import five_card_values, three_card_values
from pipeline.core.games import TAIWANESE_JOKERS
from pipeline.core.showdown import showdown
from tests.conftest import EXAMPLES, load_examples

VARIANT = TAIWANESE_JOKERS
ROWS = ("top", "middle", "bottom")


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


def test_every_row_value_of_the_family_examples() -> None:
    """Tops of three cards and five-card rows on their own, for all three games."""
    hands = load_examples("family/clean")
    players = [p for h in hands for p in h["players"]]
    top = three_card_values(np.stack([try_parse(p["top"]) for p in players]))
    middle = five_card_values(np.stack([try_parse(p["middle"]) for p in players]))
    bottom = five_card_values(np.stack([try_parse(p["bottom"]) for p in players]))
    ours = np.stack([value_text(v) for v in (top, middle, bottom)], axis=1)
    recorded = [[{r["row"]: r["value"] for r in p["rows"]}[n] for n in ROWS] for p in players]
    assert len(players) > 1000
    assert ours.tolist() == recorded


def test_three_card_tops_order_as_the_rules_say() -> None:
    """Every three-card top, against a plain reading of chinese-family.md section 2."""
    ranks = "23456789TJQKA"
    cards = np.array(list(itertools.combinations(range(52), 3)), dtype=np.int8)
    values = three_card_values(cards)

    def plain(codes: np.ndarray) -> tuple[int, list[int]]:
        r = sorted((int(c) // 4 for c in codes), reverse=True)
        counts = {x: r.count(x) for x in r}
        order = sorted(r, key=lambda x: (counts[x], x), reverse=True)
        return max(counts.values()), order

    keys = [plain(c) for c in cards]
    order = sorted(range(len(cards)), key=lambda i: keys[i])
    ordered = values[order]
    assert (np.diff(ordered) >= 0).all()
    same = [keys[order[i]] == keys[order[i + 1]] for i in range(len(order) - 1)]
    assert ((np.diff(ordered) == 0) == np.array(same)).all()
    weakest, strongest = keys[order[0]][1], keys[order[-1]][1]
    assert value_text(ordered[[0, -1]]).tolist() == [
        "high_card:" + "".join(ranks[x] for x in weakest),
        "three_of_a_kind:" + "".join(ranks[x] for x in strongest),
    ]
