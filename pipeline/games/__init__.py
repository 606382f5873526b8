"""The games the audit knows, by the name a hand record gives its `variant`."""

from __future__ import annotations

from pipeline.games.chinese import CHINESE
from pipeline.games.game import (
    HOME_RUN_NAMES,
    HOME_RUN_NONE,
    HOME_RUN_OPPONENT,
    HOME_RUN_SEAT,
    Row,
    Variant,
)
from pipeline.games.open_face import OFC, PINEAPPLE
from pipeline.games.taiwanese import TAIWANESE, TAIWANESE_JOKERS

VARIANTS: dict[str, Variant] = {
    v.name: v for v in (TAIWANESE, TAIWANESE_JOKERS, CHINESE, OFC, PINEAPPLE)
}
# The layouts of rows and boards: a batch holds hands of one layout.
LAYOUTS: dict[str, Variant] = {"taiwanese": TAIWANESE_JOKERS, "chinese": CHINESE}
ROW_NAMES = TAIWANESE.row_names  # every game of the family names its rows so
SEATS = max(v.seats for v in VARIANTS.values())
MAX_PLAYERS = max(v.max_players for v in VARIANTS.values())

__all__ = [
    "CHINESE",
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
    "Row",
    "Variant",
]
