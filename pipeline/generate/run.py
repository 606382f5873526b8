"""`handaudit generate`: tables of any game simulated hand by hand (`taiwanese.py`,
`chinese.py`, `open_face.py`), faults injected and listed (`faults.py`), written as
they go (`sink.py`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.core.games import TAIWANESE_JOKERS, VARIANTS, Family, Variant
from pipeline.core.games.chinese import Scoring
from pipeline.generate.chinese import simulate_chinese
from pipeline.generate.faults import FaultBook
from pipeline.generate.house import House
from pipeline.generate.open_face import simulate_open_face
from pipeline.generate.shuffle import Dealer
from pipeline.generate.sink import FORMATS, Sink
from pipeline.generate.taiwanese import simulate_taiwanese
from pipeline.helpers.choices import HistoryFormat
from pipeline.helpers.errors import AuditError
from pipeline.helpers.progress import Progress
from pipeline.ingest.house_rules import read_rules
from pipeline.ingest.sources import fault_list_of
from pipeline.storage.files import STDOUT, checked_target

__all__ = ["FORMATS", "Generated", "generate", "house_of"]


@dataclass(frozen=True)
class Generated:
    hands: int
    lines: int
    faults: int
    path: Path
    faults_path: Path | None

    def sentence(self) -> str:
        """What was written, in a sentence."""
        listed = f"; {self.faults} faults listed in {self.faults_path}" if self.faults_path else ""
        return f"wrote {self.hands:,} hands to {self.path}{listed}"


def generate(
    out: Path,
    *,
    tables: int,
    hands: int,
    seed: int = 1,
    jokers: float = 0.5,
    fault_rate: float = 0.0,
    fmt: HistoryFormat = HistoryFormat.jsonl,
    progress: Progress | None = None,
    variant: str = "taiwanese",
    scoring: Scoring = Scoring.one_six,
    dealer: Dealer | None = None,
    house: House | None = None,
) -> Generated:
    """Write `tables` x `hands` hands to `out` (and its fault list beside it, NAME.faults.json,
    when faults are asked).

    `variant` "taiwanese" deals Taiwanese and Taiwanese Jokers tables (`jokers` of them
    with jokers); "chinese" deals closed Chinese tables scored by `scoring`. `dealer`
    shuffles, fairly unless it is given a bias (`shuffle.py`). `house`: a rules file's
    profile the tables are dealt and settled by, which their hands name (`variant` is
    its game's).
    """
    games = ", ".join(name for name in VARIANTS if name != TAIWANESE_JOKERS.name)
    game = VARIANTS[house.game] if house is not None else VARIANTS.get(variant)
    if game is None or (house is None and game is TAIWANESE_JOKERS):
        raise AuditError(f"--variant is one of {games}, not {variant!r}.")
    _may_write(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    book = FaultBook(np.random.default_rng(seed + 1))
    lines = written = 0
    sink = Sink(out, fmt)
    # Typed Parquet cannot hold a cut line or a seat written as a word.
    unstorable = {"unreadable", "schema"} if fmt == "parquet" else set()
    try:
        hands_dealt = _simulated(
            game, seed, tables, hands, jokers, fault_rate, scoring, dealer, house
        )
        for hand, fault in hands_dealt:
            for line in book.lines(hand, None if fault in unstorable else fault):
                sink.write(line)
                lines += 1
            book.written(hand)
            written += 1
            if progress:
                progress.update(read=written, verified=written, file=str(out))
    finally:
        sink.close()
        if progress:
            progress.close()
    faults_path = None
    if fault_rate > 0:
        faults_path = fault_list_of(out)
        faults_path.write_text(json.dumps([f.as_json() for f in book.listed], indent=1) + "\n")
    return Generated(written, lines, len(book.listed), out, faults_path)


def _simulated(
    game: Variant,
    seed: int,
    tables: int,
    hands: int,
    jokers: float,
    fault_rate: float,
    scoring: str,
    dealer: Dealer | None,
    house: House | None,
) -> Iterator[tuple[dict[str, Any], str | None]]:
    """The hands of `game`'s simulator, each with the fault it carries."""
    if game.family is Family.chinese:
        return simulate_chinese(seed, tables, hands, fault_rate, scoring, dealer, house)
    if game.open_face:
        return simulate_open_face(seed, tables, hands, fault_rate, game, dealer, house)
    if house is not None:  # the profile's game: every table with jokers, or none
        jokers = 1.0 if game.jokers else 0.0
    return simulate_taiwanese(seed, tables, hands, jokers, fault_rate, dealer, house)


def house_of(rules: Path | None, profile: str | None, variant: str | None) -> House | None:
    """The profile of a rules file that `generate --rules FILE --profile NAME` deals by."""
    if rules is None and profile is None:
        return None
    if rules is None or profile is None:
        raise AuditError("--rules and --profile go together: the file, and which of its profiles.")
    book = read_rules(rules)
    code = book.house_code(profile)
    if code is None:
        names = ", ".join(p.name for p in book.house) or "none"
        raise AuditError(
            f"The rules file {rules} has no profile {profile!r} (its profiles: {names})."
        )
    house = House(book, code, named=True)
    if variant is not None and variant != house.game:
        raise AuditError(f"Profile {profile} deals {house.game}, not --variant {variant}.")
    return house


def _may_write(out: Path) -> None:
    """The history and its fault list may be written where asked: never over an audit."""
    if str(out) == STDOUT:
        raise AuditError("generate writes a file, and its fault list beside it: give --out FILE.")
    checked_target(out, "the hand history", makes_its_directory=True)
    checked_target(fault_list_of(out), "its fault list", makes_its_directory=True)
