"""The ruleset of rules.md as data: row points, the Home Run, cover and floor, in points.

A table's money values (point value, rake rate and cap) come from each hand; these
are the numbers the rules fix for every table.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Ruleset:
    max_pair_points: int = 20  # 1 + 2 + 3 on two boards, and the Home Run's 8
    cover_points: int = 20  # per opponent: a dealt player must cover 20 x (n - 1) points
    floor_points: int = 60  # below this a player is not dealt in again until topped up
    min_players: int = 2
    max_players: int = 6


RULES = Ruleset()
