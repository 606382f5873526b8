"""handaudit: audit hand histories of Taiwanese Poker (and Taiwanese Jokers), closed
Chinese Poker, Open-Face Chinese and Pineapple, row by row and cent by cent.

From Python (a notebook): `audit = pipeline.open_audit("audit/audit.duckdb")`, then
`audit.report(name, **filters)`, `audit.hands()`, `audit.divergences()` and
`audit.explain(hand_id)` (see `pipeline.api`). The API is imported on first use, so the
command line and Spark's executors do not pay for polars.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pipeline.api import Audit, Report, open_audit

__version__ = "0.1.0"
__all__ = ["Audit", "Report", "__version__", "open_audit"]
_API = frozenset({"Audit", "Report", "open_audit"})


def __getattr__(name: str) -> Any:
    if name in _API:
        from pipeline import api

        return getattr(api, name)
    raise AttributeError(f"module 'pipeline' has no attribute {name!r}")
