"""`handaudit generate`: tables simulated hand by hand, written as they go, faults listed."""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.cards import format_cards
from pipeline.evaluator import value_text
from pipeline.games import HOME_RUN_NAMES, TAIWANESE_JOKERS
from pipeline.games import TAIWANESE_JOKERS as GAME
from pipeline.generate import faults
from pipeline.generate.tables import (
    SEATS,
    Tables,
    choose_dealt,
    deal,
    largest_group,
    seat_changes,
    settings_for,
)
from pipeline.money import money_text, settle
from pipeline.progress import Progress
from pipeline.scoring import player_points, score_pairs
from pipeline.showdown import showdown

FORMATS = ("jsonl", "json", "parquet")
_ALL_FAULTS = faults.RECORD_FAULTS + faults.DEALING_FAULTS


@dataclass(frozen=True)
class Generated:
    hands: int
    lines: int
    faults: int
    path: Path
    faults_path: Path | None


def simulate(
    seed: int, n_tables: int, hands_per_table: int, joker_share: float, fault_rate: float
) -> Iterator[tuple[dict[str, Any], str | None]]:
    """Hands in the order they are dealt (tables interleaved), each with the fault it carries."""
    rng = np.random.default_rng(seed)
    t = Tables.open(rng, n_tables, joker_share)
    variant = TAIWANESE_JOKERS
    idle = np.zeros(n_tables, np.int64)
    waiting_fault = np.full(n_tables, -1, np.int64)
    while (t.hand_no < hands_per_table).any():
        seat_changes(rng, t)
        floor = GAME.floor_points * t.point_value[:, None]
        away = t.occupied & (rng.random(t.stack.shape) < 0.03)
        candidate = t.occupied & ~t.timed_out & ~away & (t.stack >= floor)
        k = largest_group(t.stack, candidate, t.point_value)
        active = (k >= 2) & (t.hand_no < hands_per_table)
        idle = np.where(active, 0, idle + 1)
        if (idle > 50).any():  # a table nobody can play at: refill it
            stuck = idle > 50
            t.occupied[stuck, :2] = True
            t.stack[stuck, :2] = np.maximum(t.stack[stuck, :2], 100 * t.point_value[stuck, None])
            idle[stuck] = 0
        dealt = choose_dealt(t.stack, candidate, k) & active[:, None]
        fault = np.where(
            active & (rng.random(n_tables) < fault_rate),
            rng.integers(0, len(_ALL_FAULTS), n_tables),
            -1,
        )
        # Dealing faults wait at their table until it offers the player they need (a
        # player short of the floor is rare at any one hand).
        waiting = active & (fault < 0) & (waiting_fault >= 0)
        fault[waiting] = waiting_fault[waiting]
        drawn = fault.copy()
        dealt, fault = _dealing_faults(rng, t, dealt, candidate, fault)
        dealing = drawn >= len(faults.RECORD_FAULTS)
        waiting_fault = np.where(dealing & (fault < 0), drawn, np.where(dealing, -1, waiting_fault))
        tables = np.flatnonzero(active)
        if tables.size == 0:
            continue
        boards, cards = deal(rng, t.jokers)
        top, middle, bottom = settings_for(rng, cards)
        table_of, seat = np.nonzero(dealt)
        hand_of = np.searchsorted(tables, table_of)
        setting = {
            "top": top[table_of, seat],
            "middle": middle[table_of, seat],
            "bottom": bottom[table_of, seat],
        }
        shown = showdown(variant, boards[tables], setting, hand_of)
        pairs = score_pairs(variant, shown.value, hand_of, seat + 1)
        points = player_points(pairs, len(seat))
        stack_start = t.stack[table_of, seat]
        money = settle(
            pairs,
            hand_of,
            seat + 1,
            stack_start,
            t.point_value[tables],
            t.rake_rate[tables],
            t.rake_cap[tables],
        )
        timed_out = rng.random(len(seat)) < 0.03
        texts = value_text(shown.value)
        subs = format_cards(shown.joker_as)
        board_text = format_cards(boards)
        card_text = {name: format_cards(c) for name, c in setting.items()}
        first_player = np.searchsorted(hand_of, np.arange(len(tables)))
        first_pair = np.searchsorted(pairs.hand, np.arange(len(tables)))
        for h, table in enumerate(tables.tolist()):
            t.hand_no[table] += 1
            t.clock[table] += int(rng.integers(20, 90))
            lo = first_player[h]
            hi = first_player[h + 1] if h + 1 < len(tables) else len(seat)
            record = _record(
                t,
                table,
                board_text[table],
                range(lo, hi),
                seat,
                card_text,
                texts,
                subs,
                points,
                money,
                stack_start,
                timed_out,
                dealt,
                away,
            )
            plo = first_pair[h]
            phi = first_pair[h + 1] if h + 1 < len(tables) else len(pairs)
            record["settlements"] = [
                {
                    "seat": int(seat[pairs.a[i]] + 1),
                    "opponent": int(seat[pairs.b[i]] + 1),
                    "points": int(pairs.points[i]),
                    "home_run": HOME_RUN_NAMES[int(pairs.home_run[i])],
                    "amount": money_text(int(money.amount[i])),
                }
                for i in range(plo, phi)
            ]
            record["rake_total"] = money_text(int(money.rake[lo:hi].sum()))
            yield record, (_ALL_FAULTS[fault[table]] if fault[table] >= 0 else None)
        t.stack[table_of, seat] = money.stack_end
        t.pending_add_on[table_of, seat] = 0
        t.timed_out[tables] = False  # a table that did not play keeps who must sit out
        t.timed_out[table_of, seat] = timed_out


