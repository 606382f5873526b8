"""Progress of a long run on stderr (records read, hands a second), drawn by rich; quiet
off a terminal, so logs and pipes get the summary alone."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from rich.console import Console
from rich.progress import Progress as Bar
from rich.progress import SpinnerColumn, TextColumn, TimeElapsedColumn

from pipeline.helpers.display import visible


class Progress:
    def __init__(self, stream: TextIO | None = None, enabled: bool | None = None) -> None:
        stream = stream or sys.stderr  # the one of the moment, not of import
        self.enabled = stream.isatty() if enabled is None else enabled
        self.started = time.perf_counter()
        self._bar = Bar(
            SpinnerColumn(),
            TextColumn("{task.description}", markup=False),
            TimeElapsedColumn(),
            console=Console(file=stream),
            transient=True,
            disable=not self.enabled,
        )
        self._task = self._bar.add_task("starting", total=None)
        self.steps: dict[str, float] = {}
        self._step: tuple[str, float] | None = None
        if self.enabled:
            self._bar.start()

    def update(self, *, read: int, verified: int, file: str = "") -> None:
        """Say how far the run is: records read so far, and the rate of verified hands."""
        rate = verified / max(self.seconds, 1e-9)
        where = f"{visible(file)}: " if file else ""
        self._bar.update(
            self._task, description=f"{where}{read:,} records read, {rate:,.0f} hands/s"
        )

    def step(self, description: str) -> None:
        """Say which step a run is at, when it cannot count records as it goes; `steps`
        keeps the seconds each took."""
        now = time.perf_counter()
        if self._step is not None:
            name, began = self._step
            self.steps[name] = self.steps.get(name, 0.0) + now - began
        self._step = (description, now)
        self._bar.update(self._task, description=description)

    def close(self) -> None:
        self.step("done")
        self._bar.stop()

    @property
    def seconds(self) -> float:
        return time.perf_counter() - self.started
