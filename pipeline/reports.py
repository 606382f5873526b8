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
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline import __version__
from pipeline.errors import AuditError
from pipeline.games import VARIANTS
from pipeline.store import open_audit
from pipeline.text_table import text_table

SQL_DIR = Path(__file__).resolve().parent.parent / "sql"
FORMATS = ("table", "csv", "json", "parquet")
PARAMETERS = ("from_day", "to_day", "table_id", "player_id", "variant")


class ReportError(AuditError):
    """A report that does not exist, a database that is not there, or bad options."""


@dataclass(frozen=True)
class ReportSpec:
    name: str
    title: str
    question: str
    parameters: str
    totals: tuple[str, ...]
    sql: str


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
    ) -> Filters:
        """The filters as given on the command line; days are YYYY-MM-DD."""
        if variant is not None and variant not in VARIANTS:
            raise ReportError(f"--variant is one of {', '.join(VARIANTS)}, not {variant!r}.")
        try:
            first = date.fromisoformat(from_day) if from_day else None
            last = date.fromisoformat(to_day) if to_day else None
        except ValueError:
            raise ReportError(
                f"--from and --to are days such as 2026-11-29, not {from_day or to_day!r}."
            ) from None
        return cls(first, last, table_id, player_id, variant)

    def described(self) -> str:
        parts = [
            f"table {self.table_id}" if self.table_id else "",
            f"player {self.player_id}" if self.player_id else "",
            f"game {self.variant}" if self.variant else "",
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
            "row_count": self.rows.num_rows,
            "totals": {k: _plain(v) for k, v in self.totals.items()},
        }


def catalog(sql_dir: Path = SQL_DIR) -> dict[str, ReportSpec]:
    specs = {}
    for path in sorted(sql_dir.glob("*.sql")):
        text = path.read_text()
        header: dict[str, str] = {}
        for line in text.splitlines():
            if not line.startswith("--"):
                break
            key, _, value = line[2:].strip().partition(":")
            header[key.strip()] = value.strip()
        specs[path.stem] = ReportSpec(
            name=path.stem,
            title=header.get("title", path.stem),
            question=header.get("question", ""),
            parameters=header.get("parameters", "none"),
            totals=tuple(t.strip() for t in header.get("totals", "").split(",") if t.strip()),
            sql=text,
        )
    return specs


def listing() -> str:
    """A line for every report: its name, title and question."""
    lines = [f"{spec.name:<22} {spec.title}: {spec.question}" for spec in catalog().values()]
    lines.append(f"{'audit':<22} The audit at a glance, as one offline HTML file (--html)")
    return "\n".join(lines)


def run_report(db: Path, name: str, filters: Filters) -> ReportResult:
    specs = catalog()
    if name not in specs:
        raise ReportError(f"There is no report {name!r}; `handaudit report --list` names them.")
    spec = specs[name]
    with open_audit(db) as con:
        for parameter in PARAMETERS:
            value = getattr(filters, parameter)
            if isinstance(value, date):
                con.execute(f"SET VARIABLE {parameter} = CAST(? AS DATE)", [value.isoformat()])
            else:
                con.execute(f"SET VARIABLE {parameter} = ?", [value])
        try:
            rows = con.sql(spec.sql).to_arrow_table()
        except duckdb.Error as error:
            raise ReportError(f"The report {name} failed on {db}: {error}") from None
        first, last = con.execute("SELECT min(day), max(day) FROM hands").fetchone() or (None, None)
    start = filters.from_day or first
    end = filters.to_day or last
    period = f"{start} to {end} (UTC)" if start else "no hands in the audit"
    totals = {
        column: pc.sum(rows[column]).as_py()
        for column in spec.totals
        if column in rows.column_names
    }
    return ReportResult(
        spec, filters, rows, period, datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), totals
    )


def _plain(value: Any) -> Any:
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
        "",
    ]
    rows = result.rows
    if rows.num_rows == 0:
        lines.append("No activity")
        return "\n".join(lines)
    header = rows.column_names
    totals = None
    if result.totals:
        totals = ["total", *(result.totals.get(c, "") for c in header[1:])]
    numeric = [
        pa.types.is_integer(t) or pa.types.is_decimal(t) or pa.types.is_floating(t)
        for t in rows.schema.types
    ]
    cells = [list(row.values()) for row in rows.to_pylist()]
    lines.append(text_table(header, cells, numeric=numeric, totals=totals))
    return "\n".join(lines)


def write_report(result: ReportResult, fmt: str, output: Path | None) -> str | None:
    """Write the report; returns the text for stdout when there is no output file.

    CSV holds the header and rows only (the metadata goes to stderr); JSON wraps
    the rows in an envelope with the metadata; Parquet keeps it as key-value metadata.
    """
    if fmt not in FORMATS:
        raise ReportError(f"--format must be one of {', '.join(FORMATS)}, not {fmt!r}.")
    if fmt == "parquet":
        if output is None:
            raise ReportError("Parquet needs --output FILE.")
        table = result.rows.replace_schema_metadata({"handaudit": json.dumps(result.metadata())})
        pq.write_table(table, output)
        return None
    if fmt == "table":
        text = render_table(result) + "\n"
    elif fmt == "json":
        envelope = {
            **result.metadata(),
            "rows": [{k: _plain(v) for k, v in row.items()} for row in result.rows.to_pylist()],
        }
        text = json.dumps(envelope, indent=2) + "\n"
    else:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(result.rows.column_names)
        for row in result.rows.to_pylist():
            writer.writerow(["" if v is None else _plain(v) for v in row.values()])
        text = buffer.getvalue()
        meta = result.metadata()
        print(
            f"{meta['title']}; period {meta['period']}; filters: {meta['filters']}; "
            f"generated {meta['generated_at']} by {meta['version']}; totals: "
            f"{json.dumps(meta['totals'])}" + ("; No activity" if not meta["row_count"] else ""),
            file=sys.stderr,
        )
    if output is None:
        return text
    output.write_text(text)
    return None
