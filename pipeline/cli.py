"""The `handaudit` command line: parse options, call one function, map errors to exit codes."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from pipeline.errors import AuditError, ExitCode

app = typer.Typer(
    name="handaudit",
    help="Audit Taiwanese Poker hand histories: re-evaluate, re-settle, flag every divergence.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback(invoke_without_command=True)
def handaudit(
    ctx: typer.Context,
    version: Annotated[bool, typer.Option("--version", help="Print the version and exit.")] = False,
) -> None:
    """Audit Taiwanese Poker hand histories: re-evaluate, re-settle, flag every divergence."""
    if version:
        from pipeline import __version__

        typer.echo(f"handaudit {__version__}")
        raise typer.Exit(0)
    if ctx.invoked_subcommand is None:
        typer.echo(ctx.get_help())


def fail(error: AuditError) -> typer.Exit:
    """Print an error for people on stderr and give the exit code it maps to."""
    typer.echo(f"handaudit: {error}", err=True)
    return typer.Exit(int(error.exit_code))


@app.command("evaluate")
def evaluate_command(
    hands: Annotated[Path, typer.Argument(help="A JSON Lines file of hand records.")],
    limit: Annotated[int, typer.Option(help="Show at most this many hands.")] = 5,
) -> None:
    """Evaluate every row of every player on both boards, beside the recorded values."""
    from pipeline.evaluate_file import evaluate_file
    from pipeline.table_cache import cached_tables

    try:
        with cached_tables():
            report = evaluate_file(hands, limit=limit)
    except AuditError as error:
        raise fail(error) from None
    typer.echo(report.text)
    raise typer.Exit(int(ExitCode.CLEAN if report.agree else ExitCode.FINDINGS))


@app.command("verify")
def verify_command(
    inputs: Annotated[
        list[Path],
        typer.Argument(help="Hand-history files or directories (JSON, JSON Lines, .gz, Parquet)."),
    ],
    out: Annotated[Path, typer.Option("--out", help="Where audit.duckdb is written.")] = Path(
        "audit"
    ),
    parquet: Annotated[
        bool, typer.Option("--parquet", help="Also write each table as Parquet in OUT/parquet/.")
    ] = False,
    workers: Annotated[
        int,
        typer.Option(
            "--workers",
            min=1,
            help="Blocks audited side by side (threads); the output does not depend on it.",
        ),
    ] = min(os.cpu_count() or 1, 4),
) -> None:
    """Ingest, re-evaluate, re-settle and compare; write the audit database.

    Exit 0 when nothing diverged, 1 when anything diverged or was quarantined,
    2 when the audit could not run.
    """
    import duckdb

    from pipeline.progress import Progress
    from pipeline.verify import verify

    try:
        summary = verify(inputs, out, parquet=parquet, progress=Progress(), workers=workers)
    except AuditError as error:
        raise fail(error) from None
    except (OSError, duckdb.IOException) as error:  # such as an output that cannot be written
        typer.echo(
            f"handaudit: {error}; no audit was written (one already in {out} is unchanged)",
            err=True,
        )
        raise typer.Exit(int(ExitCode.COULD_NOT_RUN)) from None
    except KeyboardInterrupt:
        typer.echo(f"handaudit: interrupted; the previous audit in {out} is unchanged", err=True)
        raise typer.Exit(130) from None
    typer.echo(summary.text())
    raise typer.Exit(int(ExitCode.CLEAN if summary.clean else ExitCode.FINDINGS))


@app.command("explain")
def explain_command(
    hand_id: Annotated[str, typer.Argument(help="The hand to explain.")],
    db: Annotated[Path, typer.Option("--db", help="The audit database.")] = Path(
        "audit/audit.duckdb"
    ),
) -> None:
    """Show one hand step by step: rows per board, pairs, rake, stacks, and its divergences."""
    from pipeline.explain import explain

    try:
        typer.echo(explain(db, hand_id))
    except AuditError as error:
        raise fail(error) from None


@app.command("generate")
def generate_command(
    out: Annotated[Path, typer.Option("--out", help="The file to write (its faults.json beside).")],
    tables: Annotated[int, typer.Option("--tables", min=1, help="How many tables.")] = 8,
    hands: Annotated[int, typer.Option("--hands", min=1, help="Hands per table.")] = 50,
    seed: Annotated[int, typer.Option("--seed", help="Same seed, same output.")] = 1,
    jokers: Annotated[
        float,
        typer.Option(
            "--jokers", min=0.0, max=1.0, help="Share of tables playing Taiwanese Jokers."
        ),
    ] = 0.5,
    faults: Annotated[
        float,
        typer.Option("--faults", min=0.0, max=1.0, help="Share of hands given a listed fault."),
    ] = 0.0,
    fmt: Annotated[str, typer.Option("--format", help="jsonl, json or parquet.")] = "jsonl",
) -> None:
    """Write a synthetic, correctly settled hand history (optionally with listed faults)."""
    from pipeline.generate.run import FORMATS, generate
    from pipeline.progress import Progress
    from pipeline.table_cache import cached_tables

    if fmt not in FORMATS:
        raise fail(AuditError(f"--format must be one of {', '.join(FORMATS)}, not {fmt!r}."))
    with cached_tables():
        result = generate(
            out,
            tables=tables,
            hands=hands,
            seed=seed,
            jokers=jokers,
            fault_rate=faults,
            fmt=fmt,
            progress=Progress(),
        )
    listed = (
        f"; {result.faults} faults listed in {result.faults_path}" if result.faults_path else ""
    )
    typer.echo(f"wrote {result.hands:,} hands to {result.path}{listed}", err=True)


@app.command("report")
def report_command(
    name: Annotated[str | None, typer.Argument(help="The report (see --list), or 'audit'.")] = None,
    db: Annotated[Path, typer.Option("--db", help="The audit database.")] = Path(
        "audit/audit.duckdb"
    ),
    from_day: Annotated[
        str | None, typer.Option("--from", help="First UTC day, YYYY-MM-DD.")
    ] = None,
    to_day: Annotated[str | None, typer.Option("--to", help="Last UTC day, YYYY-MM-DD.")] = None,
    table: Annotated[str | None, typer.Option("--table", help="Only this table.")] = None,
    player: Annotated[str | None, typer.Option("--player", help="Only this player.")] = None,
    fmt: Annotated[str, typer.Option("--format", help="table, csv, json or parquet.")] = "table",
    output: Annotated[Path | None, typer.Option("--output", help="Write here, not stdout.")] = None,
    html_file: Annotated[
        Path | None,
        typer.Option("--html", help="With 'audit': write the offline HTML audit report here."),
    ] = None,
    list_reports: Annotated[bool, typer.Option("--list", help="Name every report.")] = False,
) -> None:
    """Run a named SQL report from sql/, or write the HTML audit report."""
    from datetime import date

    from pipeline import reports

    try:
        if list_reports or name is None:
            for spec in reports.catalog().values():
                typer.echo(f"{spec.name:<22} {spec.title}: {spec.question}")
            typer.echo(f"{'audit':<22} The audit at a glance, as one offline HTML file (--html)")
            return
        if name == "audit":
            from pipeline.html_report import audit_report

            if html_file is None:
                raise reports.ReportError("The audit report is HTML: give --html FILE.")
            audit_report(db, html_file)
            typer.echo(f"wrote {html_file}", err=True)
            return
        try:
            filters = reports.Filters(
                date.fromisoformat(from_day) if from_day else None,
                date.fromisoformat(to_day) if to_day else None,
                table,
                player,
            )
        except ValueError:
            raise reports.ReportError(
                f"--from and --to are days such as 2026-11-29, not {from_day or to_day!r}."
            ) from None
        result = reports.run_report(db, name, filters)
        text = reports.write_report(result, fmt, output)
    except AuditError as error:
        raise fail(error) from None
    if text is not None:
        typer.echo(text, nl=False)


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        typer.echo("handaudit: interrupted", err=True)
        sys.exit(130)
