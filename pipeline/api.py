"""The audit from Python, for notebooks: `import pipeline`, then
`audit = pipeline.open_audit("audit/audit.duckdb")`.

Every report of `handaudit report` by the same name, with the same filters and the same
totals; the audited hands and the divergences; a hand explained as `handaudit explain`
tells it; and any query. Rows come back as polars DataFrames, read from DuckDB's Arrow
output with no copy through Python objects. Each call opens the audit read-only and
closes it again, so a notebook never holds the file against the next `verify --append`.

>>> audit = open_audit("audit/audit.duckdb")  # doctest: +SKIP
>>> audit.report("player_ledger", table_id="T1").rows  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any, TypedDict, Unpack

import duckdb
import polars as pl

from pipeline.outputs import registry
from pipeline.outputs.explain import explain as explained
from pipeline.outputs.reports import Filters, ReportError, ReportResult, bind, render_table
from pipeline.storage.store import open_audit as _connect

__all__ = ["Audit", "Report", "open_audit"]

Day = date | str | None


class FilterArgs(TypedDict, total=False):
    """The filters of every report, the hands and the divergences, as the command line's:
    UTC days inclusive (a date or YYYY-MM-DD), a table, a player, a game."""

    from_day: Day
    to_day: Day
    table_id: str | None
    player_id: str | None
    variant: str | None


FILTERS = tuple(FilterArgs.__annotations__)

# The hands the filters choose (the same variables the reports read).
_HANDS = """
SELECT * FROM hands
WHERE (getvariable('from_day') IS NULL OR day >= getvariable('from_day'))
  AND (getvariable('to_day') IS NULL OR day <= getvariable('to_day'))
  AND (getvariable('table_id') IS NULL OR table_id = getvariable('table_id'))
  AND (getvariable('variant') IS NULL OR variant = getvariable('variant'))
  AND (getvariable('player_id') IS NULL OR hand_id IN
       (SELECT hand_id FROM players WHERE player_id = getvariable('player_id')))"""
_DIVERGENCES = f"""
SELECT d.* FROM divergences d
WHERE (getvariable('from_day') IS NULL AND getvariable('to_day') IS NULL
       AND getvariable('table_id') IS NULL AND getvariable('variant') IS NULL
       AND getvariable('player_id') IS NULL)
   OR d.hand_id IN (SELECT hand_id FROM ({_HANDS}))
ORDER BY d.hand_id, d."check", d.seat NULLS FIRST, d.opponent NULLS FIRST"""


@dataclass(frozen=True)
class Report:
    """A report's rows, and what the command line prints around them."""

    name: str
    rows: pl.DataFrame
    totals: dict[str, Any]
    metadata: dict[str, Any]  # the JSON output's envelope: title, period, filters, ...
    text: str  # the report as `handaudit report NAME` prints it

    @property
    def headline(self) -> str:
        return str(self.metadata.get("headline", ""))

    def __str__(self) -> str:
        return self.text

    @classmethod
    def of(cls, result: ReportResult) -> Report:
        return cls(
            result.spec.name,
            _frame(result.rows),
            dict(result.totals),
            result.metadata(),
            render_table(result),
        )


class Audit:
    """An audit database, read-only (`open_audit`)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __repr__(self) -> str:
        return f"Audit({str(self.path)!r})"

    def reports(self) -> dict[str, str]:
        """Every report that returns rows, by name: its title."""
        return {
            name: spec.title
            for name, spec in registry.specs().items()
            if "html" not in spec.options
        }

    def report(
        self, name: str, *, alpha: float | None = None, **filters: Unpack[FilterArgs]
    ) -> Report:
        """The report `name` (see `reports()`), filtered as `handaudit report` filters
        (`FilterArgs`); `alpha` for 'fairness'. (The HTML audit is `page()`.)"""
        chosen = _filters(filters)
        if name in registry.specs() and "html" in registry.spec(name).options:
            raise ReportError(f"The {name} report is an HTML page: Audit.page() returns it.")
        if alpha is not None and (isinstance(alpha, bool) or not isinstance(alpha, int | float)):
            raise ReportError(f"alpha is a rate between 0 and 1, not {alpha!r}.")
        return Report.of(registry.run(self.path, name, chosen, alpha))

    def page(self, name: str = "audit") -> str:
        """A report that is a page, as its HTML text (`handaudit report audit --html`)."""
        return registry.page(self.path, name)

    def hands(self, **filters: Unpack[FilterArgs]) -> pl.DataFrame:
        """The audited hands the filters choose, a row each, as the `hands` table holds
        them."""
        return self._read(_HANDS + "\nORDER BY hand_id", _filters(filters))

    def divergences(self, **filters: Unpack[FilterArgs]) -> pl.DataFrame:
        """Every divergence found; with filters, those of the hands they choose."""
        return self._read(_DIVERGENCES, _filters(filters))

    def explain(self, hand_id: str) -> str:
        """One hand step by step, as `handaudit explain HAND_ID` tells it."""
        if not isinstance(hand_id, str):
            raise ReportError(f"A hand id is text, not {hand_id!r}.")
        return explained(self.path, hand_id)

    def sql(self, query: str, *parameters: object) -> pl.DataFrame:
        """Any query over the audit's tables and views (read-only)."""
        with self._connection() as con:
            try:
                relation = con.sql(query, params=list(parameters))
            except duckdb.Error as error:
                raise ReportError(f"The query failed on {self.path}: {error}") from None
            if relation is None:
                raise ReportError("The query returns no rows to show: give a SELECT.")
            return _frame(relation.to_arrow_table())

    def _read(self, query: str, filters: Filters) -> pl.DataFrame:
        with self._connection() as con:
            bind(con, filters)
            return _frame(con.sql(query).to_arrow_table())

    @contextmanager
    def _connection(self) -> Iterator[duckdb.DuckDBPyConnection]:
        con = _connect(self.path)
        try:
            yield con
        finally:
            con.close()


def open_audit(path: str | Path = "audit/audit.duckdb") -> Audit:
    """The audit database at `path` (checked to be one now: a clear error if not)."""
    audit = Audit(Path(path).absolute())  # the notebook may change directory later
    with audit._connection():
        pass
    return audit


def _filters(given: FilterArgs) -> Filters:
    """The filters, checked in the API's own words before the command line's checks."""
    unknown = sorted(set(given) - set(FilterArgs.__annotations__))
    if unknown:
        raise ReportError(f"No filter {unknown[0]!r}: the filters are {', '.join(FILTERS)}.")
    for name, value in given.items():
        a_day = name.endswith("_day") and isinstance(value, date | str)
        if value is not None and not a_day and not isinstance(value, str):
            kind = "a date or YYYY-MM-DD" if name.endswith("_day") else "text"
            raise ReportError(f"{name} is {kind}, not {value!r}.")

    def day(value: Day) -> str | None:
        if isinstance(value, datetime):
            raise ReportError(f"A day is a date (UTC), not the time {value.isoformat()}.")
        return value.isoformat() if isinstance(value, date) else value

    return Filters.parse(
        day(given.get("from_day")),
        day(given.get("to_day")),
        given.get("table_id"),
        given.get("player_id"),
        given.get("variant"),
        named={name: name for name in FILTERS},
    )


def _frame(table: Any) -> pl.DataFrame:
    try:
        frame = pl.from_arrow(table)
    except pl.exceptions.PolarsError as error:
        raise ReportError(
            f"polars cannot hold a column of this result ({error}); cast it in the query "
            "(an interval to text, say)."
        ) from None
    assert isinstance(frame, pl.DataFrame)
    return frame
