"""`handaudit explain`: one hand from the audit database, step by step like worked.md."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb

from pipeline.core.games import CODES, ROW_NAMES, VARIANTS
from pipeline.core.rules import Profile
from pipeline.helpers.display import quoted, visible
from pipeline.helpers.errors import AuditError
from pipeline.outputs.text_table import text_table
from pipeline.storage.connection import has_column
from pipeline.storage.store import open_audit
from pipeline.storage.stored import LAYOUT


class ExplainError(AuditError):
    """The hand asked for is not in the audit."""


_BOARDS = ", ".join(f"board_{b + 1}" for b in range(LAYOUT.boards))
_HAND = (
    "SELECT table_id, hand_no, started_at, variant, point_value, rake_rate, rake_cap, "
    f"rake_total, recorded_rake_total, source, {{digest}}, scoring, {_BOARDS} "
    "FROM hands WHERE hand_id = ?"
)


def _digest_column(con: duckdb.DuckDBPyConnection, table: str) -> str:
    """The record digest of `table`'s rows, NULL in an audit written before they were kept."""
    return "record_digest" if has_column(con, table, "record_digest") else "NULL AS record_digest"


def _records(con: duckdb.DuckDBPyConnection, sql: str, *params: object) -> list[dict[str, Any]]:
    """A query's rows, each by column name."""
    result = con.execute(sql, list(params))
    names = [column[0] for column in result.description or ()]
    return [dict(zip(names, row, strict=True)) for row in result.fetchall()]


def explain(db: Path, hand_id: str) -> str:
    """The hand's settings and row values, its pairs, its players and its divergences."""
    with open_audit(db) as con:
        found = _records(con, _HAND.format(digest=_digest_column(con, "hands")), hand_id)
        if not found:
            return _not_audited(con, db, hand_id)
        hand = found[0]
        boards = [hand[f"board_{b + 1}"] for b in range(LAYOUT.boards)]
        sections = [
            _heading(hand_id, hand, boards) + _rules(con, hand_id),
            _rows(con, hand_id) if any(boards) else _settings(con, hand_id),
            _pairs(con, hand_id, hand, any(boards)),
            _players(con, hand_id),
            f"Rake total: {hand['rake_total']} (recorded {hand['recorded_rake_total']})",
            _divergences(con, hand_id),
        ]
    return "\n\n".join(sections)


def _not_audited(con: duckdb.DuckDBPyConnection, db: Path, hand_id: str) -> str:
    digest = _digest_column(con, "quarantine")
    quarantined = con.execute(
        f'SELECT "check", message, {digest} FROM quarantine WHERE hand_id = ?', [hand_id]
    ).fetchall()
    if not quarantined:
        raise ExplainError(f"The hand {quoted(hand_id)} is not in {db}.")
    return "\n".join(
        [f"{visible(hand_id)} was quarantined, not audited:"]
        + [
            f"  {c}: {visible(m)}" + (f"\n    record SHA-256 {d}" if d else "")
            for c, m, d in quarantined
        ]
    )


def _rate_text(rate: Decimal) -> str:
    """0.10 rather than 0.100000000 or 0.1; 0.045 as it is."""
    exact = rate.normalize()
    places = -int(exact.as_tuple().exponent)
    return str(exact if places > 2 else rate.quantize(Decimal("0.01")))


def _heading(hand_id: str, hand: dict[str, Any], boards: list[str | None]) -> str:
    shown = "  ".join(f"Board {b + 1}: {cards}" for b, cards in enumerate(boards) if cards)
    return (
        f"### {visible(hand_id)} ({hand['variant']}, {hand['point_value']} per point, rake "
        f"{_rate_text(hand['rake_rate'])} capped at {hand['rake_cap']})\n"
        f"table {visible(hand['table_id'])}, hand {hand['hand_no']}, "
        f"{hand['started_at']:%Y-%m-%d %H:%M:%S} UTC, from {visible(hand['source'])}"
        + (f"\nrecord SHA-256 {hand['record_digest']}" if hand["record_digest"] else "")
        + (f"\n\n{shown}" if shown else "")
    )


