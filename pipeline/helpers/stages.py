"""Seconds spent per stage of a run (ingest, evaluation, scoring and money, checks, store)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")


class Stages:
    """Accumulates wall-clock seconds per named stage; cheap enough to leave on.

    With worker threads, a stage's seconds are summed over the threads that ran it,
    so the stages can add up to more than the run's wall-clock time.
    """

    def __init__(self, enabled: bool = True) -> None:
        self.seconds: dict[str, float] = {}
        self.enabled = enabled
        self._lock = threading.Lock()

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        if not self.enabled:
            yield
            return
        started = time.perf_counter()
        try:
            yield
        finally:
            spent = time.perf_counter() - started
            with self._lock:
                self.seconds[name] = self.seconds.get(name, 0.0) + spent

    def wrap(self, name: str, items: Iterator[T]) -> Iterator[T]:
        """Time the production of each item of an iterator (such as the ingest's batches)."""
        while True:
            with self.stage(name):
                try:
                    item = next(items)
                except StopIteration:
                    return
            yield item


NO_STAGES = Stages(enabled=False)  # for callers that do not time the stages: records nothing
