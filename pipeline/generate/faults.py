"""Faults injected into generated hands, each listed with the check that must report it.

Record faults change what a hand says after it was settled; dealing faults change
what the table did (a player dealt in who should not have been) before settling.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from pipeline.core.money import cents_of, money_text

RECORD_FAULTS = (
    "unreadable",
    "row_value",
    "joker_as",
    "pair_points",
    "home_run",
    "pair_amount",
    "points",
    "won",
    "rake",
    "rake_total",
    "net",
    "stack_end",
    "zero_sum",
    "continuity",
    "schema",
    "card",
    "duplicate_card",
    "joker",
    "setting",
    "players",
    "duplicate_hand",
    "hand_no",
)
DEALING_FAULTS = ("cover", "largest_group", "floor_60", "timeout_sit_out")
# A closed Chinese hand carries the record faults of a game without jokers, and its own.
FAMILY_FAULTS = (*(f for f in RECORD_FAULTS if f != "joker_as"), "foul", "royalty", "natural")
ECHO_HANDS = 5  # later hands of the table where a fault may legitimately echo


@dataclass(frozen=True)
class Fault:
    hand_id: str
    check: str
    echo_hand_ids: list[str]

    def as_json(self) -> dict[str, Any]:
        return {"hand_id": self.hand_id, "check": self.check, "echo_hand_ids": self.echo_hand_ids}


def echoes(hand: dict[str, Any], before: bool = False) -> list[str]:
    table, no = hand["table_id"], hand["hand_no"]
    later = [f"{table}-{n:06d}" for n in range(no + 1, no + 1 + ECHO_HANDS)]
    return ([f"{table}-{no - 1:06d}"] if before and no > 1 else []) + later


def _shift(text: str, cents: int) -> str:
    return money_text(cents_of(text) + cents)


Hand = dict[str, Any]
Rng = np.random.Generator


def _one(rng: Rng, items: list[Any]) -> Any:
    return items[int(rng.integers(len(items)))]


def _row_value(rng: Rng, hand: Hand, p: Hand) -> bool:
    row = _one(rng, p["rows"])
    row["value"] = "high_card:AKQJ9" if row["value"] != "high_card:AKQJ9" else "high_card:AKQJ8"
    return True


def _joker_as(rng: Rng, hand: Hand, p: Hand) -> bool:
    rows = [r for q in hand["players"] for r in q["rows"] if r.get("joker_as")]
    if not rows:
        return False  # no joker to misplace
    r = _one(rng, rows)
    r["joker_as"] = [hand["boards"][r["board"] - 1][0]] * len(r["joker_as"])
    return True


def _settlement(change: Callable[[Hand], None]) -> Callable[[Rng, Hand, Hand], bool]:
    def spoil(rng: Rng, hand: Hand, p: Hand) -> bool:
        change(_one(rng, hand["settlements"]))
        return True

    return spoil


def _field(where: str, change: Callable[[Any], Any]) -> Callable[[Rng, Hand, Hand], bool]:
    """Change one field of the chosen player (`where` "player") or of the hand."""

    def spoil(rng: Rng, hand: Hand, p: Hand) -> bool:
        target = p if where == "player" else hand
        for name, value in change(target).items():
            target[name] = value
        return True

    return spoil


def _duplicate_card(rng: Rng, hand: Hand, p: Hand) -> bool:
    players = hand["players"]
    other = players[(players.index(p) + 1) % len(players)]
    p["top"] = [next(c for c in other["bottom"] + other["middle"] if c != "JK")]
    p["cards"] = p["top"] + p["middle"] + p["bottom"]
    return True


def _hand_no(rng: Rng, hand: Hand, p: Hand) -> bool:
    if hand["hand_no"] <= 1:
        return False
    hand["hand_no"] -= 1
    return True


def _continuity(rng: Rng, hand: Hand, p: Hand) -> bool:
    p["stack_start"] = _shift(p["stack_start"], 100)
    p["stack_end"] = _shift(p["stack_end"], 100)
    return True


def _joker(rng: Rng, hand: Hand, p: Hand) -> bool:
    """A joker on a board, or in a hand of a game without jokers or boards."""
    if hand.get("boards"):
        hand["boards"][-1][0] = "JK"
    else:
        p["top"][0] = "JK"
    return True


def _royalty(rng: Rng, hand: Hand, p: Hand) -> bool:
    row = _one(rng, p["rows"])
    row["royalty"] += 1
    return True


def _natural(rng: Rng, hand: Hand, p: Hand) -> bool:
    """A natural declared that the cards do not make (a pure dragon is all but never dealt)."""
    if p.get("declare") == "natural" or len({c[1] for c in p["cards"]}) == 1:
        return False
    p["declare"], p["natural"] = "natural", "pure_dragon"
    return True


def _surrender(rng: Rng, hand: Hand, p: Hand) -> bool:
    """A surrender at a table whose house rules allow none (house-rules.md 2.2): the
    record keeps what the player's setting was paid."""
    if p.get("declare"):
        return False
    p["declare"] = "surrender"
    return True


def _setting(rng: Rng, hand: Hand, p: Hand) -> bool:
    p["top"].append(p["middle"].pop())
    return True