def _rules(con: duckdb.DuckDBPyConnection, hand_id: str) -> str:
    """The house rules the hand was audited under (house-rules.md 3): its profile, and
    the values in which it differs from the contract (`standard`). Empty for an audit
    written before profiles were kept."""
    try:
        found = con.execute(
            'SELECT h.rules, h.variant, r."values" FROM hands h LEFT JOIN rule_profiles r '
            "ON r.name = h.rules AND r.game = h.variant WHERE h.hand_id = ?",
            [hand_id],
        ).fetchall()
    except duckdb.Error:
        return ""
    if not found or found[0][0] is None:
        return ""
    name, game, values = found[0]
    profile = Profile(name, CODES[game], json.loads(values) if values else {})
    if not profile.changes:
        return f"\nrules: {visible(name)} (the contract as written)"
    lines = [f"{key} = {json.dumps(value)}" for key, value in profile.changes.items()]
    return f"\nrules: {visible(name)}, which differs from standard in\n  " + "\n  ".join(lines)


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


def _pairs(con: duckdb.DuckDBPyConnection, hand_id: str, hand: dict[str, Any], boards: bool) -> str:
    """Each pair's settlement as the audit stored it, and, without boards, how the audit
    decided it (`settlements.decided` and the columns beside it), put in words."""
    pairs = _records(
        con,
        'SELECT s.*, a."natural" AS seat_natural, b."natural" AS opponent_natural '
        "FROM settlements s JOIN players a ON a.hand_id = s.hand_id AND a.seat = s.seat "
        "JOIN players b ON b.hand_id = s.hand_id AND b.seat = s.opponent "
        "WHERE s.hand_id = ? ORDER BY s.seat, s.opponent",
        hand_id,
    )
    header = ["seat", "opponent", "points", "home run", "amount"]
    lines = [[p["seat"], p["opponent"], p["points"], p["home_run"], p["amount"]] for p in pairs]
    if boards:
        return text_table(header, lines)
    offset = VARIANTS[hand["variant"]].open_face  # open-face royalties offset, row or no row
    how = [_how(p, hand["scoring"], offset) for p in pairs]
    lines = [[*line, said] for line, said in zip(lines, how, strict=True)]
    return text_table([*header, "how"], lines, numeric=[True] * 3 + [False, True, False])


def _how(pair: dict[str, Any], scoring: str | None, offset: bool) -> str:
    """A pair's stored decision in words."""
    seat, opponent, by = pair["seat"], pair["opponent"], pair["decided_by"]
    named = {"seat": [seat], "opponent": [opponent], "both": [seat, opponent]}.get(by, [])
    decided = pair["decided"]
    if decided == _NATURAL:
        naturals = {seat: pair["seat_natural"], opponent: pair["opponent_natural"]}
        return " against ".join(f"seat {s} natural {naturals[s]}" for s in named)
    if decided in _SAID_ALONE:
        return _SAID_ALONE[decided].format(
            seat=named[0] if named else "", points=abs(pair["points"])
        )
    parts = [f"seat {s} fouls" for s in named] if decided == _FOUL else []
    won = {seat: _row_names(pair["rows_won"]), opponent: _row_names(pair["rows_lost"])}
    parts += [f"seat {s} wins {', '.join(rows)}" for s, rows in won.items() if rows]
    if pair["bonus"]:
        to = seat if pair["bonus"] > 0 else opponent
        if len(won[to]) == len(ROW_NAMES):
            parts.append(f"scoop ({'6 for the rows' if scoring == '1-6' else 'overall point'})")
        else:
            parts.append(f"overall point to seat {to}")
    parts += _royalties(pair, offset)
    return "; ".join(parts) or "every row ties"


def _row_names(mask: int) -> list[str]:
    return [name for k, name in enumerate(ROW_NAMES) if mask >> k & 1]


def _royalties(pair: dict[str, Any], offset: bool) -> list[str]:
    """The royalties the pair counted: each side's total where they offset (open-face),
    each row's where they are paid (closed Chinese)."""
    mine, theirs = pair["royalties"] or [], pair["opponent_royalties"] or []
    if offset:
        return [f"royalties {sum(mine)} against {sum(theirs)}"] if any(mine + theirs) else []
    return [
        f"royalty {paid} to seat {who} ({row})"
        for row, ours, other in zip(ROW_NAMES, mine, theirs, strict=True)
        for who, paid in ((pair["seat"], ours), (pair["opponent"], other))
        if paid
    ]


# The decisions said in one phrase ({seat}: the one who surrendered).
_NATURAL, _FOUL = "natural", "foul"
_SAID_ALONE = {
    "both_surrender": "both surrender",
    "surrender": "seat {seat} surrenders ({points})",
    "both_fouled": "both foul",
}


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
