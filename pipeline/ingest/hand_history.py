"""The hand-history schema: pydantic models are the one place for field names, types and bounds.

The JSON Schema in `schemas/` and the Arrow schema that Parquet and the fast JSON
reader use are both derived from these models, and so are the vectorized bound
checks of `validate.py`.
"""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal, InvalidOperation
from functools import cache
from typing import Annotated, Any, Literal

import pyarrow as pa
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    WithJsonSchema,
)

from pipeline.core.games import HOME_RUN_NAMES, ROW_NAMES, SEATS, VARIANTS
from pipeline.core.games.chinese import DECLARATIONS, NATURALS, SCORING
from pipeline.helpers.columns import Leaf, map_leaves
from pipeline.helpers.display import FORBIDDEN_IN_IDENTIFIERS

MONEY_DIGITS = 18
MONEY_SCALE = 2
RATE_SCALE = 9
MONEY_TYPE = pa.decimal128(MONEY_DIGITS, MONEY_SCALE)
RATE_TYPE = pa.decimal128(MONEY_DIGITS, RATE_SCALE)
MONEY_LIMIT = Decimal(10) ** (MONEY_DIGITS - MONEY_SCALE)

MONEY_TEXT = re.compile(r"-?\d+(\.\d{1,2})?")
RATE_TEXT = re.compile(r"\d+(\.\d{1,9})?")
TIMESTAMP_TEXT = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})"
)
# Boards a game may deal (the Taiwanese pair deal two of five cards; the family none).
BOARDS = max(g.boards for g in VARIANTS.values())
BOARD_SIZE = max(g.board_size for g in VARIANTS.values())
# The names a record may use, read from the games, so that a new game is named once.
VariantName = Literal[tuple(VARIANTS)]  # type: ignore[valid-type]
RowName = Literal[ROW_NAMES]  # type: ignore[valid-type]
BoardNumber = Literal[tuple(range(1, BOARDS + 1))]  # type: ignore[valid-type]
HomeRunName = Literal[HOME_RUN_NAMES[1:]]  # type: ignore[valid-type]
ScoringName = Literal[SCORING]  # type: ignore[valid-type]
Declaration = Literal[DECLARATIONS]  # type: ignore[valid-type]
NaturalName = Literal[NATURALS]  # type: ignore[valid-type]


class JsonNumber(str):
    """The literal text of a JSON number with a fraction or exponent, kept from the parser."""


class JsonConstant(str):
    """NaN, Infinity or -Infinity, which JSON parsers accept but which are no money."""


def _decimal_text(value: object, pattern: re.Pattern[str], what: str, places: str) -> Decimal:
    """A Decimal from a string, an integer or a JSON number's literal text, never a float."""
    if isinstance(value, bool | float | JsonConstant):
        raise ValueError(f"{what} must be a decimal string or an integer, not {value!r}")
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, Decimal):
        value = format(value, "f") if value.is_finite() else str(value)
    if not isinstance(value, str):
        raise ValueError(f"{what} must be a decimal string or an integer, not {value!r}")
    if not pattern.fullmatch(value):
        raise ValueError(f"{what} {value!r} is not a plain decimal{places}")
    try:
        return Decimal(value)
    except InvalidOperation:  # pragma: no cover - the pattern admits only valid decimals
        raise ValueError(f"{what} {value!r} is not a decimal") from None


def to_money(value: object) -> Decimal:
    """Money per hand-history.md: a decimal string or integer, at most two decimals."""
    amount = _decimal_text(value, MONEY_TEXT, "money", " with at most two decimals")
    if abs(amount) >= MONEY_LIMIT:
        raise ValueError(f"money {value!r} does not fit DECIMAL(18, 2)")
    return amount


def to_rate(value: object) -> Decimal:
    """A rate such as the rake rate: a non-negative decimal with at most nine decimals."""
    return _decimal_text(value, RATE_TEXT, "rate", " from 0 to 1 with at most nine decimals")


