"""Ctrl-C held back while an audit is swapped in: once the new audit has replaced the old,
the run is done, and an interrupt that lands in that moment must not report it undone."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


@contextmanager
def interrupts_held() -> Iterator[list[int]]:
    """Within it, SIGINT is recorded (in the list yielded), not raised; outside the main
    thread, where signals cannot be handled, nothing changes."""
    held: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield held
        return

    def hold(signum: int, frame: FrameType | None) -> None:
        held.append(signum)

    previous = signal.signal(signal.SIGINT, hold)
    try:
        yield held
    finally:
        signal.signal(signal.SIGINT, previous)
