"""Taiwanese Poker and Taiwanese Jokers tables simulated hand by hand (rules.md): arrivals
and add-ons, the largest group that can cover, the deal with jokers where a table plays
them, settings, dealing faults, the settlement by the project's own engine.

Every table steps together, as arrays over tables and seats; only writing the records
is per hand.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from pipeline.core.cards import format_cards
from pipeline.core.evaluator import value_text
from pipeline.core.games import TAIWANESE_JOKERS as GAME
from pipeline.core.games.pairs import player_points
from pipeline.core.games.taiwanese import pair_points
from pipeline.core.money import money_text
from pipeline.core.showdown import showdown
from pipeline.generate import faults
from pipeline.generate.house import House
from pipeline.generate.records import Step, hand_head, result, seat_head, settlements
from pipeline.generate.shuffle import Dealer
from pipeline.generate.tables import (
    SEATS,
    Tables,
    choose_dealt,
    deal,
    largest_group,
    seat_changes,
    seat_two,
    settings_for,
)

# The faults a Taiwanese hand can carry: what its record says, and what the table did.
FAULTS = faults.RECORD_FAULTS + faults.DEALING_FAULTS
Ints = npt.NDArray[np.int64]
Flags = npt.NDArray[np.bool_]


@dataclass
class _Dealing:
    """What carries over between steps of the simulation besides the tables themselves."""

    idle: Ints  # per table, steps in a row it could not deal
    waiting_fault: Ints  # per table, a dealing fault waiting for the player it needs


@dataclass(frozen=True)
class _Played(Step):
    """One step's Taiwanese hands: boards, settings and row values as text, who sat out."""

    dealt: Flags  # (tables, seats)
    away: Flags
    boards: npt.NDArray[np.object_]  # card texts, (tables, boards, board size)
    setting: dict[str, npt.NDArray[np.object_]]  # card texts per row, (players, size)
    values: npt.NDArray[np.object_]  # value texts, (players, boards, rows)
    substitutes: npt.NDArray[np.object_]  # joker substitutes, (players, boards, rows, 2)
    stack_start: Ints
    house: House  # the rules the tables are dealt by


def simulate_taiwanese(
    seed: int,
    n_tables: int,
    hands_per_table: int,
    joker_share: float,
    fault_rate: float,
    dealer: Dealer | None = None,
    house: House | None = None,
) -> Iterator[tuple[dict[str, Any], str | None]]:
    """Hands in the order they are dealt (tables interleaved), each with the fault it
    carries; `house`: the rules they are dealt by (the contract by default)."""
    rng = np.random.default_rng(seed)
    house = house or House.contract(GAME)
    t = Tables.open(rng, n_tables, joker_share, GAME, house.floor_points, house.cover_points)
    state = _Dealing(np.zeros(n_tables, np.int64), np.full(n_tables, -1, np.int64))
    while (t.hand_no < hands_per_table).any():
        dealt, away, fault = _who_is_dealt(rng, t, state, hands_per_table, fault_rate)
        tables = np.flatnonzero(dealt.any(axis=1))  # the tables able to deal
        if tables.size == 0:
            continue
        played = _play(rng, t, tables, dealt, away, dealer, house)
        for h, table in enumerate(tables.tolist()):
            t.hand_no[table] += 1
            t.clock[table] += int(rng.integers(20, 90))
            yield (
                _record(t, table, played, h),
                (FAULTS[fault[table]] if fault[table] >= 0 else None),
            )
        t.stack[played.table_of, played.seat] = played.money.stack_end
        t.pending_add_on[played.table_of, played.seat] = 0
        t.timed_out[tables] = False  # a table that did not play keeps who must sit out
        t.timed_out[played.table_of, played.seat] = played.timed_out


def _who_is_dealt(
    rng: np.random.Generator, t: Tables, state: _Dealing, hands_per_table: int, fault_rate: float
) -> tuple[Flags, Flags, Ints]:
    """Seats change, then each table deals its largest group that can cover (or, with a
    dealing fault, one player more or fewer); the fault drawn for each table."""
    seat_changes(rng, t)
    floor = t.dealt_floor * t.point_value[:, None]
    away = t.occupied & (rng.random(t.stack.shape) < 0.03)
    candidate = t.occupied & ~t.timed_out & ~away & (t.stack >= floor)
    k = largest_group(GAME, t.stack, candidate, t.point_value, t.cover_points)
    active = (k >= GAME.min_players) & (t.hand_no < hands_per_table)
    state.idle = np.where(active, 0, state.idle + 1)
    stuck = state.idle > 50
    if stuck.any():  # a table nobody can play at: refill it
        seat_two(t, stuck)
        state.idle[stuck] = 0
    dealt = choose_dealt(t.stack, candidate, k) & active[:, None]
    n_tables = len(t.table_id)
    fault = np.where(
        active & (rng.random(n_tables) < fault_rate),
        rng.integers(0, len(FAULTS), n_tables),
        -1,
    )
    # Dealing faults wait at their table until it offers the player they need (a
    # player short of the floor is rare at any one hand).
    waiting = active & (fault < 0) & (state.waiting_fault >= 0)
    fault[waiting] = state.waiting_fault[waiting]
    drawn = fault.copy()
    dealt, fault = _dealing_faults(rng, t, dealt, candidate, fault)
    dealing = drawn >= len(faults.RECORD_FAULTS)
    state.waiting_fault = np.where(
        dealing & (fault < 0), drawn, np.where(dealing, -1, state.waiting_fault)
    )
    return dealt & active[:, None], away, fault


