"""Blocks of input ingested and audited on worker threads, handed back in input order.

Each block is decoded, validated and audited on its own (`audit_batch` is a
function of the batch alone), so blocks can run side by side. Threads rather than
processes: the heavy parts (Arrow's JSON and Parquet readers, numpy, the store's
DuckDB) run outside the GIL, and nothing has to be copied between processes.

The one thing a block cannot know alone is whether an earlier block verified the
same hand id. A block is therefore audited as if it were the first; when its
hand ids meet one verified earlier (rare: a repeated hand across blocks), it is
audited again, in order, against the ids verified so far. The output is the
one-worker run's, row for row.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from pipeline.core.audit import BatchAudit, audit_batch
from pipeline.core.batch import HandBatch
from pipeline.core.rules import CONTRACT, RuleBook
from pipeline.helpers.stages import Stages
from pipeline.ingest import FilePart, Quarantined, decode, validate


@dataclass(frozen=True)
class AuditedBlock:
    batches: list[HandBatch]  # the verified records, a batch per layout of their games
    audits: list[BatchAudit]  # one per batch; none when not asked for
    rejects: list[Quarantined]

    @property
    def verified(self) -> int:
        return sum(len(batch) for batch in self.batches)


def audit_block(
    block: FilePart,
    seen: set[str],
    stages: Stages,
    alone: bool = True,
    audit: bool = True,
    book: RuleBook = CONTRACT,
) -> AuditedBlock:
    """Decode, validate and (with `audit`) audit one block; `seen` holds the hand ids
    verified before it, and gains those verified in it.

    `alone`: no other block is being audited at the same time, so the readers may
    use threads of their own.
    """
    with stages.stage("ingest and validation"):
        batches, rejects = validate(decode(block, threads=alone), seen, book)
    audits = [audit_batch(batch, stages=stages) for batch in batches] if audit else []
    return AuditedBlock(batches, audits, rejects)


def audit_blocks(
    blocks: Iterator[FilePart],
    workers: int,
    stages: Stages,
    audit: bool = True,
    seen: set[str] | None = None,
    book: RuleBook = CONTRACT,
) -> Iterator[AuditedBlock]:
    """Every block ingested and (with `audit`) audited, in input order; `workers` blocks
    at a time. `seen`: hand ids verified before the first block (none by default)."""
    verified: set[str] = set() if seen is None else seen

    def first(block: FilePart) -> tuple[AuditedBlock, set[str]]:
        """The block audited as if no hand were read before it, and the ids it verified."""
        ids: set[str] = set()
        return audit_block(block, ids, stages, workers <= 1, audit, book), ids

    def settle(block: FilePart, future: Future[tuple[AuditedBlock, set[str]]]) -> AuditedBlock:
        audited, ids = future.result()
        if verified.isdisjoint(ids):
            verified.update(ids)
            return audited
        return audit_block(block, verified, stages, workers <= 1, audit, book)

    # A few blocks in flight keep every worker busy while the caller stores the
    # last result; more would only hold memory. One worker runs them in turn.
    pending: deque[tuple[FilePart, Future[tuple[AuditedBlock, set[str]]]]] = deque()
    with ThreadPoolExecutor(workers, thread_name_prefix="audit") as pool:
        try:
            for block in blocks:
                pending.append((block, pool.submit(first, block)))
                if len(pending) > workers:
                    yield settle(*pending.popleft())
            while pending:
                yield settle(*pending.popleft())
        finally:
            for _, future in pending:
                future.cancel()
