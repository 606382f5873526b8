"""The rules file (house-rules.md 1): TOML read with `tomllib`, checked by pydantic models.

One model per game's parameters, so that the JSON Schema of a rules file
(`schemas/house-rules.schema.json`) comes from the same models that check it, as
the hand schema does. A file that fails is refused before any hand is read, in one
sentence naming the file, the profile and the key.
"""

from __future__ import annotations

import tomllib
from datetime import datetime
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)

from pipeline.core.evaluator import Category
from pipeline.core.games import VARIANTS
from pipeline.core.rules import (
    GAMES,
    STANDARD,
    Profile,
    RuleBook,
    TableEntry,
    micros,
    standard_profiles,
)
from pipeline.helpers.errors import AuditError
from pipeline.ingest.hand_history import TIMESTAMP_TEXT

RANKS = "23456789TJQKA"
PairName = Literal[tuple(r + r for r in RANKS)]  # type: ignore[valid-type]
TripsName = Literal[tuple(r * 3 for r in RANKS)]  # type: ignore[valid-type]
CategoryName = Literal[(*(c.name for c in Category), "royal_flush")]  # type: ignore[valid-type]
# The naturals a profile may list (house-rules.md 2.4), with their seed points.
NATURAL_SEED_POINTS = {
    "three_flushes": 3,
    "three_straights": 4,
    "six_and_a_half_pairs": 6,
    "four_triplets": 8,
    "full_colored": 10,
    "all_low_or_high": 12,
    "three_quads": 20,
    "three_straight_flushes": 24,
    "twelve_royals": 32,
    "dragon": 36,
    "pure_dragon": 108,
}
NaturalName = Literal[tuple(NATURAL_SEED_POINTS)]  # type: ignore[valid-type]
# The most any number of a profile may be: far above any house's, and far below what
# the integer arithmetic of the money could overflow on.
MOST = 1_000_000
Points = Annotated[int, Field(ge=0, le=MOST)]
RowPoints = Annotated[list[Annotated[int, Field(ge=1, le=MOST)]], Field(min_length=3, max_length=3)]
Cards = Annotated[int, Field(ge=13, le=17)]
EntryCardsKey = Literal[(*(r + r for r in RANKS), "trips")]  # type: ignore[valid-type]
Stay = Literal[  # type: ignore[valid-type]
    tuple(f"{row}:{c.name}" for row in ("top", "middle", "bottom") for c in Category)
]


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


class TaiwaneseRules(_Strict):
    """house-rules.md 2.1: Taiwanese Poker and Taiwanese Jokers."""

    game: Literal["taiwanese", "taiwanese_jokers"]
    boards: Literal[1, 2] | None = None
    row_points: RowPoints | None = None
    home_run_bonus: Points | None = None
    floor_points: Points | None = None


class ChineseRoyalties(_Strict):
    top: dict[CategoryName, Points] | None = None  # type: ignore[valid-type]
    middle: dict[CategoryName, Points] | None = None  # type: ignore[valid-type]
    bottom: dict[CategoryName, Points] | None = None  # type: ignore[valid-type]


class ChineseRules(_Strict):
    """house-rules.md 2.2: closed Chinese Poker."""

    game: Literal["chinese"]
    scoring: Literal["1-6", "2-4"] | None = None
    surrender: bool | None = None
    surrender_points: Points | None = None
    royalties: ChineseRoyalties | None = None
    naturals: dict[NaturalName, Points] | None = None  # type: ignore[valid-type]
    naturals_between: Literal["higher", "sum"] | None = None
    home_run: bool | None = None
    wheel: Literal["lowest", "second"] | None = None
    middle: Literal["high", "low"] | None = None


class OpenFaceRoyalties(_Strict):
    top_pair: dict[PairName, Points] | None = None  # type: ignore[valid-type]
    top_trips: dict[TripsName, Points] | None = None  # type: ignore[valid-type]
    middle: dict[CategoryName, Points] | None = None  # type: ignore[valid-type]
    bottom: dict[CategoryName, Points] | None = None  # type: ignore[valid-type]


class Fantasyland(_Strict):
    entry: PairName | None = None  # type: ignore[valid-type]
    entry_cards: Cards | dict[EntryCardsKey, Cards] | None = None  # type: ignore[valid-type]
    stay: list[Stay] | None = None  # type: ignore[valid-type]
    stay_cards: Cards | None = None


class OpenFaceRules(_Strict):
    """house-rules.md 2.5: Open-Face Chinese and Pineapple."""

    game: Literal["ofc", "pineapple_ofc"]
    scoop_bonus: Points | None = None
    royalties: OpenFaceRoyalties | None = None
    cap: Annotated[int, Field(ge=1, le=MOST)] | None = None
    fantasyland: Fantasyland | None = None

    @model_validator(mode="after")
    def _entry_cards_cover_entry(self) -> OpenFaceRules:
        """A table of entry cards names every pair from the entry up, and trips; a lower
        entry than the contract's needs such a table in Pineapple (house-rules.md 4)."""
        land = self.fantasyland or Fantasyland()
        entry = RANKS.index((land.entry or "QQ")[0])
        needed = {r + r for r in RANKS[entry:]} | {"trips"}
        cards = land.entry_cards
        if isinstance(cards, dict):
            missing = sorted(needed - set(cards), key=lambda k: (k == "trips", k))
            if missing:
                raise ValueError(f"fantasyland.entry_cards has no {', '.join(missing)}")
        elif cards is None and _progressive(self.game) and entry < RANKS.index("Q"):
            raise ValueError(
                f"fantasyland.entry {land.entry} is below QQ: give entry_cards for every pair "
                "from it to AA and trips"
            )
        return self


