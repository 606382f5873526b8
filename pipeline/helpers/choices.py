"""Output formats the command line offers, each listed once: Typer lists them in --help and
refuses any other with exit 2, and the code that writes them takes these enums. (The
games, the scoring methods and the deal biases are listed where they are defined.)"""

from __future__ import annotations

from enum import StrEnum


class ReportFormat(StrEnum):
    """How `handaudit report` writes a report."""

    table = "table"
    csv = "csv"
    json = "json"
    parquet = "parquet"


class HistoryFormat(StrEnum):
    """How `handaudit generate` writes a hand history."""

    jsonl = "jsonl"
    json = "json"
    parquet = "parquet"
