"""`handaudit generate`: tables simulated hand by hand, written as they go, faults listed."""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow.json as pj
import pyarrow.parquet as pq

from pipeline.cards import format_cards
from pipeline.errors import AuditError
from pipeline.evaluator import value_text
from pipeline.games import TAIWANESE_JOKERS, VARIANTS, Family
from pipeline.games import TAIWANESE_JOKERS as GAME
from pipeline.games.chinese import SCORING
from pipeline.games.pairs import Pairs, player_points
from pipeline.games.taiwanese import pair_points
from pipeline.generate import faults
from pipeline.generate.chinese import simulate_chinese
from pipeline.generate.open_face import simulate_open_face
from pipeline.generate.records import hand_head, of_hand, result, seat_head, settlements
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
from pipeline.hand_history import arrow_schema, text_schema
from pipeline.money import Settlement, money_text
from pipeline.progress import Progress
from pipeline.showdown import showdown

FORMATS = ("jsonl", "json", "parquet")
_ALL_FAULTS = faults.RECORD_FAULTS + faults.DEALING_FAULTS
Ints = npt.NDArray[np.int64]
Flags = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class Generated:
    hands: int
    lines: int
    faults: int
    path: Path
    faults_path: Path | None


@dataclass
class _Dealing:
    """What carries over between steps of the simulation besides the tables themselves."""

    idle: Ints  # per table, steps in a row it could not deal
    waiting_fault: Ints  # per table, a dealing fault waiting for the player it needs


@dataclass(frozen=True)
class _Played:
    """The hands of one step, settled: per player (grouped by hand) and per pair."""

    tables: Ints  # the tables that dealt, one hand each
    table_of: Ints
    hand_of: Ints  # index into tables
    seat: Ints  # 0-based
    dealt: Flags  # (tables, seats)
    away: Flags
    boards: npt.NDArray[np.object_]  # card texts, (tables, boards, board size)
    setting: dict[str, npt.NDArray[np.object_]]  # card texts per row, (players, size)
    values: npt.NDArray[np.object_]  # value texts, (players, boards, rows)
    substitutes: npt.NDArray[np.object_]  # joker substitutes, (players, boards, rows, 2)
    pairs: Pairs
    points: Ints
    money: Settlement
    stack_start: Ints
    timed_out: Flags

    def players(self, h: int) -> range:
        return of_hand(self.hand_of, h)

    def pairs_of(self, h: int) -> range:
        return of_hand(self.pairs.hand, h)


def simulate(
    seed: int, n_tables: int, hands_per_table: int, joker_share: float, fault_rate: float
) -> Iterator[tuple[dict[str, Any], str | None]]:
    """Hands in the order they are dealt (tables interleaved), each with the fault it carries."""
    rng = np.random.default_rng(seed)
    t = Tables.open(rng, n_tables, joker_share)
    state = _Dealing(np.zeros(n_tables, np.int64), np.full(n_tables, -1, np.int64))
    while (t.hand_no < hands_per_table).any():
        dealt, away, fault = _who_is_dealt(rng, t, state, hands_per_table, fault_rate)
        tables = np.flatnonzero(dealt.any(axis=1))  # the tables able to deal
        if tables.size == 0:
            continue
        played = _play(rng, t, tables, dealt, away)
        for h, table in enumerate(tables.tolist()):
            t.hand_no[table] += 1
            t.clock[table] += int(rng.integers(20, 90))
            yield (
                _record(t, table, played, h),
                (_ALL_FAULTS[fault[table]] if fault[table] >= 0 else None),
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
    floor = GAME.floor_points * t.point_value[:, None]
    away = t.occupied & (rng.random(t.stack.shape) < 0.03)
    candidate = t.occupied & ~t.timed_out & ~away & (t.stack >= floor)
    k = largest_group(t.stack, candidate, t.point_value)
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
        rng.integers(0, len(_ALL_FAULTS), n_tables),
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


def _play(rng: np.random.Generator, t: Tables, tables: Ints, dealt: Flags, away: Flags) -> _Played:
    """Deal the cards, set them, and settle every hand by the project's own engine."""
    boards, cards = deal(rng, t.jokers)
    rows = settings_for(rng, cards)
    table_of, seat = np.nonzero(dealt)
    hand_of = np.searchsorted(tables, table_of)
    setting = {name: row[table_of, seat] for name, row in zip(GAME.row_names, rows, strict=True)}
    shown = showdown(GAME, boards[tables], setting, hand_of)
    pairs = pair_points(GAME, shown.value, hand_of, seat + 1)
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
    )


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


