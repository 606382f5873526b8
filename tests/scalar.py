"""A plain, one-hand-at-a-time evaluator written from rules.md alone, to check the vectorized one.

It shares nothing with `pipeline.core.evaluator`: ranks are counted with Counter, the
best five cards are found by trying every combination, jokers by trying every
allowed substitute.
"""

from __future__ import annotations

import itertools
from collections import Counter

STRAIGHT_FLUSH, QUADS, FULL_HOUSE, FLUSH, STRAIGHT, TRIPS, TWO_PAIR, PAIR, HIGH = (
    8,
    7,
    6,
    5,
    4,
    3,
    2,
    1,
    0,
)
JOKER = 52


def five(cards: tuple[int, ...]) -> tuple[int, ...]:
    """A comparable key (category, ranks in significance order) of five card codes."""
    ranks = sorted((c // 4 for c in cards), reverse=True)
    suits = {c % 4 for c in cards}
    counts = Counter(ranks)
    groups = sorted(counts.items(), key=lambda rc: (rc[1], rc[0]), reverse=True)
    ordered = tuple(r for r, n in groups for _ in range(n))
    flush = len(suits) == 1
    straight_top = None
    if len(counts) == 5:
        if ranks[0] - ranks[4] == 4:
            straight_top = ranks[0]
        elif ranks == [12, 3, 2, 1, 0]:
            straight_top = 3
    if straight_top is not None:
        return (STRAIGHT_FLUSH if flush else STRAIGHT, straight_top)
    if flush:
        return (FLUSH, *ordered)
    shape = tuple(n for _, n in groups)
    category = {
        (4, 1): QUADS,
        (3, 2): FULL_HOUSE,
        (3, 1, 1): TRIPS,
        (2, 2, 1): TWO_PAIR,
        (2, 1, 1, 1): PAIR,
        (1, 1, 1, 1, 1): HIGH,
    }[shape]
    return (category, *ordered)


def best_any(row: tuple[int, ...], board: tuple[int, ...]) -> tuple[int, ...]:
    """Best five of row + board, any number from the row (top and middle rows)."""
    return max(five(c) for c in itertools.combinations(row + board, 5))


def best_omaha(row: tuple[int, ...], board: tuple[int, ...]) -> tuple[int, ...]:
    """Best of exactly two row cards with exactly three board cards (bottom row)."""
    return max(
        five(h + b)
        for h in itertools.combinations(row, 2)
        for b in itertools.combinations(board, 3)
    )


def best_with_jokers(
    row: tuple[int, ...], board: tuple[int, ...], omaha: bool
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Best key over every allowed substitution, and the first substitutes reaching it."""
    real = tuple(c for c in row if c != JOKER)
    jokers = len(row) - len(real)
    allowed = [c for c in range(52) if c not in real and c not in board]
    best_key: tuple[int, ...] = ()
    first: tuple[int, ...] = ()
    evaluate = best_omaha if omaha else best_any
    for subs in itertools.combinations(allowed, jokers):
        key = evaluate(real + subs, board)
        if key > best_key:
            best_key, first = key, subs
    return best_key, first
