"""`handaudit generate`: tables of any game simulated hand by hand (`taiwanese.py`,
`chinese.py`, `open_face.py`), faults injected and listed (`faults.py`), written as
they go (`sink.py`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pipeline.core.games import TAIWANESE_JOKERS, VARIANTS, Family
from pipeline.core.games.chinese import SCORING
from pipeline.generate.chinese import simulate_chinese
from pipeline.generate.faults import FaultBook
from pipeline.generate.open_face import simulate_open_face
from pipeline.generate.shuffle import Dealer
from pipeline.generate.sink import FORMATS, Sink
from pipeline.generate.taiwanese import simulate_taiwanese
from pipeline.helpers.errors import AuditError
from pipeline.helpers.progress import Progress
from pipeline.ingest.sources import fault_list_of
from pipeline.storage.files import STDOUT, checked_target

__all__ = ["FORMATS", "Generated", "generate"]


@dataclass(frozen=True)
class Generated:
    hands: int
    lines: int
    faults: int
    path: Path
    faults_path: Path | None

    def said(self) -> str:
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
    fmt: str = "jsonl",
    progress: Progress | None = None,
    variant: str = "taiwanese",
    scoring: str = "1-6",
    dealer: Dealer | None = None,
) -> Generated:
    """Write `tables` x `hands` hands to `out` (and its fault list beside it, NAME.faults.json,
    when faults are asked).

    `variant` "taiwanese" deals Taiwanese and Taiwanese Jokers tables (`jokers` of them
    with jokers); "chinese" deals closed Chinese tables scored by `scoring`. `dealer`
    shuffles, fairly unless it is given a bias (`shuffle.py`).
    """
    games = ", ".join(name for name in VARIANTS if name != TAIWANESE_JOKERS.name)
    game = VARIANTS.get(variant)
    if game is None or game is TAIWANESE_JOKERS:
        raise AuditError(f"--variant is one of {games}, not {variant!r}.")
    if scoring not in SCORING:
        raise AuditError(f"--scoring is one of {', '.join(SCORING)}, not {scoring!r}.")
    _may_write(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    book = FaultBook(np.random.default_rng(seed + 1))
    lines = written = 0
    sink = Sink(out, fmt)
    # Typed Parquet cannot hold a cut line or a seat written as a word.
    unstorable = {"unreadable", "schema"} if fmt == "parquet" else set()
    try:
        if game.family is Family.chinese:
            hands_dealt = simulate_chinese(seed, tables, hands, fault_rate, scoring, dealer)
        elif game.open_face:
            hands_dealt = simulate_open_face(seed, tables, hands, fault_rate, game, dealer)
        else:
            hands_dealt = simulate_taiwanese(seed, tables, hands, jokers, fault_rate, dealer)
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


def _may_write(out: Path) -> None:
    """The history and its fault list may be written where asked: never over an audit."""
    if str(out) == STDOUT:
        raise AuditError("generate writes a file, and its fault list beside it: give --out FILE.")
    checked_target(out, "the hand history", makes_its_directory=True)
    checked_target(fault_list_of(out), "its fault list", makes_its_directory=True)
