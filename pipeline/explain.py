"""`handaudit explain`: one hand from the audit database, step by step like worked.md."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb

from pipeline.errors import AuditError
from pipeline.games import ROW_NAMES
from pipeline.store import LAYOUT, open_audit
from pipeline.text_table import text_table


class ExplainError(AuditError):
    """The hand asked for is not in the audit."""


_BOARDS = ", ".join(f"board_{b + 1}" for b in range(LAYOUT.boards))
_HAND = (
    "SELECT table_id, hand_no, started_at, variant, point_value, rake_rate, rake_cap, "
    f"rake_total, recorded_rake_total, source, {_BOARDS} FROM hands WHERE hand_id = ?"
)


def explain(db: Path, hand_id: str) -> str:
    """The hand's settings and row values, its pairs, its players and its divergences."""
    with open_audit(db) as con:
        hand = con.execute(_HAND, [hand_id]).fetchone()
        if hand is None:
            return _not_audited(con, db, hand_id)
        sections = [
            _heading(hand_id, hand),
            _rows(con, hand_id),
            _pairs(con, hand_id),
            _players(con, hand_id),
            f"Rake total: {hand[7]} (recorded {hand[8]})",
            _divergences(con, hand_id),
        ]
    return "\n\n".join(sections)


def _not_audited(con: duckdb.DuckDBPyConnection, db: Path, hand_id: str) -> str:
    quarantined = con.execute(
        'SELECT "check", message FROM quarantine WHERE hand_id = ?', [hand_id]
    ).fetchall()
    if not quarantined:
        raise ExplainError(f"The hand {hand_id} is not in {db}.")
    return "\n".join(
        [f"{hand_id} was quarantined, not audited:"] + [f"  {c}: {m}" for c, m in quarantined]
    )


def _rate_text(rate: Decimal) -> str:
    """0.10 rather than 0.100000000 or 0.1; 0.045 as it is."""
    exact = rate.normalize()
    places = -int(exact.as_tuple().exponent)
    return str(exact if places > 2 else rate.quantize(Decimal("0.01")))


def _heading(hand_id: str, hand: tuple[Any, ...]) -> str:
    table_id, hand_no, started, variant, point_value, rate, cap = hand[:7]
    boards = "  ".join(f"Board {b + 1}: {cards}" for b, cards in enumerate(hand[10:]))
    return (
        f"### {hand_id} ({variant}, {point_value} per point, rake {_rate_text(rate)} "
        f"capped at {cap})\n"
        f"table {table_id}, hand {hand_no}, {started:%Y-%m-%d %H:%M:%S} UTC, from {hand[9]}\n\n"
        f"{boards}"
    )


def _rows(con: duckdb.DuckDBPyConnection, hand_id: str) -> str:
    """Each seat's setting once, then its value of every row on each board."""
    found = con.execute(
        'SELECT r.seat, p.stack_start, r.board, r."row", r.cards, r.value, r.joker_as '
        "FROM rows r JOIN players p USING (hand_id, seat) WHERE r.hand_id = ? "
        "ORDER BY r.seat, r.board",
        [hand_id],
    ).fetchall()
    values: dict[tuple[int, int], dict[str, str]] = {}
    setting: dict[int, dict[str, str]] = {}
    stacks: dict[int, Any] = {}
    for seat, stack, board, row, cards, value, joker in found:
        shown = value + (f" (JK={','.join(joker)})" if joker else "")
        values.setdefault((seat, board), {})[row] = shown
        setting.setdefault(seat, {})[row] = cards
        stacks[seat] = stack
    lines = []
    for (seat, board), of_board in values.items():
        first = board == min(b for s, b in values if s == seat)
        held = [setting[seat][r] if first else "" for r in ROW_NAMES]
        lines.append(
            [seat if first else "", stacks[seat] if first else "", *held, board]
            + [of_board.get(r) for r in ROW_NAMES]
        )
    header = ["seat", "stack", *ROW_NAMES, "board", *(f"{r} value" for r in ROW_NAMES)]
    return text_table(header, lines, numeric=[True, True] + [False] * 3 + [True] + [False] * 3)


def _pairs(con: duckdb.DuckDBPyConnection, hand_id: str) -> str:
    pairs = con.execute(
        "SELECT seat, opponent, points, home_run, amount FROM settlements "
        "WHERE hand_id = ? ORDER BY seat, opponent",
        [hand_id],
    ).fetchall()
    return text_table(["seat", "opponent", "points", "home run", "amount"], pairs)


def _players(con: duckdb.DuckDBPyConnection, hand_id: str) -> str:
    players = con.execute(
        "SELECT seat, player_id, points, won, rake, net, stack_end FROM players "
        "WHERE hand_id = ? ORDER BY seat",
        [hand_id],
    ).fetchall()
    return text_table(["seat", "player", "points", "won", "rake", "net", "stack_end"], players)


def _divergences(con: duckdb.DuckDBPyConnection, hand_id: str) -> str:
    found = con.execute(
        'SELECT "check", message FROM divergences WHERE hand_id = ? ORDER BY "check"', [hand_id]
    ).fetchall()
    if not found:
        return "No divergence: every recorded outcome of this hand is right."
    return "\n".join([f"Divergences ({len(found)}):"] + [f"  {c}: {m}" for c, m in found])
