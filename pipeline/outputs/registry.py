"""Every report by name, and how it runs: the SQL reports of sql/, the deal fairness tests
and the HTML audit. The command line and the Python API list and run reports through
this table alone.

A report's spec says what it is and which options it takes beyond the filters: the
fairness report a false-alarm rate (`alpha`), the HTML audit a page (`html`) and no
filters. The two programs are imported when run (the fairness tests bring SciPy in).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pipeline.outputs.reports import (
    Filters,
    ReportError,
    ReportResult,
    ReportSpec,
    catalog,
    run_report,
)

ALPHA = 0.01  # the fairness report's family-wise false-alarm rate when none is given

FAIRNESS = ReportSpec(
    name="fairness",
    title="Deal fairness",
    question="Was the deck fair, and was any seat or player favoured?",
    parameters="from_day, to_day (UTC dates, inclusive), table_id, player_id, variant; alpha",
    total={},
    headline=(
        "{tests} tests made ({insufficient} with insufficient data); {flagged} flagged at a "
        "family-wise false-alarm rate of {alpha} (Holm, half the rate for the deal's tests, "
        "shared alike by their kinds, and half for the players, those too few hands left "
        "untested included)"
    ),
    sql="",
    notes=(
        "These tests look for what a fair shuffle would rarely make: a seat (or, with --player,"
        " a player) dealt some suits, ranks, cards or jokers more or less often than the deck "
        "allows, over the whole table, in its most favoured cell or seat by seat; consecutive "
        "hands of a table that share more (or fewer) cards than independent shuffles would; a "
        "deal dealt twice; a board place, an open-face player's place in the deal or the last "
        "seat dealt that favours some card; consecutive cards dealt to an open-face player that"
        " follow each other; a player with more Home Runs, scoops, naturals or Fantasyland "
        "entries than the other players of the same tables. A flag says a pattern is unlikely "
        "under a fair deal, at the family-wise false-alarm rate stated, over the tests made; it"
        " does not say how it came about. A clean report does not certify the shuffle: a weak "
        "bias, or one that ties cards to nothing counted here (a predictable but uniform "
        "shuffle, a leak of other players' cards), passes unseen. Tests with too few hands say "
        "'insufficient data'."
    ),
    options=frozenset({"alpha"}),
)
AUDIT_PAGE = ReportSpec(
    name="audit",
    title="The audit at a glance",
    question="What did the audit find, in one offline HTML file?",
    parameters="none (the whole audit)",
    total={},
    headline="",
    sql="",
    options=frozenset({"html"}),
    filtered=False,
)
# Where each program is: module, function.
_PROGRAMS = {
    FAIRNESS.name: ("pipeline.outputs.fairness", "fairness_report"),
    AUDIT_PAGE.name: ("pipeline.outputs.html_report", "audit_report"),
}


def specs() -> dict[str, ReportSpec]:
    """Every report, the SQL ones first, by name."""
    return {**catalog(), FAIRNESS.name: FAIRNESS, AUDIT_PAGE.name: AUDIT_PAGE}


def spec(name: str) -> ReportSpec:
    found = specs().get(name)
    if found is None:
        raise ReportError(f"There is no report {name!r}; `handaudit report --list` names them.")
    return found


def listing() -> str:
    """A line for every report: its name, title and question, and the options it takes."""
    lines = []
    for each in specs().values():
        takes = " ".join(f"(--{o})" for o in sorted(each.options))
        lines.append(f"{each.name:<22} {each.title}: {each.question}" + f" {takes}" * bool(takes))
    return "\n".join(lines)


def run(db: Path, name: str, filters: Filters, alpha: float | None = None) -> ReportResult:
    """A report's result (rows, totals, metadata); not the HTML page (`page`)."""
    chosen = spec(name)
    if "html" in chosen.options:
        raise ReportError(f"The {name} report is an HTML page: give --html FILE.")
    if alpha is not None and "alpha" not in chosen.options:
        raise ReportError(f"--alpha goes with 'fairness', not with {name!r}.")
    if name not in _PROGRAMS:
        return run_report(db, name, filters)
    rate = ALPHA if alpha is None else alpha
    if not 0 < rate < 1:
        raise ReportError(f"--alpha is a rate between 0 and 1, not {rate}.")
    result: ReportResult = _program(name)(db, filters, rate)
    return result


def page(db: Path, name: str = AUDIT_PAGE.name) -> str:
    """A report that is an HTML page, as its text."""
    if "html" not in spec(name).options:
        raise ReportError(f"The {name} report is rows, not a page: use --output and --format.")
    text: str = _program(name)(db)
    return text


def _program(name: str) -> Callable[..., Any]:
    module, function = _PROGRAMS[name]
    return getattr(importlib.import_module(module), function)
