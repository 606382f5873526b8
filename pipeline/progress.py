"""A progress line on stderr for long runs: records read, hands per second. Quiet off a terminal."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    def __init__(
        self, stream: TextIO = sys.stderr, every: float = 0.25, enabled: bool | None = None
    ) -> None:
        self.stream = stream
        self.every = every
        self.enabled = stream.isatty() if enabled is None else enabled
        self.started = time.perf_counter()
        self.shown = 0.0
        self.read = 0
        self.verified = 0
        self.file = ""

    def update(self, *, read: int, verified: int, file: str = "") -> None:
        self.read, self.verified = read, verified
        self.file = file or self.file
        now = time.perf_counter()
        if self.enabled and now - self.shown >= self.every:
            self.shown = now
            rate = self.verified / max(now - self.started, 1e-9)
            self.stream.write(
                f"\r\033[Kverifying {self.file}: {self.read:,} records read, {rate:,.0f} hands/s"
            )
            self.stream.flush()

    def close(self, note: str = "") -> None:
        if self.enabled:
            self.stream.write("\r\033[K" + (note + "\n" if note else ""))
            self.stream.flush()

    @property
    def seconds(self) -> float:
        return time.perf_counter() - self.started
