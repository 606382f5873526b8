"""`handaudit explain`: one hand from the audit database, step by step like worked.md."""

from __future__ import annotations

import itertools
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb

from pipeline.display import quoted, visible
from pipeline.errors import AuditError
from pipeline.evaluator import parse_value
from pipeline.games import ROW_NAMES
from pipeline.store import open_audit
from pipeline.stored import LAYOUT
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
            _rows(con, hand_id) if any(hand[10:]) else _settings(con, hand_id),
            _pairs(con, hand_id, any(hand[10:])),
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
        raise ExplainError(f"The hand {quoted(hand_id)} is not in {db}.")
    return "\n".join(
        [f"{visible(hand_id)} was quarantined, not audited:"]
        + [f"  {c}: {visible(m)}" for c, m in quarantined]
    )


def _rate_text(rate: Decimal) -> str:
    """0.10 rather than 0.100000000 or 0.1; 0.045 as it is."""
    exact = rate.normalize()
    places = -int(exact.as_tuple().exponent)
    return str(exact if places > 2 else rate.quantize(Decimal("0.01")))


def _heading(hand_id: str, hand: tuple[Any, ...]) -> str:
    table_id, hand_no, started, variant, point_value, rate, cap = hand[:7]
    boards = "  ".join(f"Board {b + 1}: {cards}" for b, cards in enumerate(hand[10:]) if cards)
    return (
        f"### {visible(hand_id)} ({variant}, {point_value} per point, rake {_rate_text(rate)} "
        f"capped at {cap})\n"
        f"table {visible(table_id)}, hand {hand_no}, {started:%Y-%m-%d %H:%M:%S} UTC, "
        f"from {visible(hand[9])}" + (f"\n\n{boards}" if boards else "")
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


def _settings(con: duckdb.DuckDBPyConnection, hand_id: str) -> str:
    """A game without boards: the streets of an open-face hand, then each seat's
    declaration or Fantasyland, its rows with their values and royalties, and whether the
    setting fouls."""
    found = con.execute(
        'SELECT r.seat, p.stack_start, p.declare, p."natural", p.fantasyland, '
        'p.fantasyland_next, p.fantasyland_cards, p.fouled, r."row", r.cards, r.value, '
        "r.royalty FROM rows r JOIN players p USING (hand_id, seat) "
        "WHERE r.hand_id = ? ORDER BY r.seat",
        [hand_id],
    ).fetchall()
    seats: dict[int, dict[str, Any]] = {}
    for seat, stack, declare, natural, landed, earns, cards_next, fouled, *row in found:
        shown = seats.setdefault(
            seat,
            {
                "stack": stack,
                "declare": _declared(declare, natural, landed, earns, cards_next),
                "fouled": "fouls" if fouled else "",
            },
        )
        name, cards, value, royalty = row
        shown[name] = cards
        shown[f"{name} value"] = value + (f" (+{royalty})" if royalty else "")
    header = ["seat", "stack", "declare or Fantasyland", *ROW_NAMES]
    header += [*(f"{r} value" for r in ROW_NAMES), "foul"]
    keys = ["stack", "declare", *ROW_NAMES, *(f"{r} value" for r in ROW_NAMES), "fouled"]
    lines = [[seat, *(shown.get(k) for k in keys)] for seat, shown in seats.items()]
    numeric = [True, True] + [False] * (len(header) - 2)
    note = "A value's royalty is shown as (+N); a fouled setting earns none."
    table = text_table(header, lines, numeric=numeric) + "\n\n" + note
    return _streets(con, hand_id) + table


def _declared(
    declare: str | None, natural: str | None, landed: bool | None, earns: bool, cards: int
) -> str:
    """What a seat declared (closed Chinese), or its Fantasyland now and next (open-face)."""
    if landed is None:
        return f"natural {natural}" if declare == "natural" else str(declare)
    now = "in Fantasyland" if landed else ""
    later = f"earns Fantasyland ({cards} cards)" if earns else ""
    return ", ".join(x for x in (now, later) if x)


def _streets(con: duckdb.DuckDBPyConnection, hand_id: str) -> str:
    """Street by street: what each seat was dealt, where each card went, what it threw."""
    streets = con.execute(
        "SELECT seat, street, dealt, top, middle, bottom, discard FROM streets "
        "WHERE hand_id = ? ORDER BY seat, street",
        [hand_id],
    ).fetchall()
    if not streets:
        return ""
    header = ["seat", "street", "dealt", *ROW_NAMES, "discard"]
    return text_table(header, streets, numeric=[True, True] + [False] * 5) + "\n\n"


def _pairs(con: duckdb.DuckDBPyConnection, hand_id: str, boards: bool) -> str:
    pairs = con.execute(
        "SELECT seat, opponent, points, home_run, amount FROM settlements "
        "WHERE hand_id = ? ORDER BY seat, opponent",
        [hand_id],
    ).fetchall()
    header = ["seat", "opponent", "points", "home run", "amount"]
    if boards:
        return text_table(header, pairs)
    how = _how_settled(con, hand_id)
    lines = [[*pair, how[(pair[0], pair[1])]] for pair in pairs]
    return text_table([*header, "how"], lines, numeric=[True] * 3 + [False, True, False])


def _how_settled(con: duckdb.DuckDBPyConnection, hand_id: str) -> dict[tuple[int, int], str]:
    """For each pair of a closed Chinese hand, the case of section 4.1 that settled it."""
    seats: dict[int, dict[str, Any]] = {}
    for seat, declare, natural, fouled, row, value, royalty in con.execute(
        'SELECT seat, declare, "natural", fouled, "row", value, royalty FROM rows '
        "JOIN players USING (hand_id, seat) WHERE hand_id = ? ORDER BY seat",
        [hand_id],
    ).fetchall():
        player = seats.setdefault(seat, {"declare": declare, "natural": natural, "foul": fouled})
        player[row] = (int(parse_value([value])[0]), royalty)
    unmade = {
        s
        for (s,) in con.execute(
            "SELECT seat FROM divergences WHERE hand_id = ? AND \"check\" = 'natural'", [hand_id]
        ).fetchall()
    }
    scoring, surrender, fantasyland_rule = con.execute(
        "SELECT scoring, surrender_points, fantasyland_rule FROM hands WHERE hand_id = ?", [hand_id]
    ).fetchone() or ("1-6", 3, None)
    offset = fantasyland_rule is not None  # open-face royalties offset, row or no row
    return {
        (a, b): _one_pair(a, b, seats, unmade, scoring, surrender, offset)
        for a, b in itertools.combinations(sorted(seats), 2)
    }


def _one_pair(
    a: int,
    b: int,
    seats: dict[int, dict[str, Any]],
    unmade: set[int],
    scoring: str,
    give: int,
    offset: bool,
) -> str:
    def natural(seat: int) -> str | None:
        made = seats[seat]["declare"] == "natural" and seat not in unmade
        return str(seats[seat]["natural"]) if made else None

    nat = {s: natural(s) for s in (a, b)}
    surrendered = [s for s in (a, b) if seats[s]["declare"] == "surrender"]
    if any(nat.values()):
        return " against ".join(f"seat {s} natural {n}" for s, n in nat.items() if n)
    if surrendered:
        return (
            "both surrender"
            if len(surrendered) == 2
            else f"seat {surrendered[0]} surrenders ({give})"
        )
    fouls = [s for s in (a, b) if seats[s]["foul"]]
    if len(fouls) == 2:
        return "both foul"
    won = {a: [], b: []}  # type: dict[int, list[str]]
    for row in ROW_NAMES:
        va, vb = seats[a][row][0], seats[b][row][0]
        winner = b if a in fouls else a if b in fouls else a if va > vb else b if vb > va else None
        if winner is not None:
            won[winner].append(row)
    parts = [f"seat {s} fouls" for s in fouls]
    parts += [f"seat {s} wins {', '.join(rows)}" for s, rows in won.items() if rows]
    for s, rows in won.items():
        if len(rows) == 3:
            parts.append(f"scoop ({'6 for the rows' if scoring == '1-6' else 'overall point'})")
        elif len(rows) == 2 and scoring == "2-4":
            parts.append(f"overall point to seat {s}")
    if offset:
        own = {s: sum(seats[s][row][1] or 0 for row in ROW_NAMES) for s in (a, b)}
        parts += [f"royalties {own[a]} against {own[b]}"] if any(own.values()) else []
        return "; ".join(parts) or "every row ties"
    for row in ROW_NAMES:
        (va, ra), (vb, rb) = seats[a][row], seats[b][row]
        paid = [(s, r) for s, r, v, other in ((a, ra, va, vb), (b, rb, vb, va)) if r]
        if len(paid) == 2:  # both qualify: only the stronger row is paid
            paid = [(s, r) for s, r, v, other in ((a, ra, va, vb), (b, rb, vb, va)) if v > other]
        parts += [f"royalty {r} to seat {s} ({row})" for s, r in paid]
    return "; ".join(parts) or "every row ties"


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
    return "\n".join([f"Divergences ({len(found)}):"] + [f"  {c}: {visible(m)}" for c, m in found])
