"""`OUT/audit.duckdb` built from the Spark engine's Parquet while Spark still works.

Most tables are final once their unit is audited (`EARLY`: players, rows, settlements,
...): they are loaded on a thread of the driver as soon as the audit's tasks are done,
while the table rules and the finishing run. The rest (hands, quarantine, findings,
runs) are loaded once assembled. Should the early files not be the ones the tasks
report in the end (a unit audited again writes files of new names), the database
starts over with those.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

import duckdb

from pipeline.spark.written import Written, export_table
from pipeline.storage.ledger import write_failure
from pipeline.storage.store import ParquetLoad
from pipeline.storage.stored import EARLY

T = TypeVar("T")
# What the database makes of the tables it loads, written again to the dataset: the
# repeats told apart in `quarantine`, and the run sealed (`storage.chain`).
HELD = ("quarantine", "runs", "seals")


class Database:
    def __init__(self, out: Path) -> None:
        self.out = out
        self._load: ParquetLoad | None = None
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="duckdb")
        self._early: Future[None] | None = None
        self._early_files: set[str] = set()

    def start(self, root: str, files: Iterable[Written]) -> None:
        """Load `files` (below `root`) on the thread; they must stay until `wait`."""
        files = list(files)
        self._early_files = {f.path for f in files}
        self._early = self._thread.submit(self._files, root, files)

    def settle(self, root: str, files: Iterable[Written]) -> None:
        """The early tables are to be those of `files`: loaded already, or loaded again."""
        early = [f for f in files if f.table in EARLY]
        if self._early is not None and {f.path for f in early} == self._early_files:
            return
        self.discard()
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="duckdb")
        self._load = None
        self.start(root, early)

    def wait(self) -> None:
        """The early files loaded (or their failure raised)."""
        if self._early is not None:
            self._write(self._early.result)

    def finish(self, root: str, files: Iterable[Written]) -> Path:
        """The tables of `files` not loaded early loaded, the tables the database derives
        and seals (`HELD`: repeats are told apart only once all are loaded) written again
        below `root` as it holds them, and audit.duckdb published."""
        self.wait()
        rest = [f for f in files if f.path not in self._early_files]
        self._write(lambda: self._files(root, rest))
        self._write(lambda: self._as_held(root))
        return self._write(self._loaded().commit)

    def _as_held(self, root: str) -> None:
        """The tables the database derives or seals, below `root` as it holds them."""
        con = self._loaded().seal()
        for name in HELD:
            shutil.rmtree(Path(root) / name, ignore_errors=True)
            export_table(con, root, name, "")

    @property
    def conflicting(self) -> int:
        """The repeated hands of other content the database found (`repeats.py`)."""
        return self._load.conflicting if self._load is not None else 0

    def discard(self) -> None:
        self._thread.shutdown(wait=True, cancel_futures=True)
        if self._load is not None:
            self._load.discard()

    def _loaded(self) -> ParquetLoad:
        if self._load is None:
            self._load = ParquetLoad(self.out)
        return self._load

    def _files(self, root: str, files: list[Written]) -> None:
        by_table: dict[str, list[str]] = {}
        for file in files:
            if file.table == "hand_values":  # the store holds them from the start
                continue
            by_table.setdefault(file.table, []).append(f"{root}/{file.published}")
        load = self._loaded()
        for table, paths in by_table.items():
            load.load(table, paths)

    def _write(self, step: Callable[[], T]) -> T:
        try:
            return step()
        except duckdb.Error as error:
            raise write_failure(error, self.out) from None
