"""Named SQL reports from sql/: parameters bound as DuckDB variables, output for people or machines.

Each sql/NAME.sql starts with comments naming its title, question, parameters
and the columns it totals. The same files run in the DuckDB CLI (set the
variables with SET VARIABLE) or from Python; unset variables mean no filter.
"""

from __future__ import annotations

import csv
import io
import json
import sys
import textwrap
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline import __version__
from pipeline.core.games import VARIANTS
from pipeline.helpers.choices import ReportFormat
from pipeline.helpers.display import cell, for_terminal, spreadsheet_safe, visible
from pipeline.helpers.errors import AuditError
from pipeline.outputs.text_table import text_table
from pipeline.storage.files import checked_target, replaced_whole, write_whole
from pipeline.storage.store import audited_inputs, open_audit

SQL_DIR = Path(__file__).resolve().parents[2] / "sql"
FORMATS = tuple(ReportFormat)
PARAMETERS = ("from_day", "to_day", "table_id", "player_id", "variant")
# How the command line names the filters, for its sentences.
OPTIONS = {"from_day": "--from", "to_day": "--to", "variant": "--variant"}


class ReportError(AuditError):
    """A report that does not exist, a database that is not there, or bad options."""


@dataclass(frozen=True)
class ReportSpec:
    """A report as its file's header comment describes it.

    `total` names the columns of the report's total row and how each is formed; a
    report with a total ends its result with that row, its first column empty.
    `headline` is a sentence filled from the total row.
    """

    name: str
    title: str
    question: str
    parameters: str
    total: dict[str, str]
    headline: str
    sql: str
    notes: str = ""  # what the report can and cannot show, said before its rows
    options: frozenset[str] = frozenset()  # what it takes beyond the filters (registry)
    filtered: bool = True  # whether it takes the filters


@dataclass(frozen=True)
class Filters:
    from_day: date | None = None
    to_day: date | None = None
    table_id: str | None = None
    player_id: str | None = None
    variant: str | None = None

    @classmethod
    def parse(
        cls,
        from_day: str | None,
        to_day: str | None,
        table_id: str | None,
        player_id: str | None,
        variant: str | None = None,
        named: dict[str, str] = OPTIONS,
    ) -> Filters:
        """The filters as given on the command line (or the API, whose names for them
        `named` gives the sentences); days are YYYY-MM-DD."""
        if variant is not None and variant not in VARIANTS:
            raise ReportError(
                f"{named['variant']} is one of {', '.join(VARIANTS)}, not {variant!r}."
            )
        days = {}
        for name, text in (("from_day", from_day), ("to_day", to_day)):
            try:
                days[name] = date.fromisoformat(text) if text else None
            except ValueError:
                raise ReportError(
                    f"{named[name]} is a day such as 2026-11-29, not {text!r}."
                ) from None
        first, last = days["from_day"], days["to_day"]
        if first and last and first > last:
            raise ReportError(
                f"{named['from_day']} {first} comes after {named['to_day']} {last}: the "
                "period would hold no day."
            )
        return cls(first, last, table_id, player_id, variant)

    def described(self) -> str:
        parts = [
            f"table {visible(self.table_id)}" if self.table_id is not None else "",
            f"player {visible(self.player_id)}" if self.player_id is not None else "",
            f"game {self.variant}" if self.variant is not None else "",
        ]
        return ", ".join(p for p in parts if p) or "none"


@dataclass
class ReportResult:
    spec: ReportSpec
    filters: Filters
    rows: pa.Table
    period: str
    generated_at: str
    totals: dict[str, Any] = field(default_factory=dict)

    def metadata(self) -> dict[str, Any]:
        return {
            "report": self.spec.name,
            "title": self.spec.title,
            "question": self.spec.question,
            "period": self.period,
            "filters": self.filters.described(),
            "generated_at": self.generated_at,
            "version": f"handaudit {__version__}",
            **({"notes": self.spec.notes} if self.spec.notes else {}),
            "row_count": self.rows.num_rows,
            "totals": {k: plain(v) for k, v in self.totals.items()},
            **({"headline": self.headline()} if self.spec.headline else {}),
        }

    def headline(self) -> str:
        """The report's headline sentence, filled from its totals."""
        return self.spec.headline.format_map({k: cell(v) for k, v in self.totals.items()})


