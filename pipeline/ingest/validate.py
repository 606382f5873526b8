"""Validation of decoded records into a HandBatch: the schema, the game, repeated hands.

Three steps, each over whole columns, each quarantining what it rejects with a
reason: the schema layer (`schema_layer.py`, then the models for the records it
flags), the game rules (`game_rules.py`), and hand ids read before.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
from pydantic import ValidationError

from pipeline.core import batch as hb
from pipeline.core.evaluator import parse_value
from pipeline.core.games import HOME_RUN_NAMES, LAYOUTS, ROW_NAMES, VARIANTS, Variant, per_game
from pipeline.core.games.chinese import DECLARATIONS, DEFAULT_SURRENDER_POINTS, NATURALS
from pipeline.core.rules import CONTRACT, RuleBook
from pipeline.helpers.columns import (
    children,
    field,
    ints,
    is_null,
    text,
    unscaled,
    utc_micros,
    whole,
)
from pipeline.ingest.decode import Decoded, schema_message
from pipeline.ingest.game_rules import RULES, HandCards
from pipeline.ingest.hand_history import Hand
from pipeline.ingest.identifiers import identifier_rule
from pipeline.ingest.quarantine import QuarantineCheck, Quarantined, raw_text
from pipeline.ingest.schema_layer import schema_suspects

Flags = npt.NDArray[np.bool_]


def validate(
    decoded: Decoded, seen: set[str], book: RuleBook = CONTRACT
) -> tuple[list[hb.HandBatch], list[Quarantined]]:
    """Split decoded records into batches of verified hands (one per layout of the games
    they play) and quarantine rows; `seen` holds verified ids and gains those verified here.
    `book`: the profiles the hands are audited under (the contract alone by default)."""
    # One chunk per column, once: the column reads below would otherwise each copy the
    # chunks of a nested column together again.
    table = decoded.table.combine_chunks()
    quarantined = list(decoded.quarantined)
    keep = np.flatnonzero(_schema_passes(decoded, table, quarantined))
    if len(keep) < table.num_rows:
        table = table.take(pa.array(keep))
    if table.num_rows == 0:
        return [], quarantined
    cards = HandCards.read(table, book)
    failed = _game_fails(decoded, table, keep, cards, quarantined)
    failed |= _read_before(decoded, table, keep, ~failed, seen, quarantined)
    passed = np.flatnonzero(~failed)
    if len(passed) == table.num_rows:  # every record the schema passed is verified
        return to_batches(table, _origins(decoded, keep), cards), quarantined
    table = table.take(pa.array(passed))
    origins = _origins(decoded, keep[passed])
    return to_batches(table, origins, HandCards.read(table, book)), quarantined


# Each record's source and digest.
Origins = tuple[list[str], list[str]]


def _origins(decoded: Decoded, rows: npt.NDArray[np.int64]) -> Origins:
    if len(rows) == len(decoded.sources):
        return list(decoded.sources), list(decoded.digests)
    return [decoded.sources[i] for i in rows], [decoded.digests[i] for i in rows]


def _record(table: pa.Table, i: int) -> dict[str, Any]:
    return table.slice(i, 1).to_pylist()[0]


def _reject(
    decoded: Decoded, i: int, hand_id: str | None, check: str, why: str, name_hand: bool = False
) -> Quarantined:
    """Record `i` of the block quarantined by `check`, the message naming where it was."""
    where = f"{decoded.sources[i]} (hand {hand_id})" if name_hand else decoded.sources[i]
    raw, digest = raw_text(decoded.raws[i]), decoded.digests[i]
    return Quarantined(
        decoded.sources[i], hand_id, QuarantineCheck(check), f"{where}: {why}", raw, digest
    )


def _schema_passes(decoded: Decoded, table: pa.Table, quarantined: list[Quarantined]) -> Flags:
    """Which records the schema accepts; the models judge those the columns flag."""
    ok = np.ones(table.num_rows, dtype=bool)
    for i in np.flatnonzero(schema_suspects(table)) if table.num_rows else []:
        record = _record(table, int(i))
        try:
            Hand.model_validate(record)
        except ValidationError as error:
            ok[i] = False
            why = schema_message(error)
            quarantined.append(_reject(decoded, int(i), record.get("hand_id"), "schema", why))
    return ok


def _game_fails(
    decoded: Decoded,
    table: pa.Table,
    keep: npt.NDArray[np.int64],
    cards: HandCards,
    quarantined: list[Quarantined],
) -> Flags:
    """Which records break an identifier or game rule; each is quarantined by the first it
    breaks."""
    failed = np.zeros(table.num_rows, dtype=bool)
    hand_ids = table["hand_id"]
    verdicts = [(QuarantineCheck.identifier, identifier_rule(table))]
    verdicts += [(check, rule(cards)) for check, rule in RULES]
    for check, verdict in verdicts:
        for j in np.flatnonzero(verdict.failed & ~failed):
            hand_id, why = hand_ids[int(j)].as_py(), verdict.why(int(j))
            quarantined.append(_reject(decoded, int(keep[j]), hand_id, check, why, True))
        failed |= verdict.failed
    return failed


def _read_before(
    decoded: Decoded,
    table: pa.Table,
    keep: npt.NDArray[np.int64],
    candidate: Flags,
    seen: set[str],
    quarantined: list[Quarantined],
) -> Flags:
    """Which candidate records repeat a hand id verified before; the others join `seen`."""
    hand_ids = table["hand_id"].to_pylist()
    candidates = np.flatnonzero(candidate)
    repeated = np.zeros(table.num_rows, dtype=bool)
    fresh = {hand_ids[j] for j in candidates}
    # Asked first, whatever the block holds: `seen` may look its ids up (ledger.py).
    read_before = not seen.isdisjoint(fresh)
    if len(fresh) == len(candidates) and not read_before:
        seen |= fresh  # no id read twice: all of them at once
        return repeated
    for j in candidates:
        hand_id = hand_ids[j]
        if hand_id not in seen:
            seen.add(hand_id)
            continue
        repeated[j] = True
        why = f"hand {hand_id} was read before; only its first record is audited"
        quarantined.append(_reject(decoded, int(keep[j]), hand_id, "duplicate_hand", why))
    return repeated


def to_batches(table: pa.Table, origins: Origins, cards: HandCards) -> list[hb.HandBatch]:
    """Validated records as one batch per layout of rows and boards, in the order of
    LAYOUTS (a block of one game, the usual case, is one batch as it is)."""
    layout = per_game(lambda g: list(LAYOUTS).index(g.layout))[cards.game]
    present = np.unique(layout)
    if len(present) == 1:
        return [to_batch(table, origins, cards, list(LAYOUTS.values())[present[0]])]
    batches = []
    for code in present:
        rows = np.flatnonzero(layout == code)
        part = table.take(pa.array(rows))
        game = list(LAYOUTS.values())[code]
        own = ([origins[0][i] for i in rows], [origins[1][i] for i in rows])
        batches.append(to_batch(part, own, HandCards.read(part, cards.book), game))
    return batches


def to_batch(table: pa.Table, origins: Origins, cards: HandCards, game: Variant) -> hb.HandBatch:
    """Columns of validated records of one layout (every check above holds for every row)."""
    players, _ = children(table["players"])
    return hb.HandBatch(
        hands=_hands(table, origins, cards),
        game=game,
        boards=_boards(cards, game),
        players=_players(players, cards, game),
        rows=_recorded_rows(players),
        settlements=_settlements(table),
        sitting_out=_sitting_out(table),
        rules=cards.book,
    )


def _boards(cards: HandCards, game: Variant) -> hb.Codes:
    """(hands, boards, board size) codes. A hand whose profile deals fewer boards than
    its layout holds has its first board again in the others: evaluated as any, their
    rows count for nothing (the profile's boards mask them: `RuleBook.boards`)."""
    n = len(cards)
    if (cards.board_count == game.boards).all():
        return cards.boards.codes.reshape(n, game.boards, game.board_size)
    out = np.empty((n, game.boards, game.board_size), dtype=cards.boards.codes.dtype)
    first = np.searchsorted(cards.boards.owner, np.arange(n))
    for b in range(game.boards):  # each board from the hand's cards, or its first again
        on = np.minimum(b, cards.board_count - 1)
        at = first[:, None] + on[:, None] * game.board_size + np.arange(game.board_size)
        out[:, b] = cards.boards.codes[at]
    return out


def _hands(table: pa.Table, origins: Origins, cards: HandCards) -> hb.Hands:
    variant = whole(table["variant"])
    return hb.Hands(
        hand_id=whole(table["hand_id"]),
        table_id=whole(table["table_id"]),
        hand_no=ints(table["hand_no"]),
        started_at=utc_micros(whole(table["started_at"]))[0],
        variant=variant,
        currency=whole(pc.fill_null(table["currency"], "USD")),
        point_value=unscaled(table["point_value"]),
        rake_rate=unscaled(table["rake_rate"]),
        rake_cap=unscaled(table["rake_cap"]),
        rake_total=unscaled(table["rake_total"]),
        has_rake_total=~is_null(whole(table["rake_total"])),
        has_settlements=~is_null(whole(table["settlements"])),
        source=pa.array(origins[0], type=pa.string()),
        digest=pa.array(origins[1], type=pa.string()),
        two_four=np.where(  # a hand's own method, else its profile's (house-rules.md 1)
            is_null(whole(table["scoring"])),
            cards.book.chinese.two_four[cards.profile],
            pc.fill_null(pc.equal(table["scoring"], "2-4"), False).to_numpy(zero_copy_only=False),
        ),
        surrender_points=np.where(
            is_null(whole(table["surrender_points"])),
            cards.book.chinese.surrender_points[cards.profile],
            ints(table["surrender_points"], DEFAULT_SURRENDER_POINTS),
        ),
        game=ints(pc.index_in(variant, value_set=pa.array(list(VARIANTS)))),
        fantasyland_rule=_flag(table["fantasyland_rule"], True),
        profile=cards.profile,
    )


def _players(players: pa.Array, cards: HandCards, game: Variant) -> hb.Players:
    n_players = len(cards.hand_of)
    declared = pc.index_in(field(players, "declare"), value_set=pa.array(DECLARATIONS))
    natural = pc.index_in(field(players, "natural"), value_set=pa.array(NATURALS))
    return hb.Players(
        hand=cards.hand_of,
        seat=cards.seat,
        player_id=field(players, "player_id"),
        stack_start=unscaled(field(players, "stack_start")),
        add_on=unscaled(field(players, "add_on")),
        timed_out=pc.fill_null(field(players, "timed_out"), False).to_numpy(zero_copy_only=False),
        setting={
            row.name: cards.rows[row.name].per_player(n_players, row.size) for row in game.rows
        },
        declared=ints(declared),
        natural=ints(natural, -1) + 1,
        fouled=pc.fill_null(field(players, "fouled"), False).to_numpy(zero_copy_only=False),
        has_fouled=~is_null(field(players, "fouled")),
        fantasyland=_flag(field(players, "fantasyland"), False),
        fantasyland_next=_flag(field(players, "fantasyland_next"), False),
        has_fantasyland_next=~is_null(field(players, "fantasyland_next")),
        streets=cards.streets,
        points=ints(field(players, "points")),
        won=unscaled(field(players, "won")),
        rake=unscaled(field(players, "rake")),
        net=unscaled(field(players, "net")),
        stack_end=unscaled(field(players, "stack_end")),
    )


def _flag(column: pa.Array | pa.ChunkedArray, absent: bool) -> Flags:
    """A boolean column as flags, `absent` where null."""
    return pc.fill_null(whole(column), absent).to_numpy(zero_copy_only=False)


def _recorded_rows(players: pa.Array) -> hb.RecordedRows:
    rows, row_player = children(field(players, "rows"))
    return hb.RecordedRows(
        player=row_player,
        board=np.maximum(ints(field(rows, "board")) - 1, 0),  # no board: the only "board"
        row=ints(pc.index_in(field(rows, "row"), value_set=pa.array(ROW_NAMES))),
        value=field(rows, "value"),
        parsed=parse_value(field(rows, "value")),
        joker_as=field(rows, "joker_as"),
        royalty=ints(field(rows, "royalty")),
        has_royalty=~is_null(field(rows, "royalty")),
    )


def _settlements(table: pa.Table) -> hb.Settlements:
    settlements, settled_hand = children(table["settlements"])
    home_run = pc.index_in(field(settlements, "home_run"), value_set=pa.array(HOME_RUN_NAMES[1:]))
    return hb.Settlements(
        hand=settled_hand,
        seat=ints(field(settlements, "seat")),
        opponent=ints(field(settlements, "opponent")),
        points=ints(field(settlements, "points")),
        home_run=ints(home_run, -1) + 1,
        amount=unscaled(field(settlements, "amount")),
    )


def _sitting_out(table: pa.Table) -> hb.SittingOut:
    sitting, sitting_hand = children(table["sitting_out"])
    return hb.SittingOut(
        hand=sitting_hand,
        seat=ints(field(sitting, "seat")),
        player_id=field(sitting, "player_id"),
        stack=unscaled(field(sitting, "stack")),
        reason=text(field(sitting, "reason")),
    )
