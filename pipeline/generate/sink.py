"""Where generated hands go: JSON Lines, one JSON array, or Parquet row groups typed as
the hand-history schema, written as the hands come."""

from __future__ import annotations

import gzip
import io
from pathlib import Path
from typing import Any

import pyarrow.json as pj
import pyarrow.parquet as pq

from pipeline.helpers.choices import HistoryFormat
from pipeline.ingest.hand_history import arrow_schema, text_schema

FORMATS = tuple(HistoryFormat)


class Sink:
    """Writes records as they come: JSON Lines, one JSON array, or Parquet row groups."""

    def __init__(self, out: Path, fmt: HistoryFormat) -> None:
        self.fmt = fmt
        self.out = out
        self.pending: list[str] = []
        self.writer: pq.ParquetWriter | None = None
        self.file: Any = None
        if fmt != "parquet":
            raw: Any = (
                gzip.GzipFile(out, "wb", mtime=0) if out.name.endswith(".gz") else out.open("wb")
            )  # mtime 0: the same seed gives the same bytes
            self.file = io.TextIOWrapper(raw, encoding="utf-8")
        self.first = True
        if fmt == "json" and self.file:
            self.file.write("[\n")

    def write(self, line: str) -> None:
        if self.fmt == "jsonl":
            self.file.write(line + "\n")
        elif self.fmt == "json":
            self.file.write(("" if self.first else ",\n") + line)
            self.first = False
        else:
            self.pending.append(line)
            if len(self.pending) >= 8192:
                self._flush()

    def _flush(self) -> None:
        """The pending records as a Parquet row group, typed as the hand-history schema."""
        if not self.pending:
            return
        lines = io.BytesIO("\n".join(self.pending).encode())
        table = pj.read_json(
            lines, parse_options=pj.ParseOptions(explicit_schema=text_schema())
        ).cast(arrow_schema())
        if self.writer is None:
            self.writer = pq.ParquetWriter(self.out, table.schema)
        self.writer.write_table(table)
        self.pending = []

    def close(self) -> None:
        if self.fmt == "parquet":
            self._flush()
            if self.writer:
                self.writer.close()
        elif self.file:
            if self.fmt == "json":
                self.file.write("\n]\n")
            self.file.close()
