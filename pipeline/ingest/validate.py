"""Validation of decoded records into a HandBatch, over whole columns.

Two layers. The schema layer walks the pydantic models and checks nulls, bounds,
literals, patterns and lengths over the Arrow columns; the rows it flags are then
judged by the models themselves, record by record, so the models stay the one
authority and their words are the message. The game layer finds what the
schema cannot: player counts and seats, cards, jokers, duplicates, settings.
"""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import annotated_types as at
import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
from pydantic import AfterValidator, BaseModel, BeforeValidator, ValidationError

from pipeline.cards import INVALID, JOKER, format_cards, try_parse
from pipeline.ingest import batch as hb
from pipeline.ingest.columns import (
    children,
    field,
    ints,
    is_null,
    lengths,
    text,
    unscaled,
    utc_micros,
    whole,
)
from pipeline.ingest.decode import Decoded, schema_message
from pipeline.ingest.quarantine import Check, Quarantined, raw_text
from pipeline.ingest.schema import Exactly, Hand, to_timestamp
from pipeline.scoring import HOME_RUN_NAMES

Flags = npt.NDArray[np.bool_]
ROW_SIZES = {"top": 1, "middle": 2, "bottom": 4}
CARDS_PER_PLAYER = sum(ROW_SIZES.values())
MAX_JOKERS = 2


# --- the schema layer ------------------------------------------------------------------


def _unwrap(annotation: Any, metadata: Sequence[Any]) -> tuple[Any, list[Any], bool]:
    """The bare type, all its constraints, and whether None is allowed."""
    meta = list(metadata)
    optional = False
    while True:
        origin = typing.get_origin(annotation)
        args = typing.get_args(annotation)
        if origin is Annotated:
            annotation, meta = args[0], [*meta, *args[1:]]
        elif origin in (typing.Union, types.UnionType):
            optional = optional or type(None) in args
            annotation = next(a for a in args if a is not type(None))
        else:
            return annotation, meta, optional


def _violations(column: pa.Array, bare: Any, meta: list[Any]) -> Flags:
    """Where non-null values break a constraint (nulls are judged by the caller)."""
    if pa.types.is_dictionary(column.type):  # each distinct value judged once
        per_text = np.append(_violations(column.dictionary, bare, meta), False)
        index = pc.fill_null(column.indices, len(column.dictionary))
        return per_text[index.to_numpy(zero_copy_only=False)]
    bad = np.zeros(len(column), dtype=bool)
    compare = {
        at.Gt: (pc.less_equal, "gt"),
        at.Ge: (pc.less, "ge"),
        at.Lt: (pc.greater_equal, "lt"),
        at.Le: (pc.greater, "le"),
    }
    for m in meta:
        for kind, (op, attribute) in compare.items():
            if isinstance(m, kind):
                bound = getattr(m, attribute)
                scalar = (
                    pa.scalar(bound, type=column.type)
                    if pa.types.is_decimal(column.type)
                    else bound
                )
                bad |= pc.fill_null(op(column, scalar), False).to_numpy(zero_copy_only=False)
        pattern = getattr(m, "pattern", None)
        if isinstance(pattern, str):
            bad |= ~pc.fill_null(pc.match_substring_regex(column, pattern), True).to_numpy(
                zero_copy_only=False
            )
        if isinstance(m, BeforeValidator) and m.func is to_timestamp:
            bad |= utc_micros(column)[1] & ~is_null(column)
    if typing.get_origin(bare) is Literal:
        allowed = pa.array(typing.get_args(bare), type=column.type)
        bad |= ~pc.fill_null(pc.is_in(column, value_set=allowed), True).to_numpy(
            zero_copy_only=False
        )
    return bad & ~is_null(column)


def _rejected(column: pa.Array, annotation: Any, metadata: Sequence[Any], required: bool) -> Flags:
    """Which values of `column` the models would reject.

    Flags are kept at each level and lifted to the parent list only where some are set,
    so a nested column that is all in order costs its checks and nothing more.
    """
    bare, meta, optional = _unwrap(annotation, metadata)
    nulls = is_null(column)
    bad = _violations(column, bare, meta)
    if required or not optional:
        bad |= nulls
    for m in meta:
        if isinstance(m, AfterValidator) and isinstance(m.func, Exactly):
            bad |= (lengths(column) != m.func.n) & ~nulls
    if typing.get_origin(bare) is list:
        column = whole(column)
        inner = _rejected(pc.list_flatten(column), typing.get_args(bare)[0], (), True)
        if inner.any():
            parents = pc.list_parent_indices(column).to_numpy(zero_copy_only=False)
            bad[parents[inner]] = True
    elif isinstance(bare, type) and issubclass(bare, BaseModel):
        bad |= _model_rejected(bare, column)
    return bad


