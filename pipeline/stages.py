"""Seconds spent per stage of a run (ingest, evaluation, scoring and money, checks, store)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")


class Stages:
    """Accumulates wall-clock seconds per named stage; cheap enough to leave on."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - started

    def wrap(self, name: str, items: Iterator[T]) -> Iterator[T]:
        """Time the production of each item of an iterator (such as the ingest's batches)."""
        while True:
            with self.stage(name):
                try:
                    item = next(items)
                except StopIteration:
                    return
            yield item


NO_STAGES = Stages()
