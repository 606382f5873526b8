"""What `rules infer --write` writes of a profile reads back as the profile scored: a
Fantasyland whose entry a search lowered holds entry cards for every top from it up."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.core.inference import candidate
from pipeline.core.readings import entry_table
from pipeline.core.rules import GAMES
from pipeline.engine.inferred import profile_lines
from pipeline.ingest.house_rules import RulesFileError, read_rules

PINEAPPLE = next(i for i, v in enumerate(GAMES) if v.name == "pineapple_ofc")


def _read_back(lines: list[str], folder: Path) -> dict[str, int]:
    lines = [*lines, "", "[[tables]]", 'match = "*"', 'profile = "x"', ""]
    path = folder / "written.toml"
    path.write_text("\n".join(lines))
    (profile,) = [p for p in read_rules(path).house if p.name == "x"]
    return entry_table(profile)


def test_a_lowered_entry_is_written_with_cards_for_every_top_it_earns(tmp_path: Path) -> None:
    # A search lowered the entry of a profile whose table began at aces (its lowest
    # count is what the queens and kings then deal, as `entry_table` scores them).
    land = {"entry": "QQ", "entry_cards": {"AA": 15, "trips": 16}}
    lowered = candidate(PINEAPPLE, {"fantasyland": land})
    assert _read_back(profile_lines("x", lowered), tmp_path) == entry_table(lowered)
    with pytest.raises(RulesFileError, match="entry_cards has no KK, QQ"):  # (as written before)
        _read_back(
            [
                "[profiles.x]",
                'game = "pineapple_ofc"',
                'fantasyland = { entry = "QQ", entry_cards = { AA = 15, trips = 16 } }',
            ],
            tmp_path,
        )
