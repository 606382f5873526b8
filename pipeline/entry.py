"""The `handaudit` command's entry: Ctrl-C is handled before anything heavy is imported.

Everything a command needs (Typer, DuckDB, Arrow) is imported after the handler is in
place, so that an interrupt while they load is told like any other; and the process
ends as soon as the command has said its last word, without the interpreter's
teardown, in which a Ctrl-C would kill it without a word.
"""

from __future__ import annotations

import os
import sys

from pipeline.helpers import interrupts
from pipeline.helpers.errors import ExitCode


def main() -> None:
    interrupts.install(sys.argv[1:])
    code: int | str | None = 0
    try:
        try:
            interrupts.pause_at("starting")
            from pipeline.cli import run

            code = run()
        finally:
            interrupts.settle()  # the command has ended: a Ctrl-C from now on is counted
    except SystemExit as done:
        code = done.code
    except KeyboardInterrupt:
        code = ExitCode.INTERRUPTED
    interrupts.pause_at("exiting")
    if interrupts.received():
        code = ExitCode.INTERRUPTED
        if interrupts.tell():
            print(f"handaudit: {interrupts.sentence()}", file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(int(code) if isinstance(code, int) else 1 if code else 0)
