"""Faults injected into generated hands, each listed with the check that must report it.

Record faults change what a hand says after it was settled; dealing faults change
what the table did (a player dealt in who should not have been) before settling.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from pipeline.money import cents_of, money_text

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


def spoil(
    rng: np.random.Generator, hand: dict[str, Any], check: str, returning: set[str] | None = None
) -> list[str] | None:
    """Spoil `hand` in place so that `check` reports it; the JSON lines to write, or None
    when this hand cannot carry that fault (no joker to misplace, say). `returning`
    names the players who played an earlier hand at the table."""
    players = hand["players"]
    p = players[int(rng.integers(len(players)))]
    if check == "continuity":
        back = [q for q in players if q["player_id"] in (returning or set())]
        if not back:
            return None
        p = back[int(rng.integers(len(back)))]
    match check:
        case "row_value":
            row = p["rows"][int(rng.integers(len(p["rows"])))]
            row["value"] = (
                "high_card:AKQJ9" if row["value"] != "high_card:AKQJ9" else "high_card:AKQJ8"
            )
        case "joker_as":
            rows = [(q, r) for q in players for r in q["rows"] if r.get("joker_as")]
            if not rows:
                return None
            _, r = rows[int(rng.integers(len(rows)))]
            r["joker_as"] = [hand["boards"][r["board"] - 1][0]] * len(r["joker_as"])
        case "pair_points":
            s = hand["settlements"][int(rng.integers(len(hand["settlements"])))]
            s["points"] += 1
        case "home_run":
            s = hand["settlements"][int(rng.integers(len(hand["settlements"])))]
            s["home_run"] = "seat" if s["home_run"] is None else None
        case "pair_amount":
            s = hand["settlements"][int(rng.integers(len(hand["settlements"])))]
            s["amount"] = _shift(s["amount"], 1)
        case "points":
            p["points"] += 1
        case "won" | "zero_sum":
            p["won"] = _shift(p["won"], 1)
        case "rake":
            p["rake"] = _shift(p["rake"], 1)
        case "rake_total":
            hand["rake_total"] = _shift(hand["rake_total"], 1)
        case "net":
            p["net"] = _shift(p["net"], 1)
        case "stack_end":
            p["stack_end"] = _shift(p["stack_end"], 100)
        case "continuity":
            p["stack_start"] = _shift(p["stack_start"], 100)
            p["stack_end"] = _shift(p["stack_end"], 100)
        case "schema":
            p["seat"] = "three"
        case "card":
            p["top"] = ["1h"]
        case "duplicate_card":
            other = players[(players.index(p) + 1) % len(players)]
            p["top"] = [next(c for c in other["bottom"] + other["middle"] if c != "JK")]
            p["cards"] = p["top"] + p["middle"] + p["bottom"]
        case "joker":
            hand["boards"][1][0] = "JK"
        case "setting":
            p["top"].append(p["middle"].pop())
        case "players":
            players[1]["seat"] = players[0]["seat"]
        case "unreadable":
            text = json.dumps(hand)
            return [text[: len(text) // 2]]  # cut mid-record, as a crashed writer leaves it
        case "duplicate_hand":
            line = json.dumps(hand)
            return [line, line]
        case "hand_no":
            if hand["hand_no"] <= 1:
                return None
            hand["hand_no"] -= 1
    return [json.dumps(hand)]


def copy_hand(hand: dict[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(hand)
