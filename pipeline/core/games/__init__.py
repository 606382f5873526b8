"""The games the audit knows, by the name a hand record gives its `variant`.

A game's behaviour is a property of its `Variant` (its family, layout, streets...);
code that works on many hands at once reads it per hand through `per_game`, by the
game's code (its place in `VARIANTS`), and never compares games by name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from pipeline.core.games.chinese import CHINESE
from pipeline.core.games.game import (
    HOME_RUN_NAMES,
    HOME_RUN_NONE,
    HOME_RUN_OPPONENT,
    HOME_RUN_SEAT,
    Family,
    Layout,
    Row,
    Streets,
    Variant,
)
from pipeline.core.games.open_face import OFC, PINEAPPLE
from pipeline.core.games.taiwanese import TAIWANESE, TAIWANESE_JOKERS

VARIANTS: dict[str, Variant] = {
    v.name: v for v in (TAIWANESE, TAIWANESE_JOKERS, CHINESE, OFC, PINEAPPLE)
}
# The layouts of rows and boards: a batch holds hands of one layout.
LAYOUTS: dict[Layout, Variant] = {Layout.taiwanese: TAIWANESE_JOKERS, Layout.chinese: CHINESE}
# Each game's code: its place in VARIANTS (what a batch stores per hand).
CODES: dict[str, int] = {name: code for code, name in enumerate(VARIANTS)}


def per_game(trait: Callable[[Variant], Any]) -> npt.NDArray[Any]:
    """A trait of every game by its code: index it with games' codes for it per hand
    (`per_game(lambda g: g.open_face)[codes]`)."""
    return np.array([trait(game) for game in VARIANTS.values()])


ROW_NAMES = TAIWANESE.row_names  # every game of the family names its rows so
SEATS = max(v.seats for v in VARIANTS.values())
MAX_PLAYERS = max(v.max_players for v in VARIANTS.values())

__all__ = [
    "CHINESE",
    "CODES",
    "HOME_RUN_NAMES",
    "HOME_RUN_NONE",
    "HOME_RUN_OPPONENT",
    "HOME_RUN_SEAT",
    "LAYOUTS",
    "MAX_PLAYERS",
    "ROW_NAMES",
    "SEATS",
    "TAIWANESE",
    "TAIWANESE_JOKERS",
    "VARIANTS",
    "Family",
    "Layout",
    "Row",
    "Streets",
    "Variant",
    "per_game",
]
