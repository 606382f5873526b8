"""Tables for people: Markdown pipe tables (a terminal, a ticket, a diff); each cell's text
is `display.cell`'s, one line that prints, measured in terminal cells (a wide character
takes two). Drawn here rather than by rich's table, which gives the same text but lays
out every cell as a renderable: seconds for a report of thousands of tables."""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len

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

    >>> print(text_table(["player", "won"], [["p1", 12], ["p22", -3]], totals=["", 9]))
    | player | won |
    |--------|-----|
    | p1     |  12 |
    | p22    |  -3 |
    |--------|-----|
    |        |   9 |
    """
    if numeric is None:
        firsts = [next((r[i] for r in rows if r[i] is not None), None) for i in range(len(header))]
        numeric = [is_number(v) for v in firsts]
    lines = [[cell(v) for v in header], *([cell(v) for v in row] for row in rows)]
    if totals is not None:
        lines.append([cell(v) for v in totals])
    sizes = [[cell_len(text) for text in line] for line in lines]
    widths = [max(column) for column in zip(*sizes, strict=True)]
    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    drawn = []
    for line, size in zip(lines, sizes, strict=True):
        padded = (
            _right(text, w) if right else text + " " * (w - n)
            for text, n, w, right in zip(line, size, widths, numeric, strict=True)
        )
        drawn.append("| " + " | ".join(padded) + " |")
    drawn.insert(1, rule)
    if totals is not None:
        drawn.insert(-1, rule)
    return "\n".join(drawn)


def _right(text: str, width: int) -> str:
    """`text` to the right of `width` cells, its trailing spaces dropped (as rich does)."""
    text = text.rstrip(" ")
    return " " * (width - cell_len(text)) + text
