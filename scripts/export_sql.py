"""Write the SQL files of sql/ that are made from the code (tests fail when they drift):
the fairness report's views, `sql/fairness/views.sql`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pipeline.outputs import fairness_views

SQL = Path(__file__).resolve().parent.parent / "sql"
TARGETS: dict[Path, Callable[[], str]] = {SQL / "fairness" / "views.sql": fairness_views.text}


if __name__ == "__main__":
    for target, text in TARGETS.items():
        target.write_text(text())
        print(f"wrote {target}")