def _model_rejected(model: type[BaseModel], structs: pa.Array) -> Flags:
    """Which structs have a field the model would reject (a null struct is its caller's)."""
    bad = np.zeros(len(structs), dtype=bool)
    for name, f in model.model_fields.items():
        bad |= _rejected(field(structs, name), f.annotation, f.metadata, f.is_required())
    return bad & ~is_null(structs) if structs.null_count else bad


def schema_suspects(table: pa.Table) -> Flags:
    """Records the schema layer cannot pass; the models then judge each of them."""
    structs = pa.StructArray.from_arrays(
        [whole(c) for c in table.columns], names=table.column_names
    )
    return _model_rejected(Hand, structs)


# --- the game layer ----------------------------------------------------------------------


@dataclass(frozen=True)
class _Cards:
    """Card codes of the batch, per hand, player and row."""

    boards: npt.NDArray[np.int8]  # (hands, 2, 5)
    row_codes: dict[str, tuple[npt.NDArray[np.int8], npt.NDArray[np.int64]]]  # codes, player
    row_lengths: dict[str, npt.NDArray[np.int64]]
    dealt: tuple[npt.NDArray[np.int8], npt.NDArray[np.int64]]  # `cards`, player
    dealt_lengths: npt.NDArray[np.int64]


def _read_cards(table: pa.Table, players: pa.Array) -> _Cards:
    n = table.num_rows
    boards_flat = pc.list_flatten(pc.list_flatten(whole(table["boards"])))
    boards = try_parse(boards_flat).reshape(n, 2, 5)
    row_codes = {}
    row_lengths = {}
    for name in ROW_SIZES:
        values, parents = children(field(players, name))
        row_codes[name] = (try_parse(values), parents)
        row_lengths[name] = lengths(field(players, name))
    dealt_values, dealt_parents = children(field(players, "cards"))
    return _Cards(
        boards,
        row_codes,
        row_lengths,
        (try_parse(dealt_values), dealt_parents),
        lengths(field(players, "cards")),
    )


def _read_cards_of(table: pa.Table) -> tuple[pa.Array, npt.NDArray[np.int64], _Cards]:
    players, hand_of = children(table["players"])
    return players, hand_of, _read_cards(table, players)


def game_findings(
    table: pa.Table, players: pa.Array, hand_of: npt.NDArray[np.int64], cards: _Cards
) -> dict[Check, Flags]:
    """Per record, which game checks fail (records that passed the schema layer)."""
    n = table.num_rows
    found: dict[Check, Flags] = {}

    count = lengths(table["players"])
    # A seat is repeated when the hand's seats (1-6 by now), as bits, are fewer than its players.
    seat = np.clip(ints(field(players, "seat")), 0, 63).astype(np.uint64)
    seats = _or_by(hand_of, np.left_shift(np.uint64(1), seat), n)
    found[Check.players] = (count < 2) | (count > 6) | (np.bitwise_count(seats) < count)

    bad_card = (cards.boards == INVALID).any(axis=(1, 2))
    for codes, player in [*cards.row_codes.values(), cards.dealt]:
        bad_card[hand_of[player[codes == INVALID]]] = True
    found[Check.card] = bad_card

    jokers = np.zeros(n, dtype=np.int64)
    for codes, player in cards.row_codes.values():
        jokers += np.bincount(hand_of[player[codes == JOKER]], minlength=n)
    plain = pc.equal(table["variant"], "taiwanese").to_numpy(zero_copy_only=False)
    found[Check.joker] = (
        (cards.boards == JOKER).any(axis=(1, 2)) | (jokers > MAX_JOKERS) | (plain & (jokers > 0))
    )

    # A card is dealt twice in a hand when the hand's cards, as bits, are fewer than its cards.
    bits, held = _card_bits(cards.boards.reshape(n, -1))
    hand_bits = np.bitwise_or.reduce(bits, axis=1)
    hand_held = held.sum(axis=1)
    n_players = len(hand_of)
    player_bits = np.zeros(n_players, dtype=np.uint64)
    for codes, player in cards.row_codes.values():
        bits, held = _card_bits(codes)
        player_bits |= _or_by(player, bits, n_players)
        hand_held += np.bincount(hand_of[player[held]], minlength=n)
    hand_bits |= _or_by(hand_of, player_bits, n)
    found[Check.duplicate_card] = np.bitwise_count(hand_bits) < hand_held

    bad_setting = np.zeros(n, dtype=bool)
    shaped = np.ones(len(hand_of), dtype=bool)
    for name, size in ROW_SIZES.items():
        shaped &= cards.row_lengths[name] == size
    bad_setting[hand_of[~shaped]] = True
    dealt_codes, dealt_player = cards.dealt
    has_dealt = cards.dealt_lengths >= 0
    bad_setting[hand_of[has_dealt & (cards.dealt_lengths != CARDS_PER_PLAYER)]] = True
    compare = has_dealt & shaped & (cards.dealt_lengths == CARDS_PER_PLAYER)
    if compare.any():
        setting = [_per_player(*cards.row_codes[r], n_players, k) for r, k in ROW_SIZES.items()]
        dealt = _per_player(dealt_codes, dealt_player, n_players, CARDS_PER_PLAYER)
        differs = _multiset_key(np.concatenate(setting, axis=1)) != _multiset_key(dealt)
        bad_setting[hand_of[compare & differs]] = True
    found[Check.setting] = bad_setting
    return found


