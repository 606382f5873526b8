"""The straightforward way, for comparison: one hand at a time in Python.

Each line parsed with json, every row evaluated with phevaluator's public API
(jokers by trying every allowed substitute), pairs scored and money settled with
Decimal. It checks nothing and stores nothing; it only recomputes, which flatters it.
"""

from __future__ import annotations

import itertools
import json
from decimal import ROUND_FLOOR, Decimal
from pathlib import Path
from typing import Any

from phevaluator import evaluate_cards, evaluate_omaha_cards

DECK = [r + s for r in "23456789TJQKA" for s in "cdhs"]
ROWS = (("top", 1), ("middle", 2), ("bottom", 3))
CENT = Decimal("0.01")


def best(row: list[str], board: list[str], omaha: bool) -> int:
    """phevaluator's rank (smaller is stronger) of the best substitution of the row's jokers."""
    real = [c for c in row if c != "JK"]
    jokers = len(row) - len(real)
    allowed = [c for c in DECK if c not in real and c not in board] if jokers else []
    ranks = []
    for subs in itertools.combinations(allowed, jokers):
        cards = real + list(subs)
        ranks.append(
            evaluate_omaha_cards(*board, *cards) if omaha else evaluate_cards(*cards, *board)
        )
    return min(ranks)


def settle(hand: dict[str, Any]) -> dict[int, Decimal]:
    players = sorted(hand["players"], key=lambda p: p["seat"])
    values = {
        p["seat"]: [
            [best(p[row], board, row == "bottom") for row, _ in ROWS] for board in hand["boards"]
        ]
        for p in players
    }
    point_value = Decimal(hand["point_value"])
    won = {p["seat"]: Decimal(0) for p in players}
    stack = {p["seat"]: Decimal(p["stack_start"]) for p in players}
    for a, b in itertools.combinations(players, 2):
        points, wins, losses = 0, 0, 0
        for board in range(2):
            for r, (_, worth) in enumerate(ROWS):
                x, y = values[a["seat"]][board][r], values[b["seat"]][board][r]
                if x < y:
                    points, wins = points + worth, wins + 1
                elif x > y:
                    points, losses = points - worth, losses + 1
        points += 8 if wins == 6 else -8 if losses == 6 else 0
        amount = min(abs(points) * point_value, stack[a["seat"]], stack[b["seat"]])
        amount = amount if points > 0 else -amount
        won[a["seat"]] += amount
        won[b["seat"]] -= amount
    rate, cap = Decimal(hand["rake_rate"]), Decimal(hand["rake_cap"])
    winners = {s: w for s, w in won.items() if w > 0}
    rake = {s: (rate * w).quantize(CENT, ROUND_FLOOR) for s, w in winners.items()}
    if sum(rake.values()) > cap:
        total = sum(winners.values())
        shares = {s: cap * w / total for s, w in winners.items()}
        rake = {s: v.quantize(CENT, ROUND_FLOOR) for s, v in shares.items()}
        missing = int((cap - sum(rake.values())) / CENT)
        for s in sorted(winners, key=lambda s: (-(shares[s] - rake[s]), s))[:missing]:
            rake[s] += CENT
    return {s: won[s] - rake.get(s, Decimal(0)) for s in won}


def run(path: Path, limit: int) -> int:
    hands = 0
    with path.open() as f:
        for line in itertools.islice(f, limit):
            settle(json.loads(line, parse_float=Decimal))
            hands += 1
    return hands
