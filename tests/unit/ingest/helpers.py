"""Reading test inputs through the real ingest, and a valid record to spoil."""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pipeline.core.batch import HandBatch
from pipeline.engine.parallel import audit_blocks
from pipeline.helpers.stages import NO_STAGES
from pipeline.ingest import Accounting, Quarantined, blocks, input_files
from tests.conftest import ROOT

WORKED = ROOT / "fixtures" / "worked_hands.jsonl"


def valid_hand() -> dict[str, Any]:
    """A correctly settled hand (the first worked example), fresh each call."""
    return copy.deepcopy(json.loads(WORKED.read_text().splitlines()[0]))


def ingest(*paths: Path) -> tuple[list[HandBatch], list[Quarantined], Accounting]:
    accounting = Accounting()
    batches, rejects = [], []
    for read in audit_blocks(blocks(input_files(list(paths))), 1, NO_STAGES, audit=False):
        accounting.add(read.verified, read.rejects)
        batches.extend(read.batches)
        rejects.extend(read.rejects)
    return batches, rejects, accounting


def write_lines(path: Path, lines: Sequence[str | bytes]) -> Path:
    path.write_bytes(b"\n".join(x if isinstance(x, bytes) else x.encode() for x in lines) + b"\n")
    return path