def _players(rng: Rng, hand: Hand, p: Hand) -> bool:
    hand["players"][1]["seat"] = hand["players"][0]["seat"]
    return True


def _placement(rng: Rng, hand: Hand, p: Hand) -> bool:
    """A card of a later street placed in another row than the final rows hold it in."""
    later = [s for s in p.get("streets") or [] if any(s.get(r) for r in _ROWS)][1:]
    if not later:
        return False
    street = _one(rng, later)
    row = next(r for r in _ROWS if street.get(r))
    other = _ROWS[(_ROWS.index(row) + 1) % 3]
    street.setdefault(other, []).append(street[row].pop())
    return True


_ROWS = ("top", "middle", "bottom")


# Each record fault: how it spoils a settled hand (False when the hand cannot carry it).
_SPOILERS: dict[str, Callable[[Rng, Hand, Hand], bool]] = {
    "row_value": _row_value,
    "joker_as": _joker_as,
    "pair_points": _settlement(lambda s: s.update(points=s["points"] + 1)),
    "home_run": _settlement(lambda s: s.update(home_run="seat" if s["home_run"] is None else None)),
    "pair_amount": _settlement(lambda s: s.update(amount=_shift(s["amount"], 1))),
    "points": _field("player", lambda p: {"points": p["points"] + 1}),
    "won": _field("player", lambda p: {"won": _shift(p["won"], 1)}),
    "zero_sum": _field("player", lambda p: {"won": _shift(p["won"], 1)}),
    "rake": _field("player", lambda p: {"rake": _shift(p["rake"], 1)}),
    "rake_total": _field("hand", lambda h: {"rake_total": _shift(h["rake_total"], 1)}),
    "net": _field("player", lambda p: {"net": _shift(p["net"], 1)}),
    "stack_end": _field("player", lambda p: {"stack_end": _shift(p["stack_end"], 100)}),
    "continuity": _continuity,
    "schema": _field("player", lambda p: {"seat": "three"}),
    "card": _field("player", lambda p: {"top": ["1h"]}),
    "duplicate_card": _duplicate_card,
    "joker": _joker,
    "royalty": _royalty,
    "foul": _field("player", lambda p: {"fouled": not p["fouled"]}),
    "natural": _natural,
    "surrender": _surrender,
    "placement": _placement,
    "fantasyland": _field("player", lambda p: {"fantasyland_next": not p["fantasyland_next"]}),
    "setting": _setting,
    "players": _players,
    "hand_no": _hand_no,
}


def spoil(rng: Rng, hand: Hand, check: str, returning: set[str] | None = None) -> list[str] | None:
    """Spoil `hand` in place so that `check` reports it; the JSON lines to write, or None
    when this hand cannot carry that fault (no joker to misplace, say). `returning`
    names the players who played an earlier hand at the table."""
    players = hand["players"]
    p = _one(rng, players)
    if check == "continuity":
        back = [q for q in players if q["player_id"] in (returning or set())]
        if not back:
            return None
        p = _one(rng, back)
    if check == "unreadable":
        text = json.dumps(hand)
        return [text[: len(text) // 2]]  # cut mid-record, as a crashed writer leaves it
    if check == "duplicate_hand":
        return [json.dumps(hand)] * 2
    return [json.dumps(hand)] if _SPOILERS[check](rng, hand, p) else None


def copy_hand(hand: dict[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(hand)


class FaultBook:
    """The faults written so far, and the later hands where each may echo."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self.listed: list[Fault] = []
        self.played: set[str] = set()  # table and player of every hand so far
        # A wrong recorded stack echoes at the player's next hand at the table, however late.
        self.awaiting: dict[str, Fault] = {}

    def lines(self, hand: dict[str, Any], fault: str | None) -> list[str]:
        """The lines to write for `hand`: spoiled, and listed, when it can carry `fault`."""
        to_write: list[str] | None = None
        if fault is not None and fault not in DEALING_FAULTS:
            returning = {
                p["player_id"]
                for p in hand["players"]
                if hand["table_id"] + p["player_id"] in self.played
            }
            to_write = spoil(self.rng, copy_hand(hand), fault, returning)
        elif fault in DEALING_FAULTS:
            to_write = [json.dumps(hand)]  # what the table did is the fault
        if fault is None or to_write is None:
            return [json.dumps(hand)]
        before = fault in ("hand_no", "continuity")
        self.listed.append(Fault(hand["hand_id"], fault, echoes(hand, before)))
        for p in hand["players"]:
            self.awaiting[hand["table_id"] + p["player_id"]] = self.listed[-1]
        return to_write

    def written(self, hand: dict[str, Any]) -> None:
        """Note the hand's players; a fault awaiting one of them echoes here."""
        for p in hand["players"]:
            key = hand["table_id"] + p["player_id"]
            self.played.add(key)
            echoed = self.awaiting.get(key)
            if echoed is not None and echoed.hand_id != hand["hand_id"]:
                if hand["hand_id"] not in echoed.echo_hand_ids:
                    echoed.echo_hand_ids.append(hand["hand_id"])
                del self.awaiting[key]
