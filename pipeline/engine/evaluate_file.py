"""`handaudit evaluate`: every row of a small hand-history file, shown beside its recorded value.

A reader for people trying the evaluator on a few hands; `verify` is the audit.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.core.cards import format_cards, parse
from pipeline.core.evaluator import value_label, value_text
from pipeline.core.games import TAIWANESE_JOKERS as GAME  # plain Taiwanese: no joker held
from pipeline.core.showdown import showdown
from pipeline.helpers.display import visible
from pipeline.helpers.errors import AuditError


class HandFileError(AuditError):
    """A hand file that cannot be read for `evaluate`."""


@dataclass(frozen=True)
class EvaluationReport:
    text: str
    agree: bool


def _load(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise HandFileError(f"There is no file {path}.")
    hands = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            hands.append(json.loads(line))
        except json.JSONDecodeError as error:
            raise HandFileError(f"{path}:{n} is not a JSON object: {error.msg}.") from None
    return hands


def _codes(
    path: Path, hands: list[dict[str, Any]], players: list[tuple[int, dict[str, Any]]]
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The boards of every hand and the setting of every player, as card codes."""
    try:
        boards = np.stack(
            [
                np.stack(
                    [
                        parse(b, where=[f"{path} hand {h.get('hand_id')} board {i + 1}"] * len(b))
                        for i, b in enumerate(h["boards"])
                    ]
                )
                for h in hands
            ]
        )
        settings = {row: np.stack([parse(p[row]) for _, p in players]) for row in GAME.row_names}
    except (KeyError, ValueError) as error:
        raise HandFileError(f"{path} holds a hand that cannot be evaluated: {error}") from None
    return boards, settings


def evaluate_file(path: Path, limit: int) -> EvaluationReport:
    """Every row of the first hands of `path`, beside what was recorded for it."""
    hands = _load(path)
    players = [(i, p) for i, h in enumerate(hands) for p in h["players"]]
    boards, settings = _codes(path, hands, players)
    started = time.perf_counter()
    result = showdown(GAME, boards, settings, np.array([i for i, _ in players]))
    seconds = time.perf_counter() - started
    texts = value_text(result.value)
    labels = value_label(result.value)
    subs = format_cards(result.joker_as)
    lines: list[str] = []
    checked = differ = 0
    for k, (i, p) in enumerate(players):
        recorded = {(r["board"], r["row"]): r["value"] for r in p.get("rows") or []}
        if i < limit and (k == 0 or players[k - 1][0] != i):
            h = hands[i]
            boards_text = "  ".join(
                f"board {b + 1} {' '.join(x)}" for b, x in enumerate(h["boards"])
            )
            lines.append(
                f"\n{visible(str(h['hand_id']))} ({visible(str(h['variant']))}): {boards_text}"
            )
        for b in range(GAME.boards):
            for r, row in enumerate(GAME.row_names):
                want = recorded.get((b + 1, row))
                checked += want is not None
                differ += want is not None and want != texts[k, b, r]
                if i < limit:
                    mark = (
                        f"  <- recorded {visible(str(want))}"
                        if want not in (None, texts[k, b, r])
                        else ""
                    )
                    joker = [c for c in subs[k, b, r] if c]
                    as_text = f" (JK={','.join(joker)})" if joker else ""
                    lines.append(
                        f"  seat {p['seat']} board {b + 1} {row:<6} "
                        f"{' '.join(p[row]):<12} {texts[k, b, r]}{as_text}"
                        f" - {labels[k, b, r]}{mark}"
                    )
    lines.append(
        f"\n{len(hands)} hands, {result.value.size} rows evaluated in {seconds * 1000:.1f} ms; "
        f"{checked - differ} of {checked} recorded row values agree."
    )
    return EvaluationReport("\n".join(lines).lstrip("\n"), differ == 0)


__all__ = ["EvaluationReport", "evaluate_file"]
