"""The pieces of a hand record every generated game writes the same way (hand-history.md):
the hand's head, a seat's stack, a player's result, the pair settlements."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from pipeline.core.games import HOME_RUN_NAMES
from pipeline.core.games.pairs import Ints, Pairs, player_points
from pipeline.core.money import Settlement, money_text
from pipeline.generate.tables import Tables


@dataclass(frozen=True)
class Step:
    """One step's hands, settled, as every simulator keeps them: per player (grouped by
    hand) and per pair; each game adds what its records say besides."""

    tables: Ints  # the tables that dealt, one hand each
    table_of: Ints
    hand_of: Ints  # index into tables
    seat: Ints  # 0-based
    pairs: Pairs
    points: Ints
    money: Settlement
    timed_out: npt.NDArray[np.bool_]

    def players(self, h: int) -> range:
        return of_hand(self.hand_of, h)

    def pairs_of(self, h: int) -> range:
        return of_hand(self.pairs.hand, h)


def settled(
    rng: np.random.Generator, t: Tables, tables: Ints, hand_of: Ints, seat: Ints, pairs: Pairs
) -> dict[str, Any]:
    """A family step's `Step` fields: its pairs settled at table stakes by the project's
    engine, and the players who will time out."""
    _, money = t.settle(tables, pairs, hand_of, seat, table_stakes=True)
    return {
        "tables": tables,
        "table_of": tables[hand_of],
        "hand_of": hand_of,
        "seat": seat,
        "pairs": pairs,
        "points": player_points(pairs, len(seat)),
        "money": money,
        "timed_out": rng.random(len(seat)) < 0.03,
    }


def of_hand(hand: Ints, h: int) -> range:
    """Where hand `h`'s entries are in a column of hand indexes in hand order."""
    lo, hi = np.searchsorted(hand, [h, h + 1])
    return range(int(lo), int(hi))


def hand_head(t: Tables, table: int, variant: str) -> dict[str, Any]:
    """The hand's identity, time, game and stakes: what every record starts with."""
    table_id, no = t.table_id[table], int(t.hand_no[table])
    return {
        "hand_id": f"{table_id}-{no:06d}",
        "table_id": table_id,
        "hand_no": no,
        "started_at": datetime.fromtimestamp(int(t.clock[table]), UTC).strftime(
            "%Y-%m-%dT%H:%M:%SZ"
        ),
        "variant": variant,
        "currency": "USD",
        "point_value": money_text(int(t.point_value[table])),
        "rake_rate": f"{t.rake_rate[table] / 10**9:.2f}",
        "rake_cap": money_text(int(t.rake_cap[table])),
    }


def seat_head(t: Tables, table: int, seat: int, stack_start: int) -> dict[str, Any]:
    """A dealt-in player's seat (0-based here), id, stack and chips added since last hand."""
    player: dict[str, Any] = {
        "seat": seat + 1,
        "player_id": t.player_id(table, seat),
        "stack_start": money_text(stack_start),
    }
    if t.pending_add_on[table, seat]:
        player["add_on"] = money_text(int(t.pending_add_on[table, seat]))
    return player


def result(points: Ints, money: Settlement, i: int) -> dict[str, Any]:
    """Player `i`'s points and money."""
    return {
        "points": int(points[i]),
        "won": money_text(int(money.won[i])),
        "rake": money_text(int(money.rake[i])),
        "net": money_text(int(money.net[i])),
        "stack_end": money_text(int(money.stack_end[i])),
    }


def settlements(pairs: Pairs, seat: Ints, money: Settlement, hand: int) -> list[dict[str, Any]]:
    """The pair settlements of hand `hand` of the step (seats 0-based in `seat`)."""
    return [
        {
            "seat": int(seat[pairs.a[i]] + 1),
            "opponent": int(seat[pairs.b[i]] + 1),
            "points": int(pairs.points[i]),
            "home_run": HOME_RUN_NAMES[int(pairs.home_run[i])],
            "amount": money_text(int(money.amount[i])),
        }
        for i in range(*(int(x) for x in pairs.hand.searchsorted([hand, hand + 1])))
    ]
