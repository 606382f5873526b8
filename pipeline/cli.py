"""The `handaudit` command line: parse options, call one function, map errors to exit codes."""

from __future__ import annotations

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

    try:
        report = evaluate_file(hands, limit=limit)
    except AuditError as error:
        raise fail(error) from None
    typer.echo(report.text)
    raise typer.Exit(int(ExitCode.CLEAN if report.agree else ExitCode.FINDINGS))


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        typer.echo("handaudit: interrupted", err=True)
        sys.exit(130)