def _progressive(game: str) -> bool:
    """Whether the game's Fantasyland deals more cards for a stronger top (Pineapple)."""
    streets = VARIANTS[game].streets
    return streets is not None and streets.progressive


GameRules = Annotated[TaiwaneseRules | ChineseRules | OpenFaceRules, Field(discriminator="game")]


def _time(value: object) -> datetime:
    """A TOML date-time, or an RFC 3339 text with its zone: never a number."""
    if isinstance(value, datetime):
        return value
    if isinstance(value, str) and TIMESTAMP_TEXT.fullmatch(value):
        return datetime.fromisoformat(value.upper().replace("Z", "+00:00").replace(" ", "T"))
    raise ValueError(
        f"{value!r} is not an RFC 3339 time with its zone, such as 2026-11-01T00:00:00Z"
    )


Time = Annotated[datetime, BeforeValidator(_time)]


class TableMap(_Strict):
    """A `[[tables]]` entry: which tables (and when) play which profile."""

    match: str
    profile: str
    from_: Time | None = Field(None, alias="from")
    until: Time | None = None

    @model_validator(mode="after")
    def _zoned(self) -> TableMap:
        for key, when in (("from", self.from_), ("until", self.until)):
            if when is not None and when.tzinfo is None:
                raise ValueError(f"{key} {when.isoformat()} has no time zone (add Z)")
        return self


class RulesFile(_Strict):
    profiles: dict[str, GameRules] = Field(default_factory=dict)
    tables: list[TableMap] = Field(default_factory=list)


class RulesFileError(AuditError):
    """A rules file that cannot be used: one sentence naming the file, profile and key."""


def read_rules(path: Path) -> RuleBook:
    """The rule book of a rules file; RulesFileError says why it cannot be used."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise RulesFileError(f"The rules file {path} cannot be read: {error.strerror}.") from None
    except UnicodeDecodeError:
        raise RulesFileError(f"The rules file {path} is not UTF-8 text.") from None
    except tomllib.TOMLDecodeError as error:
        raise RulesFileError(f"The rules file {path} is not TOML: {error}.") from None
    return rule_book(data, str(path))


def rule_book(data: dict[str, Any], source: str) -> RuleBook:
    """The rule book of a rules file's contents, checked (house-rules.md 1 and 4)."""
    profiles = data.get("profiles", {})
    if isinstance(profiles, dict) and STANDARD in profiles:
        raise RulesFileError(
            f"The rules file {source}: profile standard is the contract itself; "
            "give the house's rules another name."
        )
    try:
        parsed = RulesFile.model_validate(data)
    except ValidationError as error:
        raise RulesFileError(f"The rules file {source}: {_where(error)}.") from None
    names = set(parsed.profiles) | {STANDARD}
    for i, entry in enumerate(parsed.tables):
        if entry.profile not in names:
            raise RulesFileError(
                f"The rules file {source}: tables entry {i + 1} (match {entry.match!r}) names "
                f"profile {entry.profile!r}, which the file does not declare."
            )
    codes = {name: code for code, name in enumerate(VARIANTS)}
    house = tuple(
        Profile(name, codes[rules.game], _values(rules)) for name, rules in parsed.profiles.items()
    )
    return RuleBook(
        standard_profiles() + house,
        tuple(
            TableEntry(e.match, e.profile, micros(e.from_), micros(e.until)) for e in parsed.tables
        ),
        source,
    )


def _values(rules: BaseModel) -> dict[str, Any]:
    values = rules.model_dump(mode="json", exclude_none=True, exclude={"game"})
    return dict(sorted(values.items()))


def _where(error: ValidationError) -> str:
    """The first problem of a rules file, as "profile P, key K: why"."""
    first = error.errors()[0]
    loc = [str(part) for part in first["loc"]]
    if loc[:1] == ["profiles"] and len(loc) >= 2:
        profile, rest = loc[1], [p for p in loc[2:] if p not in _GAME_TAGS]
        where = f"profile {profile}" + (f", key {'.'.join(rest)}" if rest else "")
    elif loc[:1] == ["tables"] and len(loc) >= 2:
        where = f"tables entry {int(loc[1]) + 1}" + (f", key {loc[2]}" if len(loc) > 2 else "")
    else:
        where = f"key {'.'.join(loc)}" if loc else "the file"
    why = first["msg"].removeprefix("Value error, ")
    if first["type"] == "extra_forbidden":
        why = "not a key of the rules contract (house-rules.md 2)"
    elif first["type"] == "union_tag_invalid":
        why = f"game must be one of {', '.join(g.name for g in GAMES)}"
    elif first["type"] == "union_tag_not_found":
        why = "every profile names its game"
    return f"{where}: {why}"


_GAME_TAGS = {"taiwanese", "taiwanese_jokers", "chinese", "ofc", "pineapple_ofc"}


def json_schema() -> dict[str, Any]:
    """The JSON Schema of a rules file, as written to schemas/house-rules.schema.json."""
    schema = RulesFile.model_json_schema(mode="validation", by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "House rules: profiles of the games' values, and the tables that play them"
    return schema


def table_fits(entry: TableEntry, table_id: str) -> bool:
    """Whether a table id fits an entry's glob (fnmatch, case-sensitive)."""
    return fnmatchcase(table_id, entry.match)
