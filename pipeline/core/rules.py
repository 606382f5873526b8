"""House rules as data (house-rules.md): the profiles a run audits under, as arrays.

A hand's profile is an integer code into the run's `RuleBook`; every value a profile
may change is an array indexed by that code, which the vectorized stages read per
hand (`book.row_points[hands.profile]`), so that a batch mixing profiles is audited
in the same passes as one that plays the contract alone. Codes 0 to 4 are the
`standard` profile of each game (the contract as written), in the order of
`VARIANTS`; a rules file's profiles follow.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from functools import cached_property
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from pipeline.core.evaluator import Category
from pipeline.core.games import VARIANTS, Variant, chinese
from pipeline.core.games.chinese import ROYAL, ChineseRules
from pipeline.core.games.open_face import TRIPS, OpenFaceRules, contract_rules
from pipeline.helpers.kept import Kept

Ints = npt.NDArray[np.int64]
Flags = npt.NDArray[np.bool_]

STANDARD = "standard"
GAMES: tuple[Variant, ...] = tuple(VARIANTS.values())

RANKS = "23456789TJQKA"
NEVER = 99  # a category no row reaches: a row that is not listed for a stay


@dataclass(frozen=True)
class Profile:
    """One profile: its name, its game's code (into VARIANTS), and the values it sets
    (only those it changes, as the rules file gives them)."""

    name: str
    game: int
    values: dict[str, Any] = field(default_factory=dict)

    @property
    def variant(self) -> Variant:
        return GAMES[self.game]

    @cached_property
    def digest(self) -> str:
        """What the profile is, whatever the file's layout: its game and values (made
        once: a profile's values are not changed after it is made)."""
        text = json.dumps({"game": self.variant.name, **self.values}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()

    def named(self, name: str) -> Profile:
        """The same profile under another name (its digest kept: it is the same)."""
        renamed = replace(self, name=name)
        renamed.__dict__["digest"] = self.digest  # (the cached property's own place)
        return renamed

    def value(self, key: str) -> Any:
        """The value of `key` under this profile: its own, else the contract's."""
        if key in self.values:
            return self.values[key]
        return contract_value(self.variant, key)

    @property
    def changes(self) -> dict[str, Any]:
        """The values it sets that differ from the contract's (a table it gives counts
        as a change: it replaces the contract's whole)."""
        return {
            key: value
            for key, value in self.values.items()
            if value != contract_value(self.variant, key, missing=object())
        }


def contract_value(game: Variant, key: str, missing: Any = None) -> Any:
    """The contract's value of a profile's key for `game` (house-rules.md 2): `missing`
    for a key that is a table or has no value there (`cap`)."""
    scalars: dict[str, Any] = {
        "boards": game.boards,
        "row_points": [row.points for row in game.rows],
        "home_run_bonus": game.home_run_bonus,
        "floor_points": game.floor_points,
        "scoring": "1-6",
        "surrender": True,
        "surrender_points": chinese.DEFAULT_SURRENDER_POINTS,
        "naturals_between": "higher",
        "home_run": False,
        "wheel": "lowest",
        "middle": "high",
        "scoop_bonus": 3,
    }
    return scalars.get(key, missing)


def standard_profiles() -> tuple[Profile, ...]:
    """The contract's profile of each game, by game code (made once)."""
    return _STANDARD


_STANDARD = tuple(Profile(STANDARD, code) for code in range(len(GAMES)))


T = TypeVar("T")


@dataclass(frozen=True)
class TableEntry:
    """A `[[tables]]` entry: table ids matching the glob play `profile` (a code) for hands
    started in [start, end) (microseconds since the epoch; None: unbounded)."""

    match: str
    profile: str
    start: int | None = None
    end: int | None = None


@dataclass(frozen=True)
class RuleBook:
    """The profiles of a run, by code, and the tables they are mapped to."""

    profiles: tuple[Profile, ...] = field(default_factory=standard_profiles)
    tables: tuple[TableEntry, ...] = ()
    source: str | None = None  # the rules file, as given (None: the contract alone)

    def _per_profile(self, key: str) -> Ints:
        return np.array([p.value(key) for p in self.profiles], dtype=np.int64)

    # --- per profile code: index with hands' codes ---------------------------------------
    @cached_property
    def boards(self) -> Ints:
        return self._per_profile("boards")

    @cached_property
    def row_points(self) -> Ints:
        """(profiles, rows): the points of each row, per board."""
        return self._per_profile("row_points")

    @cached_property
    def home_run_bonus(self) -> Ints:
        return self._per_profile("home_run_bonus")

    @cached_property
    def floor_points(self) -> Ints:
        return self._per_profile("floor_points")

    @cached_property
    def cover_points(self) -> Ints:
        """The most a pair can move, which a dealt-in player must cover per opponent:
        boards x the row points + the Home Run (house-rules.md 2.1)."""
        return np.maximum(self.boards, 1) * self.row_points.sum(axis=1) + self.home_run_bonus

    @cached_property
    def open_face(self) -> OpenFaceRules:
        """Per profile: what an open-face hand pays and deals (house-rules.md 2.5)."""
        items = [_made(_open_face, p) for p in self.profiles]
        return OpenFaceRules(
            *(np.concatenate([getattr(i, f.name) for i in items]) for f in fields(OpenFaceRules))
        )

    @cached_property
    def chinese(self) -> ChineseRules:
        """Per profile: what a closed Chinese hand plays and pays (house-rules.md 2.2)."""
        items = [_made(_chinese, p) for p in self.profiles]
        return ChineseRules(
            *(np.concatenate([getattr(i, f.name) for i in items]) for f in fields(ChineseRules))
        )

    # --- names --------------------------------------------------------------------------
    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.profiles)

    def house_code(self, name: str) -> int | None:
        """The code of the rules file's profile `name` (None: the file declares none)."""
        codes = range(len(GAMES), len(self.profiles))
        return next((c for c in codes if self.profiles[c].name == name), None)

    def named(self, name: str) -> Profile | None:
        code = self.house_code(name)
        return None if code is None else self.profiles[code]

    @property
    def house(self) -> tuple[Profile, ...]:
        """The profiles a rules file declares (not the standard ones)."""
        return self.profiles[len(GAMES) :]