# A prime for every code (non-card and joker included): the product of a row's primes
# names its multiset of codes exactly (unique factorization), whatever the order, and
# seven of them (the largest is 251) fit in 63 bits.
_PRIMES = np.array(
    [p for p in range(2, 252) if all(p % d for d in range(2, int(p**0.5) + 1))], dtype=np.int64
)
assert len(_PRIMES) == JOKER + 2 and int(_PRIMES[-1]) ** CARDS_PER_PLAYER < 2**63


def _multiset_key(codes: npt.NDArray[np.int8]) -> npt.NDArray[np.int64]:
    """Per row of (rows, k) codes, a number equal for two rows exactly when they hold the
    same codes as many times each."""
    key = np.ones(len(codes), dtype=np.int64)
    for column in (codes.astype(np.int64) + 1).T:
        key *= _PRIMES[column]
    return key


def _card_bits(codes: npt.NDArray[np.int8]) -> tuple[npt.NDArray[np.uint64], Flags]:
    """Each code as a bit of a 52-bit mask (0 for jokers and non-cards), and which are cards."""
    held = (codes >= 0) & (codes < JOKER)
    shift = np.where(held, codes, 0).astype(np.uint64)
    return np.where(held, np.left_shift(np.uint64(1), shift), np.uint64(0)), held


def _or_by(owner: npt.NDArray[np.int64], bits: npt.NDArray[np.uint64], owners: int) -> Any:
    """The OR of each owner's bits; `owner` is in ascending order (a list column's parents)."""
    count = np.bincount(owner, minlength=owners)
    out = np.zeros(owners, dtype=np.uint64)
    some = count > 0
    if some.any():
        out[some] = np.bitwise_or.reduceat(bits, (np.cumsum(count) - count)[some])
    return out


def _per_player(
    codes: npt.NDArray[np.int8],
    player: npt.NDArray[np.int64],
    n_players: int,
    size: int,
) -> npt.NDArray[np.int8]:
    """Codes of a list column as (players, size); players whose list has another length get -1."""
    fits = np.bincount(player, minlength=n_players) == size
    if fits.all():  # the usual case: the codes are already player after player
        return codes.reshape(n_players, size)
    out = np.full((n_players, size), INVALID, dtype=np.int8)
    take = fits[player]
    out[fits] = codes[take].reshape(-1, size)
    return out


# --- messages for the records found wanting (few; Python is fine here) ------------------