def _record(t: Tables, table: int, played: _Played, h: int) -> dict[str, Any]:
    """The hand record of hand `h` of a step, dealt at `table`, as hand-history.md has it."""
    players = played.players(h)
    variant = "taiwanese_jokers" if t.jokers[table] else "taiwanese"
    record = hand_head(t, table, variant) | {
        "boards": played.boards[table].tolist(),
        "players": [_player(t, table, played, i) for i in players],
    }
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
        for b in range(GAME.boards)
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


class _FaultBook:
    """The faults written so far, and the later hands where each may echo."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self.listed: list[faults.Fault] = []
        self.played: set[str] = set()  # table and player of every hand so far
        # A wrong recorded stack echoes at the player's next hand at the table, however late.
        self.awaiting: dict[str, faults.Fault] = {}

    def lines(self, hand: dict[str, Any], fault: str | None) -> list[str]:
        """The lines to write for `hand`: spoiled, and listed, when it can carry `fault`."""
        to_write: list[str] | None = None
        if fault is not None and fault not in faults.DEALING_FAULTS:
            returning = {
                p["player_id"]
                for p in hand["players"]
                if hand["table_id"] + p["player_id"] in self.played
            }
            to_write = faults.spoil(self.rng, faults.copy_hand(hand), fault, returning)
        elif fault in faults.DEALING_FAULTS:
            to_write = [json.dumps(hand)]  # what the table did is the fault
        if fault is None or to_write is None:
            return [json.dumps(hand)]
        before = fault in ("hand_no", "continuity")
        self.listed.append(faults.Fault(hand["hand_id"], fault, faults.echoes(hand, before)))
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
    variant: str = "taiwanese",
    scoring: str = "1-6",
) -> Generated:
    """Write `tables` x `hands` hands to `out` (and out's faults.json when faults are asked).

    `variant` "taiwanese" deals Taiwanese and Taiwanese Jokers tables (`jokers` of them
    with jokers); "chinese" deals closed Chinese tables scored by `scoring`.
    """
    games = ", ".join(name for name in VARIANTS if name != TAIWANESE_JOKERS.name)
    game = VARIANTS.get(variant)
    if game is None or game is TAIWANESE_JOKERS:
        raise AuditError(f"--variant is one of {games}, not {variant!r}.")
    if scoring not in SCORING:
        raise AuditError(f"--scoring is one of {', '.join(SCORING)}, not {scoring!r}.")
    out.parent.mkdir(parents=True, exist_ok=True)
    book = _FaultBook(np.random.default_rng(seed + 1))
    lines = written = 0
    sink = _Sink(out, fmt)
    # Typed Parquet cannot hold a cut line or a seat written as a word.
    unstorable = {"unreadable", "schema"} if fmt == "parquet" else set()
    try:
        if game.family is Family.chinese:
            hands_dealt = simulate_chinese(seed, tables, hands, fault_rate, scoring)
        elif game.open_face:
            hands_dealt = simulate_open_face(seed, tables, hands, fault_rate, game)
        else:
            hands_dealt = simulate(seed, tables, hands, jokers, fault_rate)
        for hand, fault in hands_dealt:
            for line in book.lines(hand, None if fault in unstorable else fault):
                sink.write(line)
                lines += 1
            book.written(hand)
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
        faults_path.write_text(json.dumps([f.as_json() for f in book.listed], indent=1) + "\n")
    return Generated(written, lines, len(book.listed), out, faults_path)


class _Sink:
    """Writes records as they come: JSON Lines, one JSON array, or Parquet row groups."""

    def __init__(self, out: Path, fmt: str) -> None:
        if fmt not in FORMATS:
            raise AuditError(f"--format must be one of {', '.join(FORMATS)}, not {fmt!r}.")
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
        """The pending records as a Parquet row group, typed as the hand-history schema."""
        if not self.pending:
            return
        lines = io.BytesIO("\n".join(self.pending).encode())
        table = pj.read_json(
            lines, parse_options=pj.ParseOptions(explicit_schema=text_schema())
        ).cast(arrow_schema())
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
