"""Tables built once per process, safe under worker threads, and open to being restored.

`@table` is `functools.cache` with two differences: a table is built by one thread
while the others wait for it (not built twice side by side), and the tables
built so far can be listed (`built`) and put back (`restore`). Where they are
kept between runs is not the evaluator's business (see `pipeline/engine/table_cache.py`).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Hashable
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")

Key = tuple[str, tuple[Hashable, ...]]

_BUILT: dict[Key, Any] = {}
_LOCK = threading.RLock()  # re-entrant: a table's build uses other tables


def table(build: Callable[P, T]) -> Callable[P, T]:
    """Memoize `build` by its (hashable, positional) arguments."""
    name = f"{build.__module__}.{build.__qualname__}"

    @functools.wraps(build)
    def get(*args: P.args, **kwargs: P.kwargs) -> T:
        if kwargs:
            raise TypeError(f"{name} takes positional arguments only")
        key: Key = (name, args)
        if key in _BUILT:
            return _BUILT[key]
        with _LOCK:
            if key not in _BUILT:
                _BUILT[key] = build(*args, **kwargs)
            return _BUILT[key]

    return get


def built() -> dict[Key, Any]:
    """Every table built (or restored) in this process so far."""
    with _LOCK:
        return dict(_BUILT)


def restore(tables: dict[Key, Any]) -> None:
    """Put back tables from an earlier `built()`; tables already present are kept."""
    with _LOCK:
        for key, value in tables.items():
            _BUILT.setdefault(key, value)
