"""The evaluator's tables kept on disk between runs: about 1 s of building becomes 30 ms.

The file is named by a hash of the evaluator's source and of the library versions,
so a changed evaluator never reads tables built by another one. Anything wrong
with the file (missing, cut, unreadable, unwritable directory) only means the
tables are built again, as they would be without a cache.

HANDAUDIT_CACHE sets the directory (default: $XDG_CACHE_HOME/handaudit or
~/.cache/handaudit); HANDAUDIT_CACHE=off turns the cache off.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import platform
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from importlib import resources
from pathlib import Path

import numpy as np
import pyarrow as pa

from pipeline.core.evaluator import memo


def _sources() -> list[tuple[str, bytes]]:
    """The evaluator's source files and the cards', by name (read as resources: the
    package may be a zip shipped to Spark's executors)."""
    evaluator = resources.files("pipeline.core.evaluator")
    files = sorted((f for f in evaluator.iterdir() if f.name.endswith(".py")), key=lambda f: f.name)
    cards = resources.files("pipeline.core") / "cards.py"
    return [(f.name, f.read_bytes()) for f in [*files, cards]]


def cache_dir() -> Path | None:
    """Where the tables are kept, or None when the cache is off."""
    setting = os.environ.get("HANDAUDIT_CACHE")
    if setting is not None:
        return None if setting.strip().lower() in ("", "off", "0", "no") else Path(setting)
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        try:
            base = str(Path.home() / ".cache")
        except RuntimeError:  # no home directory to be found: no cache
            return None
    return Path(base) / "handaudit"


@cache
def _fingerprint() -> str:
    digest = hashlib.sha256()
    for name, source in _sources():
        digest.update(name.encode() + b"\0" + source)
    versions = (platform.python_version(), np.__version__, pa.__version__)
    digest.update(repr(versions).encode())
    return digest.hexdigest()[:16]


def cache_file() -> Path | None:
    folder = cache_dir()
    return None if folder is None else folder / f"evaluator-tables-{_fingerprint()}.pickle"


# The cache file this process restored, and when it was written: a process that audits
# again (a Spark worker, task after task) does not read the same file twice.
_restored: tuple[Path, float] | None = None


def load() -> int:
    """Restore the tables saved by an earlier run of the same evaluator; how many."""
    global _restored
    path = cache_file()
    if path is None or not path.is_file():
        return 0
    try:
        stamp = (path, path.stat().st_mtime)
    except OSError:
        return 0
    if stamp == _restored:
        return len(memo.built())
    try:
        with path.open("rb") as f:
            tables = pickle.load(f)
        if not isinstance(tables, dict):
            return 0
    except Exception:  # a cut or foreign file: build the tables instead
        return 0
    memo.restore(tables)
    _restored = stamp
    return len(tables)


def save() -> None:
    """Write every table built so far (atomically: a reader never sees half a file)."""
    path = cache_file()
    if path is None:
        return
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with partial.open("wb") as f:
            pickle.dump(memo.built(), f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(partial, path)
    except OSError:  # an unwritable directory or a full disk: the next run builds again
        partial.unlink(missing_ok=True)


@contextmanager
def cached_tables() -> Iterator[None]:
    """Restore the evaluator's tables before the work, and save any new ones after it."""
    load()
    before = len(memo.built())
    yield
    if len(memo.built()) > before:  # this work built tables the file did not have
        save()
