"""Tables for people: Markdown pipe tables drawn by rich (a terminal, a ticket, a diff); each
cell's text is `display.cell`'s, drawn as plain text (never read as markup)."""

from __future__ import annotations

import io
from collections.abc import Sequence

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from pipeline.helpers.display import cell, is_number


def text_table(
    header: Sequence[str],
    rows: Sequence[Sequence[object]],
    *,
    numeric: Sequence[bool] | None = None,
    totals: Sequence[object] | None = None,
) -> str:
    """The rows under their header, numbers to the right, and a totals line when given.

    `numeric` says which columns hold numbers; by default, those whose first value
    that is not null is a number.
    """
    if numeric is None:
        firsts = [next((r[i] for r in rows if r[i] is not None), None) for i in range(len(header))]
        numeric = [is_number(v) for v in firsts]
    table = Table(box=box.MARKDOWN, show_footer=totals is not None, highlight=False)
    for i, name in enumerate(header):
        table.add_column(
            Text(cell(name)),
            justify="right" if numeric[i] else "left",
            footer=Text(cell(totals[i])) if totals is not None else "",
            no_wrap=True,
        )
    for row in rows:
        table.add_row(*(Text(cell(v)) for v in row))
    out = io.StringIO()
    console = Console(
        file=out, width=100_000, color_system=None, highlight=False, markup=False, emoji=False
    )
    console.print(table)
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines() if line.strip())
