"""Ctrl-C, told truthfully: whether the audit changed is known, not guessed.

The command line installs `on_interrupt` for SIGINT. The first Ctrl-C raises
KeyboardInterrupt where the run is (a DuckDB query in progress stops with an error of
its own, which the command line reads as the interrupt it is, since one was received);
later ones, while the run cleans up, are only counted. Within `interrupts_held` (the
swap of a new audit, an append's commit and checkpoint) a Ctrl-C is deferred to the
end of the section: what the section writes is written whole. Whoever publishes an
audit says so with `audit_written`, and the sentence follows from that alone.

For tests, `pause_at` stops the process at a named phase until it is interrupted
(`HANDAUDIT_PAUSE_AT` names the phase, `HANDAUDIT_PAUSE_FILE` is created when it is
reached), so that a test interrupts it there and nowhere else, without sleeping.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Protocol

# The phases a run may be paused at, in the order a `verify` meets them.
PHASES = (
    *("starting", "reading", "auditing", "inserting", "sealing"),
    *("committing", "checkpointing", "printing", "exiting", "cleaning"),
)
PAUSE_AT = "HANDAUDIT_PAUSE_AT"
PAUSE_FILE = "HANDAUDIT_PAUSE_FILE"

UNCHANGED = "interrupted: the audit is as it was"
NOTHING_WRITTEN = "interrupted: nothing was written"
# Commands that write no audit: an interrupt before they write says so, even while they
# load (before they can say it themselves, `speaks_of`).
NO_AUDIT = (("rules", "infer"), ("generate",))
WRITTEN = "interrupted after the audit was written: it holds this run"


class _State:
    received = 0  # Ctrl-Cs received
    holding = 0  # depth of `interrupts_held` sections
    deferred = False  # a Ctrl-C arrived within one, to be raised at its end
    written = False  # this run's audit is published
    told = False  # the interrupt was told the user
    unchanged = UNCHANGED  # what an interrupt before anything was published says


_state = _State()


def on_interrupt(signum: int, frame: FrameType | None) -> None:
    """The SIGINT handler: the first interrupt stops the run (at once, or at the end of a
    held section); the others are counted while it cleans up."""
    _state.received += 1  # the handler takes no lock: it may run while one is held
    if _state.received > 1:
        return
    if _state.holding:
        _state.deferred = True
        return
    raise KeyboardInterrupt


def install(argv: Sequence[str] = ()) -> None:
    """Handle SIGINT as `on_interrupt` says (from the main thread, as signals are), for a
    run of the command line `argv` that starts now."""
    _state.received, _state.holding = 0, 0
    _state.deferred = _state.written = _state.told = False
    words = tuple(argv)
    quiet = any(words[: len(command)] == command for command in NO_AUDIT)
    _state.unchanged = NOTHING_WRITTEN if quiet else UNCHANGED
    signal.signal(signal.SIGINT, on_interrupt)


def received() -> bool:
    """Whether this process was interrupted."""
    return _state.received > 0


def tell() -> bool:
    """Whether the interrupt is yet to be told (it is told once)."""
    told, _state.told = _state.told, True
    return not told


def settle() -> None:
    """From now on (the command has ended), a Ctrl-C is counted, not raised."""
    signal.signal(signal.SIGINT, _count)


def _count(signum: int, frame: FrameType | None) -> None:
    _state.received += 1


def audit_written() -> None:
    """This run's audit is published: an interrupt from now on leaves it written."""
    _state.written = True


def speaks_of(unchanged: str) -> None:
    """What an interrupt says for a command that writes no audit (`generate`)."""
    _state.unchanged = unchanged


def sentence() -> str:
    """What an interrupt did to the audit, in words."""
    return WRITTEN if _state.written else _state.unchanged


@contextmanager
def interrupts_held() -> Iterator[None]:
    """A section a Ctrl-C must not cut: one that arrives within it is raised at its end.
    Outside the main thread, where signals are not handled, nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, on_interrupt)  # the same, from the command line
    _state.holding += 1
    try:
        yield
    finally:
        _state.holding -= 1
        signal.signal(signal.SIGINT, previous)
    if not _state.holding and _state.deferred:
        _state.deferred = False
        raise KeyboardInterrupt


class _Connection(Protocol):
    def execute(self, query: str) -> object: ...


def pause_at(phase: str, con: _Connection | None = None) -> None:
    """For tests: when `HANDAUDIT_PAUSE_AT` names `phase` (among others, comma-separated),
    say so by writing the phase into the file `HANDAUDIT_PAUSE_FILE`, and wait for the
    next interrupt. Given `con`, the wait is DuckDB statements, one after another, as a
    Ctrl-C meets a run in a long one."""
    if phase not in os.environ.get(PAUSE_AT, "").split(","):
        return
    assert phase in PHASES, phase
    before = _state.received
    Path(os.environ[PAUSE_FILE]).write_text(phase)
    while con is not None and not _state.holding and _state.received == before:
        # DuckDB stops a statement it is running when interrupted (as a long one would
        # be); one that it does not stop ends within a tenth of a second or so.
        con.execute("SELECT sum(range) FROM range(100000000)")
    while _state.received == before:  # a signal ends the sleep at once
        time.sleep(0.01)
