"""Reading hand histories: files to blocks, blocks to records, records to validated columns."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.core.batch import HandBatch
from pipeline.ingest.decode import (
    Decoded,
    concat,
    decode_arrow,
    decode_lines,
    decode_objects,
    schema,
)
from pipeline.ingest.parts import LinesBlock, ObjectsBlock
from pipeline.ingest.quarantine import QuarantineCheck, Quarantined
from pipeline.ingest.sources import (
    FilePart,
    RowGroupsBlock,
    input_files,
    read_blocks,
)
from pipeline.ingest.validate import validate


@dataclass
class Accounting:
    """Counts for the runs table: every record read ends verified or quarantined."""

    read: int = 0
    verified: int = 0
    quarantined: int = 0
    by_check: dict[str, int] = field(default_factory=dict)

    def add(self, verified: int, rejects: list[Quarantined]) -> None:
        self.read += verified + len(rejects)
        self.verified += verified
        self.quarantined += len(rejects)
        for q in rejects:
            self.by_check[q.check.value] = self.by_check.get(q.check.value, 0) + 1

    def retell(self, check: QuarantineCheck, now: QuarantineCheck, n: int) -> None:
        """`n` records counted under `check` told as `now` (repeats found to conflict)."""
        if n:
            self.by_check[check.value] -= n
            self.by_check[now.value] = self.by_check.get(now.value, 0) + n
            if not self.by_check[check.value]:
                del self.by_check[check.value]

    def merge(self, other: Accounting) -> None:
        """Another part of the run's counts (a Spark unit's) added to these."""
        self.read += other.read
        self.verified += other.verified
        self.quarantined += other.quarantined
        for check, n in other.by_check.items():
            self.by_check[check] = self.by_check.get(check, 0) + n


def blocks(files: list[Path]) -> Iterator[FilePart]:
    """The blocks of input files (as `input_files` lists them), in file order."""
    for path in files:
        yield from read_blocks(path)


def decode(block: FilePart, threads: bool = True) -> Decoded:
    """A block's records in the canonical schema; an unreadable file is all rejects.

    `threads`: let Arrow's readers use their own threads (off when several blocks are
    decoded side by side, which keeps the cores from being oversubscribed).
    """
    if isinstance(block, RowGroupsBlock):
        return concat([decode(part, threads) for part in block.read(threads)])
    if isinstance(block, Quarantined):
        return Decoded(schema().empty_table(), [], [], [], [block])
    if isinstance(block, LinesBlock):
        return decode_lines(block, threads)
    if isinstance(block, ObjectsBlock):
        return decode_objects(block, threads)
    return decode_arrow(block)


__all__ = [
    "Accounting",
    "FilePart",
    "HandBatch",
    "QuarantineCheck",
    "Quarantined",
    "blocks",
    "decode",
    "input_files",
    "validate",
]