def _describe(check: Check, record: dict[str, Any]) -> str:
    players = record.get("players") or []
    if check is Check.players:
        seats = [p.get("seat") for p in players]
        repeated = sorted({s for s in seats if seats.count(s) > 1})
        if repeated:
            return f"seat {repeated[0]} is dealt twice; seats are unique in a hand"
        return f"{len(players)} players are dealt; a hand deals 2 to 6"
    if check is Check.card:
        for i, board in enumerate(record.get("boards") or []):
            for card in board:
                if try_parse([card])[0] == INVALID:
                    return f"board {i + 1} holds {card!r}, which is not a card"
        for p in players:
            for name in (*ROW_SIZES, "cards"):
                for card in p.get(name) or []:
                    if try_parse([card])[0] == INVALID:
                        return (
                            f"seat {p.get('seat')} {name} holds {card!r}, which is not a card "
                            "(expected a rank of 23456789TJQKA then a suit of cdhs, or JK)"
                        )
    if check is Check.joker:
        if any(try_parse(b).tolist().count(JOKER) for b in record.get("boards") or []):
            return "a joker is on a board; jokers are dealt only to players"
        held = sum(
            try_parse(p.get(name) or []).tolist().count(JOKER)
            for p in players
            for name in ROW_SIZES
        )
        if record.get("variant") == "taiwanese":
            return f"{held} joker(s) dealt in plain taiwanese, which has none"
        return f"{held} jokers dealt; the deck has two"
    if check is Check.duplicate_card:
        seen: dict[int, str] = {}
        places = [(f"board {i + 1}", b) for i, b in enumerate(record.get("boards") or [])]
        places += [
            (f"seat {p.get('seat')} {n}", p.get(n) or []) for p in players for n in ROW_SIZES
        ]
        for where, cards in places:
            for code in try_parse(cards).tolist():
                if 0 <= code < JOKER:
                    if code in seen:
                        card = format_cards(np.array([code]))[0]
                        return f"{card} is dealt twice: in {seen[code]} and in {where}"
                    seen[code] = where
    if check is Check.setting:
        for p in players:
            sizes = {n: len(p.get(n) or []) for n in ROW_SIZES}
            if sizes != ROW_SIZES:
                got = ", ".join(f"{n} {k}" for n, k in sizes.items())
                return f"seat {p.get('seat')} set {got} cards; rows hold 1, 2 and 4"
        for p in players:
            dealt = p.get("cards")
            setting = [c for n in ROW_SIZES for c in p.get(n) or []]
            if dealt is not None and sorted(try_parse(dealt)) != sorted(try_parse(setting)):
                return (
                    f"seat {p.get('seat')} set {' '.join(setting)}, which are not the cards "
                    f"dealt ({' '.join(dealt)})"
                )
    return f"the record fails the {check.value} check"


# --- the whole step ----------------------------------------------------------------------


def _record(table: pa.Table, i: int) -> dict[str, Any]:
    return table.slice(i, 1).to_pylist()[0]


def _raw(decoded: Decoded, i: int) -> str | None:
    raw = decoded.raws[i]
    if raw is None:
        return raw_text(json.dumps(_record(decoded.table, i), default=str))
    return raw_text(raw)


def validate(decoded: Decoded, seen: set[str]) -> tuple[hb.HandBatch, list[Quarantined]]:
    """Split decoded records into a HandBatch and quarantine rows; `seen` holds verified ids."""
    # One chunk per column, once: the column reads below would otherwise each copy the
    # chunks of a nested column together again.
    table = decoded.table.combine_chunks()
    quarantined = list(decoded.quarantined)
    ok = np.ones(table.num_rows, dtype=bool)
    for i in np.flatnonzero(schema_suspects(table)) if table.num_rows else []:
        record = _record(table, int(i))
        try:
            Hand.model_validate(record)
        except ValidationError as error:
            ok[i] = False
            quarantined.append(
                Quarantined(
                    decoded.sources[i],
                    record.get("hand_id"),
                    Check.schema,
                    f"{decoded.sources[i]}: {schema_message(error)}",
                    _raw(decoded, int(i)),
                )
            )

    keep = np.flatnonzero(ok)
    if len(keep) < table.num_rows:
        table = table.take(pa.array(keep))
    players, hand_of = children(table["players"])
    cards = _read_cards(table, players)
    if table.num_rows:
        findings = game_findings(table, players, hand_of, cards)
        failed = np.zeros(table.num_rows, dtype=bool)
        for check, flags in findings.items():  # in order of precedence
            for j in np.flatnonzero(flags & ~failed):
                record = _record(table, int(j))
                source = decoded.sources[keep[j]]
                quarantined.append(
                    Quarantined(
                        source,
                        record.get("hand_id"),
                        check,
                        f"{source} (hand {record.get('hand_id')}): {_describe(check, record)}",
                        _raw(decoded, int(keep[j])),
                    )
                )
            failed |= flags
        hand_ids = table["hand_id"].to_pylist()
        candidates = np.flatnonzero(~failed)
        fresh = (
            set(hand_ids) if len(candidates) == len(hand_ids) else {hand_ids[j] for j in candidates}
        )
        if len(fresh) == len(candidates) and seen.isdisjoint(fresh):
            seen |= fresh  # no id read twice: all of them at once
        else:
            for j in candidates:
                hand_id = hand_ids[j]
                if hand_id in seen:
                    failed[j] = True
                    source = decoded.sources[keep[j]]
                    quarantined.append(
                        Quarantined(
                            source,
                            hand_id,
                            Check.duplicate_hand,
                            f"{source}: hand {hand_id} was read before; only its first "
                            "record is audited",
                            _raw(decoded, int(keep[j])),
                        )
                    )
                else:
                    seen.add(hand_id)
        passed = np.flatnonzero(~failed)
        if len(passed) == table.num_rows:  # every record left after the schema verified
            whole_block = len(keep) == len(decoded.sources)
            sources = list(decoded.sources) if whole_block else [decoded.sources[k] for k in keep]
            return to_batch(table, sources, (players, hand_of, cards)), quarantined
        sources = [decoded.sources[keep[j]] for j in passed]
        table = table.take(pa.array(passed))
    else:
        sources = []
    return to_batch(table, sources), quarantined