def _dealing_faults(
    rng: np.random.Generator, t: Tables, dealt: np.ndarray, candidate: np.ndarray, fault: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Deal in (or leave out) one player at the tables drawn for a dealing fault."""
    dealt = dealt.copy()
    fault = fault.copy()
    floor = GAME.floor_points * t.point_value
    for table in np.flatnonzero(fault >= len(faults.RECORD_FAULTS)):
        kind = _ALL_FAULTS[fault[table]]
        n = int(dealt[table].sum())
        others = t.occupied[table] & ~dealt[table]
        need = GAME.cover_points * n * t.point_value[table]  # to cover one more opponent
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


def _record(
    t: Tables,
    table: int,
    boards: np.ndarray,
    players: range,
    seat: np.ndarray,
    cards: dict[str, np.ndarray],
    texts: np.ndarray,
    subs: np.ndarray,
    points: np.ndarray,
    money: Any,
    stack_start: np.ndarray,
    timed_out: np.ndarray,
    dealt: np.ndarray,
    away: np.ndarray,
) -> dict[str, Any]:
    table_id = t.table_id[table]
    no = int(t.hand_no[table])
    record: dict[str, Any] = {
        "hand_id": f"{table_id}-{no:06d}",
        "table_id": table_id,
        "hand_no": no,
        "started_at": datetime.fromtimestamp(int(t.clock[table]), UTC).strftime(
            "%Y-%m-%dT%H:%M:%SZ"
        ),
        "variant": "taiwanese_jokers" if t.jokers[table] else "taiwanese",
        "currency": "USD",
        "point_value": money_text(int(t.point_value[table])),
        "rake_rate": f"{t.rake_rate[table] / 10**9:.2f}",
        "rake_cap": money_text(int(t.rake_cap[table])),
        "boards": boards.tolist(),
        "players": [],
    }
    for i in players:
        s = int(seat[i])
        setting = {
            name: [c for c in cards[name][i].tolist()] for name in ("top", "middle", "bottom")
        }
        rows = [
            {
                "board": b + 1,
                "row": name,
                "value": str(texts[i, b, r]),
                "joker_as": [c for c in subs[i, b, r].tolist() if c] or None,
            }
            for b in range(2)
            for r, name in enumerate(("top", "middle", "bottom"))
        ]
        player: dict[str, Any] = {
            "seat": s + 1,
            "player_id": t.player_id(table, s),
            "stack_start": money_text(int(stack_start[i])),
        }
        if t.pending_add_on[table, s]:
            player["add_on"] = money_text(int(t.pending_add_on[table, s]))
        player.update(
            {
                "cards": setting["top"] + setting["middle"] + setting["bottom"],
                **setting,
                "rows": rows,
                "points": int(points[i]),
                "won": money_text(int(money.won[i])),
                "rake": money_text(int(money.rake[i])),
                "net": money_text(int(money.net[i])),
                "stack_end": money_text(int(money.stack_end[i])),
            }
        )
        if timed_out[i]:
            player["timed_out"] = True
        record["players"].append(player)
    sitting = [
        {
            "seat": s + 1,
            "player_id": t.player_id(table, s),
            "stack": money_text(int(t.stack[table, s])),
            "reason": "timeout" if t.timed_out[table, s] else "away" if away[table, s] else "short",
        }
        for s in np.flatnonzero(t.occupied[table] & ~dealt[table]).tolist()
    ]
    if sitting:
        record["sitting_out"] = sitting
    return record


def generate(
    out: Path,
    *,
    tables: int,
    hands: int,
    seed: int = 1,
    jokers: float = 0.5,
    fault_rate: float = 0.0,
    fmt: str = "jsonl",
    progress: Progress | None = None,
) -> Generated:
    """Write `tables` x `hands` hands to `out` (and out's faults.json when faults are asked)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed + 1)
    listed: list[faults.Fault] = []
    played: set[str] = set()  # table and player of every hand so far, for continuity faults
    # A wrong recorded stack echoes at the player's next hand at the table, however late.
    awaiting: dict[str, faults.Fault] = {}
    lines = 0
    written = 0
    sink = _Sink(out, fmt)
    # Typed Parquet cannot hold a cut line or a seat written as a word.
    unstorable = {"unreadable", "schema"} if fmt == "parquet" else set()
    try:
        for hand, fault in simulate(seed, tables, hands, jokers, fault_rate):
            to_write: list[str] | None = None
            if fault in unstorable:
                fault = None
            if fault is not None:
                spoiled = faults.copy_hand(hand)
                returning = {
                    p["player_id"]
                    for p in hand["players"]
                    if hand["table_id"] + p["player_id"] in played
                }
                to_write = (
                    faults.spoil(rng, spoiled, fault, returning)
                    if fault in faults.RECORD_FAULTS
                    else None
                )
                if fault in faults.DEALING_FAULTS:
                    to_write = [json.dumps(hand)]
                if to_write is not None:
                    before = fault in ("hand_no", "continuity")
                    listed.append(faults.Fault(hand["hand_id"], fault, faults.echoes(hand, before)))
                    for p in hand["players"]:
                        awaiting[hand["table_id"] + p["player_id"]] = listed[-1]
            for line in to_write or [json.dumps(hand)]:
                sink.write(line)
                lines += 1
            for p in hand["players"]:
                key = hand["table_id"] + p["player_id"]
                played.add(key)
                echoed = awaiting.get(key)
                if echoed is not None and echoed.hand_id != hand["hand_id"]:
                    if hand["hand_id"] not in echoed.echo_hand_ids:
                        echoed.echo_hand_ids.append(hand["hand_id"])
                    del awaiting[key]
            written += 1
            if progress:
                progress.update(read=written, verified=written, file=str(out))
    finally:
        sink.close()
        if progress:
            progress.close()
    faults_path = None
    if fault_rate > 0:
        faults_path = out.parent / "faults.json"
        faults_path.write_text(json.dumps([f.as_json() for f in listed], indent=1) + "\n")
    return Generated(written, lines, len(listed), out, faults_path)


class _Sink:
    """Writes records as they come: JSON Lines, one JSON array, or Parquet row groups."""

    def __init__(self, out: Path, fmt: str) -> None:
        if fmt not in FORMATS:
            raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
        self.fmt = fmt
        self.out = out
        self.pending: list[str] = []
        self.writer: pq.ParquetWriter | None = None
        self.file: Any = None
        if fmt != "parquet":
            raw: Any = (
                gzip.GzipFile(out, "wb", mtime=0) if out.name.endswith(".gz") else out.open("wb")
            )  # mtime 0: the same seed gives the same bytes
            self.file = io.TextIOWrapper(raw, encoding="utf-8")
        self.first = True
        if fmt == "json" and self.file:
            self.file.write("[\n")

    def write(self, line: str) -> None:
        if self.fmt == "jsonl":
            self.file.write(line + "\n")
        elif self.fmt == "json":
            self.file.write(("" if self.first else ",\n") + line)
            self.first = False
        else:
            self.pending.append(line)
            if len(self.pending) >= 8192:
                self._flush()

    def _flush(self) -> None:
        from pipeline.ingest.decode import decode_lines
        from pipeline.ingest.sources import LinesBlock

        if not self.pending:
            return
        block = LinesBlock(
            str(self.out), list(range(len(self.pending))), [p.encode() for p in self.pending]
        )
        table = pa.Table.from_batches(decode_lines(block).table.to_batches())
        if self.writer is None:
            self.writer = pq.ParquetWriter(self.out, table.schema)
        self.writer.write_table(table)
        self.pending = []

    def close(self) -> None:
        if self.fmt == "parquet":
            self._flush()
            if self.writer:
                self.writer.close()
        elif self.file:
            if self.fmt == "json":
                self.file.write("\n]\n")
            self.file.close()
