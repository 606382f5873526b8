"""How text that came from input is shown: the one rule every renderer follows.

Ids, sources, raw records and the messages that quote them are the operator's text,
not ours. On a terminal they are shown literally (never read as rich markup or emoji
codes) and every character that does not print, a control (C0, DEL, C1, ESC among
them), a bidirectional override or another invisible format character, is shown as
its escape (``\\x1b``, ``\\u202e``), so a recorded id cannot rewrite the screen. In a
CSV file a text cell that a spreadsheet would read as a formula is given a leading
``'`` (the OWASP advice); numbers stay numbers. JSON and Parquet outputs are data and
stay exact.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import date, datetime
from decimal import Decimal

# What an identifier may not hold (hand-history.md): the controls and the bidirectional
# overrides and isolates. Held by hand_history.py's JSON Schema and the ingest rule alike.
FORBIDDEN_IN_IDENTIFIERS = "\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069"
FORBIDDEN = re.compile(f"[{FORBIDDEN_IN_IDENTIFIERS}]")
# The first characters by which a spreadsheet starts a formula (OWASP, CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def escape(character: str) -> str:
    """One character as the escape a person can read and type: \\x1b, \\u202e, \\U000e0001."""
    code = ord(character)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def visible(text: str) -> str:
    """`text` with every character that does not print shown as its escape; a space stays.

    >>> visible("p-17")
    'p-17'
    >>> visible("a\\x1b]8;;http://x\\x1b\\\\b")
    'a\\\\x1b]8;;http://x\\\\x1b\\\\b'
    >>> visible("[red]x\\u202e")
    '[red]x\\\\u202e'
    """
    if text.isprintable():  # the usual case, decided in C
        return text
    return "".join(c if c.isprintable() or c == " " else escape(c) for c in text)


def for_terminal(text: str) -> str:
    """A whole output of ours for a terminal: its own line breaks kept, anything else that
    does not print escaped (the last guard; data is made visible where it is placed)."""
    return "\n".join(visible(line) for line in text.split("\n"))


def quoted(text: str) -> str:
    """Input text quoted in a sentence: visible, between quotes.

    >>> quoted("T\\x07")
    "'T\\\\x07'"
    """
    return f"'{visible(text)}'"


def first_forbidden(text: str) -> str | None:
    """The first character of `text` that an identifier may not hold, named; None if none.

    >>> first_forbidden("p\\u202eq")
    'U+202E RIGHT-TO-LEFT OVERRIDE'
    >>> first_forbidden("p\\x1b")
    'U+001B (a control character)'
    >>> first_forbidden("p-17") is None
    True
    """
    found = FORBIDDEN.search(text)
    if found is None:
        return None
    character = found.group()
    name = unicodedata.name(character, "")
    return f"U+{ord(character):04X} " + (name or "(a control character)")


def cell(value: object) -> str:
    """A value as a person reads it: nothing for null, dates in ISO form, exact decimals,
    text made visible."""
    if value is None:
        return ""
    if isinstance(value, datetime | date):
        return value.isoformat()
    return visible(str(value))


def is_number(value: object) -> bool:
    return isinstance(value, int | float | Decimal) and not isinstance(value, bool)


def spreadsheet_safe(text: str) -> str:
    """A CSV text cell that no spreadsheet reads as a formula.

    >>> spreadsheet_safe('=HYPERLINK("http://x","click")')
    '\\'=HYPERLINK("http://x","click")'
    >>> spreadsheet_safe("p-17")
    'p-17'
    """
    return "'" + text if text.startswith(FORMULA_STARTS) else text