def _play(
    rng: np.random.Generator,
    t: Tables,
    tables: Ints,
    dealt: Flags,
    away: Flags,
    dealer: Dealer | None,
    house: House,
) -> _Played:
    """Deal the cards, set them, and settle every hand by the project's own engine."""
    boards, cards = deal(rng, t.jokers, dealer)
    rows = settings_for(rng, cards)
    table_of, seat = np.nonzero(dealt)
    hand_of = np.searchsorted(tables, table_of)
    setting = {name: row[table_of, seat] for name, row in zip(GAME.row_names, rows, strict=True)}
    shown = showdown(GAME, boards[tables], setting, hand_of)
    pairs = pair_points(shown.value, hand_of, seat + 1, house.hand_rules(len(tables)))
    stack_start, money = t.settle(tables, pairs, hand_of, seat)
    return _Played(
        tables=tables,
        table_of=table_of,
        hand_of=hand_of,
        seat=seat,
        dealt=dealt,
        away=away,
        boards=format_cards(boards),
        setting={name: format_cards(c) for name, c in setting.items()},
        values=value_text(shown.value),
        substitutes=format_cards(shown.joker_as),
        pairs=pairs,
        points=player_points(pairs, len(seat)),
        money=money,
        stack_start=stack_start,
        timed_out=rng.random(len(seat)) < 0.03,
        house=house,
    )


def _dealing_faults(
    rng: np.random.Generator, t: Tables, dealt: np.ndarray, candidate: np.ndarray, fault: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Deal in (or leave out) one player at the tables drawn for a dealing fault."""
    dealt = dealt.copy()
    fault = fault.copy()
    floor = t.dealt_floor * t.point_value
    for table in np.flatnonzero(fault >= len(faults.RECORD_FAULTS)):
        kind = FAULTS[fault[table]]
        n = int(dealt[table].sum())
        others = t.occupied[table] & ~dealt[table]
        need = t.cover_points * n * t.point_value[table]  # to cover one more opponent
        if kind == "cover":
            pick = (
                others
                & ~t.timed_out[table]
                & (t.stack[table] < need)
                & (t.stack[table] >= floor[table])
                & (t.stack[table] > 0)
            )
        elif kind == "floor_60":
            pick = others & (t.stack[table] < floor[table]) & (t.stack[table] > 0)
        elif kind == "timeout_sit_out":
            pick = others & t.timed_out[table] & (t.stack[table] >= need)
        else:  # largest_group: leave out one who could have played
            pick = dealt[table] & (n >= 3)
        seats = np.flatnonzero(pick)
        if seats.size == 0 or (kind != "largest_group" and n >= SEATS):
            fault[table] = -1
            continue
        chosen = seats[int(rng.integers(seats.size))]
        dealt[table, chosen] = kind != "largest_group"
        if kind == "largest_group":
            candidate[table, chosen] = True
    return dealt, fault


def _record(t: Tables, table: int, played: _Played, h: int) -> dict[str, Any]:
    """The hand record of hand `h` of a step, dealt at `table`, as hand-history.md has it."""
    players = played.players(h)
    variant = "taiwanese_jokers" if t.jokers[table] else "taiwanese"
    record = (
        hand_head(t, table, variant)
        | played.house.record()
        | {
            "boards": played.boards[table][: played.house.boards].tolist(),
            "players": [_player(t, table, played, i) for i in players],
        }
    )
    sitting = _sitting_out(t, table, played)
    if sitting:
        record["sitting_out"] = sitting
    record["settlements"] = settlements(played.pairs, played.seat, played.money, h)
    record["rake_total"] = money_text(int(played.money.rake[players.start : players.stop].sum()))
    return record


def _player(t: Tables, table: int, played: _Played, i: int) -> dict[str, Any]:
    setting = {name: cards[i].tolist() for name, cards in played.setting.items()}
    rows = [
        {
            "board": b + 1,
            "row": name,
            "value": str(played.values[i, b, r]),
            "joker_as": [c for c in played.substitutes[i, b, r].tolist() if c] or None,
        }
        for b in range(played.house.boards)
        for r, name in enumerate(GAME.row_names)
    ]
    player = seat_head(t, table, int(played.seat[i]), int(played.stack_start[i]))
    player |= {"cards": [c for row in setting.values() for c in row], **setting, "rows": rows}
    player |= result(played.points, played.money, i)
    if played.timed_out[i]:
        player["timed_out"] = True
    return player


def _sitting_out(t: Tables, table: int, played: _Played) -> list[dict[str, Any]]:
    return [
        {
            "seat": s + 1,
            "player_id": t.player_id(table, s),
            "stack": money_text(int(t.stack[table, s])),
            "reason": "timeout"
            if t.timed_out[table, s]
            else "away"
            if played.away[table, s]
            else "short",
        }
        for s in np.flatnonzero(t.occupied[table] & ~played.dealt[table]).tolist()
    ]
