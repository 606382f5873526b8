"""How input text is shown: literally, every invisible character escaped, CSV cells inert."""

from __future__ import annotations

import codecs

from hypothesis import given
from hypothesis import strategies as st

from pipeline.helpers.display import (
    FORBIDDEN,
    FORMULA_STARTS,
    first_forbidden,
    for_terminal,
    spreadsheet_safe,
    visible,
)

HOSTILE = [
    "[/bold] [red]x",
    "[red]redtext",
    "p\x1b]8;;http://x\x1b\\click\x1b]8;;\x1b\\",
    '=HYPERLINK("http://x","click")',
    "evil\u202egnp.exe",
    "\u2066isolated\u2069",
    "bell\x07",
    "del\x7f",
    "c1\x9b31m",
    ":smile:",
    "nl\nid",
]


@given(st.text())
def test_what_is_shown_prints_and_reads_back_as_the_text(text: str) -> None:
    shown = visible(text)
    assert all(c.isprintable() or c == " " for c in shown)
    if "\\" not in text:  # a literal backslash is shown as it is (see the module)
        assert codecs.decode(shown.encode("latin-1", "backslashreplace"), "unicode_escape") == text


@given(st.text())
def test_a_terminal_output_keeps_its_own_lines_and_nothing_else_raw(text: str) -> None:
    shown = for_terminal(text)
    assert shown.count("\n") == text.count("\n")
    assert all(c.isprintable() or c in " \n" for c in shown)


def test_the_hostile_ids_are_shown_escaped_or_as_they_are() -> None:
    assert visible("[red]redtext") == "[red]redtext"  # markup is not read: shown literally
    assert visible("p\x1b]8;;u\x1b\\") == "p\\x1b]8;;u\\x1b\\"
    assert visible("evil\u202egnp.exe") == "evil\\u202egnp.exe"
    assert visible("nl\nid") == "nl\\x0aid"
    assert visible("zero\u200bwidth") == "zero\\u200bwidth"  # invisible, so shown
    assert visible("Zoë 🂡") == "Zoë 🂡"


def test_every_hostile_id_that_a_terminal_would_obey_is_forbidden_in_ids() -> None:
    for text in HOSTILE:
        obeyed = any(not c.isprintable() for c in text)
        assert (FORBIDDEN.search(text) is not None) == obeyed, text
        assert (first_forbidden(text) is not None) == obeyed


@given(st.text())
def test_a_csv_cell_never_starts_a_formula(text: str) -> None:
    safe = spreadsheet_safe(text)
    assert not safe.startswith(FORMULA_STARTS)
    assert safe in (text, "'" + text)
