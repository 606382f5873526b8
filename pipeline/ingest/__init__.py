"""Reading hand histories: files to blocks, blocks to records, records to validated columns."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.ingest.batch import HandBatch
from pipeline.ingest.decode import decode_arrow, decode_lines, decode_objects
from pipeline.ingest.quarantine import Check, Quarantined
from pipeline.ingest.sources import ArrowBlock, LinesBlock, ObjectsBlock, input_files, read_blocks
from pipeline.ingest.validate import validate


@dataclass
class Accounting:
    """Counts for the runs table: every record read ends verified or quarantined."""

    read: int = 0
    verified: int = 0
    quarantined: int = 0
    by_check: dict[str, int] = field(default_factory=dict)

    def add(self, batch: HandBatch, rejects: list[Quarantined]) -> None:
        self.read += len(batch) + len(rejects)
        self.verified += len(batch)
        self.quarantined += len(rejects)
        for q in rejects:
            self.by_check[q.check.value] = self.by_check.get(q.check.value, 0) + 1


def read_hands(paths: list[Path]) -> Iterator[tuple[HandBatch, list[Quarantined]]]:
    """Validated batches of every input file, in file order, with their rejects.

    Raises InputError (before reading anything) when a path does not exist.
    """
    seen: set[str] = set()
    for path in input_files(paths):
        for block in read_blocks(path):
            if isinstance(block, Quarantined):
                yield validate_empty(), [block]
                continue
            if isinstance(block, LinesBlock):
                decoded = decode_lines(block)
            elif isinstance(block, ObjectsBlock):
                decoded = decode_objects(block)
            else:
                assert isinstance(block, ArrowBlock)
                decoded = decode_arrow(block)
            yield validate(decoded, seen)


def validate_empty() -> HandBatch:
    from pipeline.ingest.decode import Decoded, schema

    batch, _ = validate(Decoded(schema().empty_table(), [], [], []), set())
    return batch


__all__ = ["Accounting", "Check", "HandBatch", "Quarantined", "read_hands"]
