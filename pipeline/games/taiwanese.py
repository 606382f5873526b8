"""Taiwanese Poker (rules.md): rows of 1, 2 and 4 on two boards, an Omaha bottom, 1/2/3
points a row and 8 for a Home Run; Taiwanese Jokers adds two wild jokers."""

from __future__ import annotations

from dataclasses import replace

from pipeline.evaluator import Plays
from pipeline.games.game import Row, Variant

ROWS = (
    Row("top", 1, Plays.ANY, 1),
    Row("middle", 2, Plays.ANY, 2),
    Row("bottom", 4, Plays.EXACTLY_TWO, 3),
)

TAIWANESE = Variant(
    "taiwanese",
    ROWS,
    boards=2,
    board_size=5,
    jokers=0,
    home_run_bonus=8,
    min_players=2,
    max_players=6,
    seats=6,
    floor_points=60,
)
TAIWANESE_JOKERS = replace(TAIWANESE, name="taiwanese_jokers", jokers=2)
