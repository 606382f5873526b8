"""`handaudit explain`: one hand from the audit database, step by step like worked.md."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb

from pipeline.errors import AuditError


class ExplainError(AuditError):
    """The database or the hand asked for is not there."""


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    cells = [header, *[["" if c is None else str(c) for c in row] for row in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    line = [
        "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |" for r in cells
    ]
    line.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return line


def _rate_text(rate: Decimal) -> str:
    """0.10 rather than 0.100000000 or 0.1; 0.045 as it is."""
    exact = rate.normalize()
    return str(exact if -exact.as_tuple().exponent > 2 else rate.quantize(Decimal("0.01")))  # type: ignore[operator]


def explain(db: Path, hand_id: str) -> str:
    if not db.exists():
        raise ExplainError(f"There is no audit database at {db}; run `handaudit verify` first.")
    try:
        con = duckdb.connect(str(db), read_only=True)
    except duckdb.Error as error:
        raise ExplainError(f"{db} is not an audit database: {error}") from None
    with con:
        hand = con.execute(
            "SELECT table_id, hand_no, started_at, variant, point_value, rake_rate, rake_cap, "
            "board_1, board_2, rake_total, recorded_rake_total, status, source "
            "FROM hands WHERE hand_id = ?",
            [hand_id],
        ).fetchone()
        if hand is None:
            quarantined = con.execute(
                'SELECT "check", message FROM quarantine WHERE hand_id = ?', [hand_id]
            ).fetchall()
            if quarantined:
                return "\n".join(
                    [f"{hand_id} was quarantined, not audited:"]
                    + [f"  {c}: {m}" for c, m in quarantined]
                )
            raise ExplainError(f"The hand {hand_id} is not in {db}.")
        (
            table_id,
            hand_no,
            started,
            variant,
            point_value,
            rate,
            cap,
            board_1,
            board_2,
            rake_total,
            recorded_rake,
            _status,
            source,
        ) = hand
        out = [
            f"### {hand_id} ({variant}, {point_value} per point, rake {_rate_text(rate)} "
            f"capped at {cap})",
            f"table {table_id}, hand {hand_no}, {started:%Y-%m-%d %H:%M:%S} UTC, from {source}",
            "",
            f"Board 1: {board_1}  Board 2: {board_2}",
            "",
        ]
        rows = con.execute(
            'SELECT r.seat, p.stack_start, r.board, r."row", r.cards, r.value, r.joker_as '
            "FROM rows r JOIN players p USING (hand_id, seat) WHERE r.hand_id = ? "
            "ORDER BY r.seat, r.board, CASE r.\"row\" WHEN 'top' THEN 0 WHEN 'middle' THEN 1 "
            "ELSE 2 END",
            [hand_id],
        ).fetchall()
        grid: dict[tuple[int, int], dict[str, str]] = {}
        setting: dict[int, dict[str, str]] = {}
        stacks: dict[int, Any] = {}
        for seat, stack, board, row, cards, value, joker in rows:
            shown = value + (f" (JK={','.join(joker)})" if joker else "")
            grid.setdefault((seat, board), {})[row] = shown
            setting.setdefault(seat, {})[row] = cards
            stacks[seat] = stack
        table_rows = []
        for (seat, board), values in grid.items():
            first = board == 1
            table_rows.append(
                [
                    seat if first else "",
                    stacks[seat] if first else "",
                    *(setting[seat][r] if first else "" for r in ("top", "middle", "bottom")),
                    board,
                    values.get("top"),
                    values.get("middle"),
                    values.get("bottom"),
                ]
            )
        out += _table(
            [
                "seat",
                "stack",
                "top",
                "middle",
                "bottom",
                "board",
                "top value",
                "middle value",
                "bottom value",
            ],
            table_rows,
        )
        pairs = con.execute(
            "SELECT seat, opponent, points, home_run, amount FROM settlements "
            "WHERE hand_id = ? ORDER BY seat, opponent",
            [hand_id],
        ).fetchall()
        out += [
            "",
            *_table(["seat", "opponent", "points", "home run", "amount"], [list(p) for p in pairs]),
        ]
        players = con.execute(
            "SELECT seat, player_id, points, won, rake, net, stack_end, recorded_points, "
            "recorded_won, recorded_rake, recorded_net, recorded_stack_end FROM players "
            "WHERE hand_id = ? ORDER BY seat",
            [hand_id],
        ).fetchall()
        out += [
            "",
            *_table(
                ["seat", "player", "points", "won", "rake", "net", "stack_end"],
                [list(p[:7]) for p in players],
            ),
        ]
        out += ["", f"Rake total: {rake_total} (recorded {recorded_rake})", ""]
        divergences = con.execute(
            'SELECT "check", message FROM divergences WHERE hand_id = ? ORDER BY "check"', [hand_id]
        ).fetchall()
        if divergences:
            out.append(f"Divergences ({len(divergences)}):")
            out += [f"  {check}: {message}" for check, message in divergences]
        else:
            out.append("No divergence: every recorded outcome of this hand is right.")
        return "\n".join(out)
