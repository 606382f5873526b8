"""The report tables are drawn as rich's Markdown table draws them (the renderer they
were drawn by before, kept here as the reference): any header, cells of text (wide,
combining, invisible characters among them), numbers and nulls, with or without totals.
(But for one case: a column all of whose text takes no cell, which rich crops to
nothing, and which is kept here.)"""

from __future__ import annotations

import io
from collections.abc import Sequence
from decimal import Decimal

from hypothesis import assume, given, settings
from hypothesis import strategies as st
from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from pipeline.helpers.display import cell, is_number
from pipeline.outputs.text_table import text_table


def _by_rich(
    header: Sequence[str],
    rows: Sequence[Sequence[object]],
    numeric: Sequence[bool] | None,
    totals: Sequence[object] | None,
) -> str:
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


TEXT = st.text(
    st.one_of(
        st.characters(codec="utf-8", exclude_categories=["Cs"]),
        st.sampled_from("中文한글ｶé\u0301\u200b\x1b\t\n "),
    ),
    max_size=12,
)
VALUE = st.one_of(
    st.none(),
    TEXT,
    st.integers(-(10**12), 10**12),
    st.decimals(
        allow_nan=False, allow_infinity=False, places=2, max_value=10**9, min_value=-(10**9)
    ),
)


@st.composite
def tables(
    draw: st.DrawFn,
) -> tuple[list[str], list[list[object]], list[bool] | None, list[object] | None]:
    n = draw(st.integers(1, 5))
    header = draw(st.lists(TEXT, min_size=n, max_size=n))
    rows: list[list[object]] = draw(st.lists(st.lists(VALUE, min_size=n, max_size=n), max_size=6))
    numeric = draw(st.none() | st.lists(st.booleans(), min_size=n, max_size=n))
    totals = draw(st.none() | st.lists(VALUE, min_size=n, max_size=n))
    return header, rows, numeric, None if totals is None else list(totals)


@settings(max_examples=400, deadline=None)
@given(tables())
def test_a_table_is_drawn_as_rich_draws_it(
    table: tuple[list[str], list[list[object]], list[bool] | None, list[object] | None],
) -> None:
    header, rows, numeric, totals = table
    lines = [header, *rows, *([totals] if totals is not None else [])]
    for column in zip(*lines, strict=True):
        texts = [cell(v) for v in column]
        assume(max(map(cell_len, texts)) > 0 or not any(texts))  # (the one case apart)
    assert text_table(header, rows, numeric=numeric, totals=totals) == _by_rich(
        header, rows, numeric, totals
    )


def test_a_report_of_thousands_of_rows_is_drawn_as_rich_draws_it() -> None:
    rows = [[f"T{i:05d}", i, Decimal(i) / 100, None if i % 7 else "中"] for i in range(3000)]
    header = ["table_id", "hands", "won", "note"]
    assert text_table(header, rows) == _by_rich(header, rows, None, None)