def to_timestamp(value: object) -> str:
    """An RFC 3339 timestamp with a zone, kept as text; parsed to UTC in the columns."""
    if not isinstance(value, str) or not TIMESTAMP_TEXT.fullmatch(value):
        raise ValueError(f"{value!r} is not an RFC 3339 timestamp such as 2026-11-29T20:15:03Z")
    try:
        datetime.fromisoformat(value.upper().replace("Z", "+00:00").replace(" ", "T"))
    except ValueError:
        raise ValueError(f"{value!r} is not a date and time that exists") from None
    return value


class Exactly:
    """A list of exactly `n` items; the vectorized checks read `n` from here."""

    def __init__(self, n: int, what: str) -> None:
        self.n = n
        self.what = what

    def __call__(self, items: list[Any]) -> list[Any]:
        if len(items) != self.n:
            raise ValueError(f"expected exactly {self.n} {self.what}, got {len(items)}")
        return items


def _exactly(n: int, what: str) -> Any:
    return AfterValidator(Exactly(n, what))


Money = Annotated[
    Decimal,
    BeforeValidator(to_money),
    WithJsonSchema(
        {
            "description": "Money: a decimal string with at most two decimals, or an integer",
            "anyOf": [
                {"type": "string", "pattern": f"^{MONEY_TEXT.pattern}$"},
                {"type": "integer"},
                {"type": "number", "multipleOf": 0.01},
            ],
        }
    ),
]
Rate = Annotated[
    Decimal,
    BeforeValidator(to_rate),
    WithJsonSchema(
        {"anyOf": [{"type": "string", "pattern": f"^{RATE_TEXT.pattern}$"}, {"type": "number"}]}
    ),
]
Timestamp = Annotated[
    str,
    BeforeValidator(to_timestamp),
    WithJsonSchema(
        {"type": "string", "format": "date-time", "pattern": f"^{TIMESTAMP_TEXT.pattern}$"}
    ),
]
# An id that holds a control or bidirectional character is quarantined by ingest's
# `identifier` rule (its own check, so not a model constraint); the JSON Schema says so.
IDENTIFIER_PATTERN = (
    "^[^"
    + "".join(f"\\u{ord(c):04x}" if c != "-" else "-" for c in FORBIDDEN_IN_IDENTIFIERS)
    + "]*$"
)
Identifier = Annotated[
    str,
    WithJsonSchema(
        {
            "type": "string",
            "pattern": IDENTIFIER_PATTERN,
            "description": "An id: any text without control characters (C0, DEL, C1) or "
            "bidirectional overrides and isolates (U+202A-U+202E, U+2066-U+2069); a record "
            "whose id holds one is quarantined with check `identifier`",
        }
    ),
]
Card = str  # parsed over whole columns by pipeline.core.cards: a bad card is a `card` finding
Board = Annotated[list[Card], _exactly(BOARD_SIZE, "cards on a board")]
Seat = Annotated[int, Field(ge=1, le=SEATS)]
# A whole number the audit stores as a 64-bit integer: a larger one is a schema fault.
Whole = Annotated[int, Field(ge=-(2**63), le=2**63 - 1)]


