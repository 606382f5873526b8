"""Settings from the environment, read when a run needs them (never at import), each one
that cannot be read refused in a sentence that names it."""

from __future__ import annotations

import math
import os
import re

from pipeline.helpers.errors import AuditError

_SIZE = re.compile(r"\d+(\.\d+)?\s*([KMGT]i?B|B)", re.IGNORECASE)
LOCK_WAIT = ("HANDAUDIT_LOCK_WAIT", 30.0)
DUCKDB_MEMORY = ("HANDAUDIT_DUCKDB_MEMORY", "1GB")


class SettingError(AuditError):
    """An environment setting whose value cannot be read."""


def seconds(name: str, default: float) -> float:
    """A number of seconds, zero or more."""
    text = os.environ.get(name)
    if text is None:
        return default
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise SettingError(f"{name} is a number of seconds, 0 or more, not {text!r}.")
    return value


def size(name: str, default: str) -> str:
    """An amount of memory as DuckDB reads it (such as 1GB, 512MiB)."""
    text = os.environ.get(name, default).strip()
    if not _SIZE.fullmatch(text):
        raise SettingError(f"{name} is an amount of memory such as 1GB or 512MB, not {text!r}.")
    return text


def check() -> None:
    """Every setting read once, so that one that cannot be read stops any command before
    it starts, whichever setting that command needs."""
    seconds(*LOCK_WAIT)
    size(*DUCKDB_MEMORY)