CONTRACT = RuleBook()


# A profile's values per game, as made last (`rules infer` makes many books of the
# same profiles: the standard ones and each candidate scored on many parts).
MADE_KEPT = 4096
_made_of: Kept[Any] = Kept(MADE_KEPT)


def _made(make: Callable[[Profile], T], profile: Profile) -> T:
    """`make(profile)`, kept a while by the profile's digest (a profile is not changed
    after it is made)."""
    made: T = _made_of.get((make.__name__, profile.digest), lambda: make(profile))
    return made


def _open_face(profile: Profile) -> OpenFaceRules:
    """One profile's open-face values: the contract's for its game, changed by its own."""
    rules = contract_rules(profile.variant)
    values = profile.values
    changed: dict[str, Any] = {}
    for key in ("scoop_bonus", "cap"):
        if key in values:
            changed[key] = np.array([values[key]])
    if "royalties" in values:  # a table given replaces every row; a row left out pays 0
        given = values["royalties"]
        changed["top_pair"] = _by_rank(given.get("top_pair", {}))
        changed["top_trips"] = _by_rank(given.get("top_trips", {}))
        for row in ("middle", "bottom"):
            changed[row] = _by_category(given.get(row, {}))
    land = values.get("fantasyland", {})
    if "entry" in land:
        changed["entry_rank"] = np.array([RANKS.index(land["entry"][0])])
    cards = land.get("entry_cards")
    if isinstance(cards, int):
        changed["entry_cards"] = np.full((1, TRIPS + 1), cards, dtype=np.int64)
    elif cards is not None:
        table = np.zeros((1, TRIPS + 1), dtype=np.int64)
        for key, n in cards.items():
            table[0, TRIPS if key == "trips" else RANKS.index(key[0])] = n
        changed["entry_cards"] = table
    if "stay" in land:
        stay = np.full((1, 3), NEVER, dtype=np.int64)
        for item in land["stay"]:
            row, category = item.split(":")
            r = ("top", "middle", "bottom").index(row)
            stay[0, r] = min(stay[0, r], Category[category])
        changed["stay_from"] = stay
    if "stay_cards" in land:
        changed["stay_cards"] = np.array([land["stay_cards"]])
    return OpenFaceRules(
        **{f.name: changed.get(f.name, getattr(rules, f.name)) for f in fields(rules)}
    )


def _chinese(profile: Profile) -> ChineseRules:
    """One profile's closed Chinese values: the contract's, changed by its own."""
    rules = chinese.contract_rules()
    values = profile.values
    changed: dict[str, Any] = {}
    if "scoring" in values:
        changed["two_four"] = np.array([values["scoring"] == "2-4"])
    if "surrender_points" in values:
        changed["surrender_points"] = np.array([values["surrender_points"]])
    if "surrender" in values:
        changed["surrender"] = np.array([values["surrender"]])
    if "royalties" in values:  # a table given replaces every row; a row left out pays 0
        given = values["royalties"]
        changed["royalties"] = np.stack(
            [_by_category(given.get(row, {}))[0] for row in ("top", "middle", "bottom")]
        )[None]
    if "naturals" in values:  # the table given replaces the contract's: others pay nothing
        points = np.full((1, len(chinese.NATURALS) + 1), -1, dtype=np.int64)
        points[0, 0] = 0
        for name, value in values["naturals"].items():
            points[0, chinese.NATURALS.index(name) + 1] = value
        changed["natural_points"] = points
    if "naturals_between" in values:
        changed["naturals_sum"] = np.array([values["naturals_between"] == "sum"])
    if "home_run" in values:
        changed["home_run"] = np.array([values["home_run"]])
    if "middle" in values:
        changed["middle_low"] = np.array([values["middle"] == "low"])
    if "wheel" in values:
        changed["wheel_second"] = np.array([values["wheel"] == "second"])
    return ChineseRules(
        **{f.name: changed.get(f.name, getattr(rules, f.name)) for f in fields(rules)}
    )


def _by_rank(points: dict[str, int]) -> Ints:
    table = np.zeros((1, 13), dtype=np.int64)
    for cards, value in points.items():
        table[0, RANKS.index(cards[0])] = value
    return table


def _by_category(points: dict[str, int]) -> Ints:
    """A row's royalty table: a royal flush pays as a straight flush unless it is listed."""
    table = np.zeros((1, ROYAL + 1), dtype=np.int64)
    for name, value in points.items():
        if name != "royal_flush":
            table[0, Category[name]] = value
    table[0, ROYAL] = points.get("royal_flush", table[0, Category.straight_flush])
    return table


def micros(when: datetime | None) -> int | None:
    """A zoned time as microseconds since the epoch (None stays None)."""
    if when is None:
        return None
    return int(when.timestamp()) * 1_000_000 + when.microsecond
