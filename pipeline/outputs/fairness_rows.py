"""The rows of `report fairness`: one per test, each of a kind that shares the false-alarm
rate (`weights`)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import numpy as np
import numpy.typing as npt

from pipeline.core.cards import CANONICAL, N_STANDARD
from pipeline.core.fairness import Verdict
from pipeline.helpers.encoding import N_RANKS, N_SUITS, rank_of, suit_of

SUITS = ("clubs", "diamonds", "hearts", "spades")
RANK_NAMES = (
    "twos",
    "threes",
    "fours",
    "fives",
    "sixes",
    "sevens",
    "eights",
    "nines",
    "tens",
    "jacks",
    "queens",
    "kings",
    "aces",
)


def _membership(of: npt.NDArray[np.int64], size: int) -> npt.NDArray[np.float64]:
    """(52, size): 1 where a standard card belongs to a category."""
    member = np.zeros((N_STANDARD, size))
    member[np.arange(N_STANDARD), of] = 1.0
    return member


_CODES = np.arange(N_STANDARD)
CATEGORIES = (
    ("suit", _membership(suit_of(_CODES), N_SUITS), SUITS),
    ("rank", _membership(rank_of(_CODES), N_RANKS), RANK_NAMES),
    ("card", np.eye(N_STANDARD), CANONICAL[:N_STANDARD]),
)


class Kind(StrEnum):
    """What a test looks for. The deal's half of the false-alarm rate is shared alike by
    the kinds that made a test, and a kind's share alike by its tests, so that one kind's
    many rows (a test per seat) do not drown another's few (a repeated deal)."""

    cards = "cards by seat"  # the omnibus tests of a game's cards by seat
    cell = "most favoured cell"
    seat = "one seat"
    between = "between hands"
    repeats = "repeated deals"
    positions = "positions"  # board positions, the last seat dealt, the deal order
    premium = "premium outcomes"  # the players' tests: the other half of the rate


@dataclass(frozen=True)
class FairnessTest:
    test: str
    scope: str
    hands: int
    cards: int | None
    verdict: Verdict
    detail: str
    kind: Kind = Kind.cards
    untested: int = 0  # players this row stands for, too few hands to test (premium)


def scope_of(who: str, table_id: str | None, player_id: str | None = None) -> str:
    """What a test covers: a game or players, at the table and of the player filtered."""
    parts = [who]
    if table_id is not None:
        parts.append(f"table {table_id}")
    if player_id is not None:
        parts.append(f"player {player_id}")
    return ", ".join(parts)


def weights(tests: list[FairnessTest]) -> tuple[list[float], float]:
    """Each test's share of the false-alarm rate, and the untested players': half for the
    deal's tests, shared alike by the kinds of test made and within a kind by its tests;
    half for the players (each player alike, the untested too), so that thousands of
    players do not drown the deal's tests; all to one side when the other has none."""
    made = [t.verdict.p_value is not None for t in tests]
    players = [t.kind is Kind.premium for t in tests]
    kinds = {t.kind for t, m in zip(tests, made, strict=True) if m and t.kind is not Kind.premium}
    per_kind = {k: sum(m and t.kind is k for t, m in zip(tests, made, strict=True)) for k in kinds}
    people = sum(m and p for m, p in zip(made, players, strict=True))
    untested = sum(t.untested for t in tests)
    deal_share = 0.5 if kinds and (people + untested) else 1.0 if kinds else 0.0
    per_player = (1.0 - deal_share) / max(people + untested, 1)
    shares = [
        per_player if p else deal_share / len(kinds) / per_kind[t.kind] if t.kind in kinds else 0.0
        for t, p in zip(tests, players, strict=True)
    ]
    return shares, per_player * untested
