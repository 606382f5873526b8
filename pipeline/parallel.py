"""Blocks of input audited on worker threads and handed back in input order.

Each block is decoded, validated and audited on its own (`audit_batch` is a
function of the batch alone), so blocks can run side by side. Threads rather than
processes: the heavy parts (Arrow's JSON and Parquet readers, numpy, the store's
DuckDB) run outside the GIL, and nothing has to be copied between processes.

The one thing a block cannot know alone is whether an earlier block verified the
same hand id. A block is therefore audited as if it were the first; when its
hand ids meet one verified earlier (rare: a repeated hand across blocks), it is
audited again, in order, against the ids verified so far. The output is the
serial run's, row for row.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from pipeline.audit import BatchAudit, audit_batch
from pipeline.ingest import Block, Quarantined, decode, validate
from pipeline.stages import NO_STAGES, Stages


@dataclass(frozen=True)
class AuditedBlock:
    audit: BatchAudit | None  # None when no record of the block was verified
    verified: int
    rejects: list[Quarantined]


def audit_block(
    block: Block, seen: set[str], stages: Stages = NO_STAGES, alone: bool = True
) -> AuditedBlock:
    """Decode, validate and audit one block; `seen` holds the hand ids verified before it,
    and gains those verified in it.

    `alone`: no other block is being audited at the same time, so the readers may
    use threads of their own.
    """
    with stages.stage("ingest and validation"):
        batch, rejects = validate(decode(block, threads=alone), seen)
    audit = audit_batch(batch, stages=stages) if len(batch) else None
    return AuditedBlock(audit, len(batch), rejects)


def _audit_first(block: Block, stages: Stages) -> tuple[AuditedBlock, set[str]]:
    """The block audited as if no hand were read before it, and the ids it verified."""
    ids: set[str] = set()
    return audit_block(block, ids, stages, alone=False), ids


def audit_blocks(
    blocks: Iterator[Block], workers: int = 1, stages: Stages = NO_STAGES
) -> Iterator[AuditedBlock]:
    """Every block audited, in input order; `workers` blocks at a time."""
    seen: set[str] = set()
    if workers <= 1:
        for block in blocks:
            yield audit_block(block, seen, stages)
        return

    def settle(block: Block, future: Future[tuple[AuditedBlock, set[str]]]) -> AuditedBlock:
        audited, ids = future.result()
        if seen.isdisjoint(ids):
            seen.update(ids)
            return audited
        return audit_block(block, seen, stages)

    # A few blocks in flight keep every worker busy while the caller stores the
    # last result; more would only hold memory.
    pending: deque[tuple[Block, Future[tuple[AuditedBlock, set[str]]]]] = deque()
    with ThreadPoolExecutor(workers, thread_name_prefix="audit") as pool:
        try:
            for block in blocks:
                pending.append((block, pool.submit(_audit_first, block, stages)))
                if len(pending) > workers:
                    yield settle(*pending.popleft())
            while pending:
                yield settle(*pending.popleft())
        finally:
            for _, future in pending:
                future.cancel()
