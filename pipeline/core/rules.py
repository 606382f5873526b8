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
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from pipeline.core.games import VARIANTS, Variant

Ints = npt.NDArray[np.int64]
Flags = npt.NDArray[np.bool_]

STANDARD = "standard"
GAMES: tuple[Variant, ...] = tuple(VARIANTS.values())

# The keys each game's profile may set, with the contract's value (house-rules.md 2).
TAIWANESE_KEYS = ("boards", "row_points", "home_run_bonus", "floor_points")
# The keys this version audits; a profile that sets another is not audited: its hands
# are quarantined with `rules`, saying which key (never audited under the wrong rules).
AUDITED_KEYS = frozenset(TAIWANESE_KEYS)


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

    @property
    def digest(self) -> str:
        """What the profile is, whatever the file's layout: its game and values."""
        text = json.dumps({"game": self.variant.name, **self.values}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()

    @property
    def unaudited(self) -> tuple[str, ...]:
        """The keys it sets that this version does not audit yet."""
        return tuple(sorted(set(self.values) - AUDITED_KEYS))

    def value(self, key: str) -> Any:
        """The value of `key` under this profile: its own, else the contract's."""
        if key in self.values:
            return self.values[key]
        game = self.variant
        contract = {
            "boards": game.boards,
            "row_points": [row.points for row in game.rows],
            "home_run_bonus": game.home_run_bonus,
            "floor_points": game.floor_points,
        }
        return contract[key]


def standard_profiles() -> tuple[Profile, ...]:
    return tuple(Profile(STANDARD, code) for code in range(len(GAMES)))


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

    # --- names --------------------------------------------------------------------------
    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.profiles)

    def code(self, name: str, game: int) -> int | None:
        """The code of profile `name` for a hand of `game`: `standard` is the game's own."""
        if name == STANDARD:
            return game
        return next((c for c, p in enumerate(self.profiles) if p.name == name), None)

    def named(self, name: str) -> Profile | None:
        return next((p for p in self.profiles[len(GAMES) :] if p.name == name), None)

    @property
    def house(self) -> tuple[Profile, ...]:
        """The profiles a rules file declares (not the standard ones)."""
        return self.profiles[len(GAMES) :]


CONTRACT = RuleBook()


def micros(when: datetime | None) -> int | None:
    """A zoned time as microseconds since the epoch (None stays None)."""
    if when is None:
        return None
    return int(when.timestamp()) * 1_000_000 + when.microsecond