class Record(BaseModel):
    """Strict types (a seat is a JSON integer, not "3"); unknown fields are ignored."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)


class RowResult(Record):
    board: BoardNumber | None = None  # type: ignore[valid-type]  # none: a game without boards
    row: RowName
    value: str
    joker_as: list[Card] | None = None
    royalty: Whole | None = None  # the Chinese family's


class PairSettlement(Record):
    seat: Seat
    opponent: Seat
    points: Whole
    home_run: HomeRunName | None = None  # type: ignore[valid-type]
    amount: Money


class SittingOut(Record):
    seat: Seat
    player_id: Identifier
    stack: Annotated[Money, Field(ge=0)]
    reason: Literal["short", "timeout", "away"]


class Street(Record):
    """One street of an open-face hand: the cards dealt, and where each went."""

    dealt: list[Card]
    top: list[Card] | None = None
    middle: list[Card] | None = None
    bottom: list[Card] | None = None
    discard: list[Card] | None = None


class Player(Record):
    seat: Seat
    player_id: Identifier
    stack_start: Annotated[Money, Field(ge=0)]
    add_on: Annotated[Money, Field(ge=0)] | None = None  # none: 0
    cards: list[Card] | None = None
    top: list[Card]
    middle: list[Card]
    bottom: list[Card]
    timed_out: bool | None = None  # none: false
    declare: Declaration | None = None  # chinese; none: play
    natural: NaturalName | None = None  # with declare "natural"
    fouled: bool | None = None  # the family's recorded foul
    streets: list[Street] | None = None  # open-face: required
    fantasyland: bool | None = None  # open-face; none: false
    fantasyland_next: bool | None = None  # open-face: recorded
    rows: list[RowResult] | None = None
    points: Whole
    won: Money
    rake: Money
    net: Money
    stack_end: Money


class Hand(Record):
    hand_id: Identifier
    table_id: Identifier
    hand_no: Whole
    started_at: Timestamp
    variant: VariantName  # type: ignore[valid-type]
    currency: Annotated[str, Field(pattern=r"^[A-Z]{3}$")] | None = None  # none: USD
    point_value: Annotated[Money, Field(gt=0)]
    rake_rate: Annotated[Rate, Field(ge=0, le=1)]
    rake_cap: Annotated[Money, Field(ge=0)]
    boards: list[Board] | None = None  # as many as the game deals (checked with the game)
    scoring: ScoringName | None = None  # chinese; none: 1-6
    surrender_points: Annotated[int, Field(ge=0, le=2**63 - 1)] | None = None  # chinese; none: 3
    fantasyland_rule: bool | None = None  # open-face; none: true
    rules: str | None = None  # the house-rules profile it was dealt by; none: by table
    players: list[Player]
    settlements: list[PairSettlement] | None = None
    rake_total: Money | None = None
    sitting_out: list[SittingOut] | None = None


def json_schema() -> dict[str, Any]:
    """The JSON Schema of one hand record, as written to schemas/hand-history.schema.json."""
    schema = Hand.model_json_schema(mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "Hand record: Taiwanese Poker and the Chinese Poker family"
    schema["description"] = (
        "One hand of a hand history (JSON, JSON Lines or Parquet). Money is a decimal string "
        "or an integer with at most two decimals; cards are checked by the audit itself."
    )
    return schema


# --- the Arrow schema, derived from the models --------------------------------------------


def _arrow_type(annotation: Any, metadata: Sequence[Any] = ()) -> pa.DataType:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is Annotated:
        return _arrow_type(args[0], [*metadata, *args[1:]])
    for m in metadata:
        if isinstance(m, BeforeValidator) and m.func is to_money:
            return MONEY_TYPE
        if isinstance(m, BeforeValidator) and m.func is to_rate:
            return RATE_TYPE
    if origin in (typing.Union, types.UnionType):
        return _arrow_type(next(a for a in args if a is not type(None)), metadata)
    if origin is list:
        return pa.list_(_arrow_type(args[0]))
    if origin is Literal:
        return pa.int64() if isinstance(args[0], int) else pa.string()
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return pa.struct(
            [
                pa.field(n, _arrow_type(f.annotation, f.metadata))
                for n, f in annotation.model_fields.items()
            ]
        )
    return {str: pa.string(), int: pa.int64(), bool: pa.bool_()}[annotation]


@cache
def arrow_schema() -> pa.Schema:
    """The canonical Arrow schema of a hand record (nested players, rows, settlements)."""
    struct = _arrow_type(Hand)
    return pa.schema(list(struct))


@cache
def text_schema() -> pa.Schema:
    """The canonical schema with every decimal as text: how JSON is read, so that amounts
    are checked against the models' patterns before they become decimals."""

    def as_text(leaf: Leaf) -> pa.DataType:
        return pa.string() if pa.types.is_decimal(leaf[1]) else leaf[1]

    return pa.schema(
        [f.with_type(map_leaves(f.type, None, as_text, (f.name,))) for f in arrow_schema()]
    )


__all__ = [
    "MONEY_TEXT",
    "Hand",
    "JsonConstant",
    "JsonNumber",
    "PairSettlement",
    "Player",
    "RowResult",
    "SittingOut",
    "arrow_schema",
    "json_schema",
    "to_money",
]