def catalog(sql_dir: Path = SQL_DIR) -> dict[str, ReportSpec]:
    return {path.stem: _spec(path.stem, path.read_text()) for path in sorted(sql_dir.glob("*.sql"))}


def _spec(name: str, text: str) -> ReportSpec:
    """The header comment: `-- key: value` lines, each continued by lines indented under it;
    under `total`, each continuing line is `column: how its total is formed`."""
    header: dict[str, list[str]] = {}
    key = ""
    for line in text.splitlines():
        if not line.startswith("--"):
            break
        body = line[2:]
        if body.startswith("   ") and key:
            header[key].append(body.strip())
            continue
        key, _, value = body.strip().partition(":")
        header[key.strip()] = [value.strip()]
    total = {}
    for line in header.get("total", [])[1:]:
        column, _, how = line.partition(":")
        total[column.strip()] = how.strip()
    return ReportSpec(
        name=name,
        title=" ".join(header.get("title", [name])),
        question=" ".join(header.get("question", [])),
        parameters=" ".join(header.get("parameters", ["none"])),
        total=total,
        headline=" ".join(header.get("headline", [])),
        sql=text,
    )


def run_report(db: Path, name: str, filters: Filters) -> ReportResult:
    specs = catalog()
    if name not in specs:
        raise ReportError(f"There is no report {name!r}; `handaudit report --list` names them.")
    spec = specs[name]
    with open_audit(db) as con:
        bind(con, filters)
        try:
            rows = con.sql(spec.sql).to_arrow_table()
        except duckdb.Error as error:
            raise ReportError(f"The report {name} failed on {db}: {error}") from None
        covered = period(con, filters)
    rows, totals = _split_total(spec, rows)
    return ReportResult(
        spec, filters, rows, covered, datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), totals
    )


def bind(con: duckdb.DuckDBPyConnection, filters: Filters) -> None:
    """The filters as the DuckDB variables the reports read (unset: no filter)."""
    for parameter in PARAMETERS:
        value = getattr(filters, parameter)
        if isinstance(value, date):
            con.execute(f"SET VARIABLE {parameter} = CAST(? AS DATE)", [value.isoformat()])
        else:
            con.execute(f"SET VARIABLE {parameter} = ?", [value])


def period(con: duckdb.DuckDBPyConnection, filters: Filters) -> str:
    """The days a report covers: its filters', else the audit's first and last."""
    first, last = con.execute("SELECT min(day), max(day) FROM hands").fetchone() or (None, None)
    start = filters.from_day or first
    end = filters.to_day or last
    return f"{start} to {end} (UTC)" if start else "no hands in the audit"


def _split_total(spec: ReportSpec, rows: pa.Table) -> tuple[pa.Table, dict[str, Any]]:
    """The report's rows, and its total row's columns that its header totals."""
    if not spec.total:
        return rows, {}
    last = rows.num_rows - 1
    if last < 0 or rows.column(0)[last].is_valid:
        raise ReportError(
            f"The report {spec.name} does not end with its total row (its first column empty), "
            "as its header says."
        )
    total = rows.slice(last).to_pylist()[0]
    unknown = sorted(set(spec.total) - set(total))
    if unknown:
        raise ReportError(f"The report {spec.name} totals columns it has not: {unknown}.")
    return rows.slice(0, last), {column: total[column] for column in spec.total}


def plain(value: Any) -> Any:
    """A value as JSON writes it: money and times as text, exact."""
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, datetime | date):
        return value.isoformat()
    return value


