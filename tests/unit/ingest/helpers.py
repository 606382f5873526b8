"""Reading test inputs through the real ingest, and a valid record to spoil."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from pipeline.ingest import Accounting, HandBatch, Quarantined, read_hands
from tests.conftest import ROOT

WORKED = ROOT / "fixtures" / "worked_hands.jsonl"


def valid_hand() -> dict[str, Any]:
    """A correctly settled hand (the first worked example), fresh each call."""
    return copy.deepcopy(json.loads(WORKED.read_text().splitlines()[0]))


def ingest(*paths: Path) -> tuple[list[HandBatch], list[Quarantined], Accounting]:
    accounting = Accounting()
    batches, rejects = [], []
    for batch, quarantined in read_hands(list(paths)):
        accounting.add(len(batch), quarantined)
        batches.append(batch)
        rejects.extend(quarantined)
    return batches, rejects, accounting


def write_lines(path: Path, lines: list[str | bytes]) -> Path:
    path.write_bytes(b"\n".join(x if isinstance(x, bytes) else x.encode() for x in lines) + b"\n")
    return path