def to_batch(
    table: pa.Table,
    sources: list[str],
    read: tuple[pa.Array, npt.NDArray[np.int64], _Cards] | None = None,
) -> hb.HandBatch:
    """Columns of validated records (the checks above hold for every row)."""
    players, hand_of, cards = read or _read_cards_of(table)
    n_players = len(hand_of)
    variant = whole(table["variant"])
    settlements, settled_hand = children(table["settlements"])
    sitting, sitting_hand = children(table["sitting_out"])
    rows, row_player = children(field(players, "rows"))
    return hb.HandBatch(
        hands=hb.Hands(
            hand_id=whole(table["hand_id"]),
            table_id=whole(table["table_id"]),
            hand_no=ints(table["hand_no"]),
            started_at=utc_micros(whole(table["started_at"]))[0],
            variant=variant,
            jokers=pc.equal(variant, "taiwanese_jokers").to_numpy(zero_copy_only=False),
            currency=whole(pc.fill_null(table["currency"], "USD")),
            point_value=unscaled(table["point_value"]),
            rake_rate=unscaled(table["rake_rate"]),
            rake_cap=unscaled(table["rake_cap"]),
            rake_total=unscaled(table["rake_total"]),
            has_rake_total=~is_null(whole(table["rake_total"])),
            has_settlements=~is_null(whole(table["settlements"])),
            source=pa.array(sources, type=pa.string()),
        ),
        boards=cards.boards,
        players=hb.Players(
            hand=hand_of,
            seat=ints(field(players, "seat")),
            player_id=field(players, "player_id"),
            stack_start=unscaled(field(players, "stack_start")),
            add_on=unscaled(field(players, "add_on")),
            timed_out=pc.fill_null(field(players, "timed_out"), False).to_numpy(
                zero_copy_only=False
            ),
            top=_per_player(*cards.row_codes["top"], n_players, 1),
            middle=_per_player(*cards.row_codes["middle"], n_players, 2),
            bottom=_per_player(*cards.row_codes["bottom"], n_players, 4),
            points=ints(field(players, "points")),
            won=unscaled(field(players, "won")),
            rake=unscaled(field(players, "rake")),
            net=unscaled(field(players, "net")),
            stack_end=unscaled(field(players, "stack_end")),
        ),
        rows=hb.RecordedRows(
            player=row_player,
            board=ints(field(rows, "board")) - 1,
            row=ints(pc.index_in(field(rows, "row"), value_set=pa.array(hb.ROW_NAMES))),
            value=field(rows, "value"),
            joker_as=field(rows, "joker_as"),
        ),
        settlements=hb.Settlements(
            hand=settled_hand,
            seat=ints(field(settlements, "seat")),
            opponent=ints(field(settlements, "opponent")),
            points=ints(field(settlements, "points")),
            home_run=ints(
                pc.index_in(field(settlements, "home_run"), value_set=pa.array(HOME_RUN_NAMES[1:])),
                -1,
            )
            + 1,
            amount=unscaled(field(settlements, "amount")),
        ),
        sitting_out=hb.SittingOut(
            hand=sitting_hand,
            seat=ints(field(sitting, "seat")),
            player_id=field(sitting, "player_id"),
            stack=unscaled(field(sitting, "stack")),
            reason=text(field(sitting, "reason")),
        ),
    )