def render_table(result: ReportResult) -> str:
    """For a terminal: what the report is, its rows, its totals; 'No activity' when empty."""
    meta = result.metadata()
    lines = [
        f"{meta['title']}: {meta['question']}",
        f"period {meta['period']}; filters: {meta['filters']}; generated {meta['generated_at']} "
        f"by {meta['version']}",
        *([textwrap.fill(meta["notes"], 100)] if "notes" in meta else []),
        "",
    ]
    rows = result.rows
    if rows.num_rows == 0:
        lines.append("No activity")
        return "\n".join(lines)
    header = rows.column_names
    totals = None
    if result.totals:  # only the columns whose total adds up; the header says how
        totals = ["total", *(result.totals.get(c) for c in header[1:])]
    numeric = [_is_numeric(t) for t in rows.schema.types]
    cells = [list(row.values()) for row in rows.to_pylist()]
    lines.append(text_table(header, cells, numeric=numeric, totals=totals))
    if result.spec.headline:
        lines += ["", result.headline()]
    return "\n".join(lines)


def _is_numeric(kind: pa.DataType) -> bool:
    return pa.types.is_integer(kind) or pa.types.is_decimal(kind) or pa.types.is_floating(kind)


def csv_text(rows: pa.Table, *, raw: bool = False) -> str:
    """The header and rows as CSV; unless `raw`, a text cell that a spreadsheet would read
    as a formula gets a leading ' (numbers, negative amounts among them, stay numbers)."""
    guard = [not raw and not _is_numeric(t) for t in rows.schema.types]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(rows.column_names)
    for row in rows.to_pylist():
        writer.writerow(
            [
                "" if v is None else spreadsheet_safe(str(plain(v))) if g else plain(v)
                for v, g in zip(row.values(), guard, strict=True)
            ]
        )
    return buffer.getvalue()


def write_report(
    result: ReportResult, fmt: ReportFormat, output: Path | None, *, csv_raw: bool = False
) -> str | None:
    """Write the report; returns the text for stdout when there is no output file.

    CSV holds the header and rows only (the metadata goes to stderr), its text cells
    safe for spreadsheets unless `csv_raw`; JSON wraps the rows in an envelope with the
    metadata; Parquet keeps it as key-value metadata. JSON and Parquet are exact data.
    """
    if fmt == "parquet":
        if output is None:
            raise ReportError("Parquet needs --output FILE.")
        table = result.rows.replace_schema_metadata({"handaudit": json.dumps(result.metadata())})
        with replaced_whole(output) as partial:
            pq.write_table(table, partial)
        return None
    if fmt == "table":
        text = render_table(result) + "\n"
    elif fmt == "json":
        envelope = {
            **result.metadata(),
            "rows": [{k: plain(v) for k, v in row.items()} for row in result.rows.to_pylist()],
        }
        text = json.dumps(envelope, indent=2) + "\n"
    else:
        text = csv_text(result.rows, raw=csv_raw)
        meta = result.metadata()
        print(
            for_terminal(
                f"{meta['title']}; period {meta['period']}; filters: {meta['filters']}; "
                f"generated {meta['generated_at']} by {meta['version']}; totals: "
                f"{json.dumps(meta['totals'])}" + ("; No activity" if not meta["row_count"] else "")
            ),
            file=sys.stderr,
        )
    if output is None:
        return text
    write_whole(output, text)
    return None


def report_target(output: Path | None, fmt: ReportFormat, db: Path) -> Path | None:
    """Where the report goes (None: standard output), checked before it is run: never
    over the audit, a directory or a missing one; Parquet only to a file."""
    if output is None:
        if fmt == "parquet":
            raise ReportError("Parquet needs --output FILE.")
        return None
    what, binary = f"the report ({fmt})", fmt == "parquet"
    return checked_target(output, what, (db,), binary, inputs=audited_inputs(db))
