"""From raw blocks to the canonical Arrow table, fast where the input is clean.

The fast path hands a whole block of JSON Lines to Arrow's JSON reader with the
canonical schema. Anything it would read differently from the models (an
exponent, a '+5' or '.5' amount, a line holding two objects, a type error) makes
it give up on that block, which is then halved until the lines it cannot take are
alone; those go through the careful path: Python's json (keeping the literal text
of numbers) and the pydantic models, record by record.
"""

from __future__ import annotations

import io
import json
import re
from dataclasses import dataclass
from functools import cache
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj
from pydantic import ValidationError

from pipeline.ingest.quarantine import Check, Quarantined, raw_text
from pipeline.ingest.schema import Hand, arrow_schema
from pipeline.ingest.sources import ArrowBlock, LinesBlock, ObjectsBlock, loads

# Text Arrow would take as a decimal but the models would not, or two objects on a line.
_SUSPECT = re.compile(rb'"[+.]|\d\."|\d[eE][+-]?\d|}\s*{|NaN|Infinity')
_SMALLEST_FAST = 32


@dataclass(frozen=True)
class Decoded:
    """Records in the canonical schema, each with its source and raw text, and the rejects."""

    table: pa.Table
    sources: list[str]
    raws: list[bytes | str]
    quarantined: list[Quarantined]


@cache
def schema() -> pa.Schema:
    return arrow_schema()


def schema_message(error: ValidationError) -> str:
    """The first problems pydantic found, as one line naming the fields."""
    parts = []
    for e in error.errors()[:3]:
        where = ".".join(str(x) for x in e["loc"]) or "the record"
        got = e.get("input")
        shown = "" if isinstance(got, dict | list) else f" (got {got!r})"
        parts.append(f"{where}: {e['msg']}{shown}")
    more = f" (and {error.error_count() - 3} more)" if error.error_count() > 3 else ""
    return "; ".join(parts) + more


def hand_id_of(record: Any) -> str | None:
    hand_id = record.get("hand_id") if isinstance(record, dict) else None
    return hand_id if isinstance(hand_id, str) else None


def careful(
    sources: list[str], records: list[Any], raws: list[bytes | str], parsed: bool
) -> Decoded:
    """Record by record: parse (unless `parsed`), validate with the models, keep or reject."""
    keep: list[dict[str, Any]] = []
    keep_sources: list[str] = []
    keep_raws: list[bytes | str] = []
    rejects: list[Quarantined] = []
    for source, record, raw in zip(sources, records, raws, strict=True):
        if not parsed:
            try:
                record = loads(record)
            except UnicodeDecodeError:
                rejects.append(
                    Quarantined(
                        source, None, Check.unreadable, f"{source} is not UTF-8 text", raw_text(raw)
                    )
                )
                continue
            except (ValueError, RecursionError) as error:
                why = error.msg if hasattr(error, "msg") else "nested too deep"
                rejects.append(
                    Quarantined(
                        source,
                        None,
                        Check.unreadable,
                        f"{source} is not valid JSON ({why})",
                        raw_text(raw),
                    )
                )
                continue
        if not isinstance(record, dict):
            rejects.append(
                Quarantined(
                    source,
                    None,
                    Check.schema,
                    f"{source}: a hand record is a JSON object, not {type(record).__name__}",
                    raw_text(raw),
                )
            )
            continue
        try:
            hand = Hand.model_validate(record)
        except ValidationError as error:
            rejects.append(
                Quarantined(
                    source,
                    hand_id_of(record),
                    Check.schema,
                    f"{source}: {schema_message(error)}",
                    raw_text(raw),
                )
            )
            continue
        keep.append(hand.model_dump())
        keep_sources.append(source)
        keep_raws.append(raw)
    table = pa.Table.from_pylist(keep, schema=schema())
    return Decoded(table, keep_sources, keep_raws, rejects)


def _fast_lines(lines: list[bytes]) -> pa.Table | None:
    data = b"\n".join(lines)
    if _SUSPECT.search(data):
        return None
    try:
        table = pj.read_json(
            io.BytesIO(data),
            read_options=pj.ReadOptions(use_threads=False, block_size=len(data) + 1),
            parse_options=pj.ParseOptions(
                explicit_schema=schema(), unexpected_field_behavior="ignore"
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    return table if table.num_rows == len(lines) else None


def _concat(parts: list[Decoded]) -> Decoded:
    if len(parts) == 1:
        return parts[0]
    return Decoded(
        pa.concat_tables([p.table for p in parts]),
        [s for p in parts for s in p.sources],
        [r for p in parts for r in p.raws],
        [q for p in parts for q in p.quarantined],
    )


def decode_lines(block: LinesBlock) -> Decoded:
    sources = [f"{block.path}:{n}" for n in block.line_numbers]

    def decode(lo: int, hi: int) -> list[Decoded]:
        table = _fast_lines(block.lines[lo:hi])
        if table is not None:
            raws: list[bytes | str] = list(block.lines[lo:hi])
            return [Decoded(table, sources[lo:hi], raws, [])]
        if hi - lo <= _SMALLEST_FAST:
            lines: list[Any] = block.lines[lo:hi]
            return [careful(sources[lo:hi], lines, list(block.lines[lo:hi]), parsed=False)]
        mid = (lo + hi) // 2
        return decode(lo, mid) + decode(mid, hi)

    return _concat(decode(0, len(block.lines)))


def decode_objects(block: ObjectsBlock) -> Decoded:
    return careful(block.sources, block.records, list(block.raws), parsed=True)


def _text_to_decimal(source: pa.DataType, target: pa.DataType) -> bool:
    """Whether casting `source` to `target` reads decimals from text (laxer than the models)."""
    if pa.types.is_decimal(target):
        return not pa.types.is_decimal(source) and not pa.types.is_integer(source)
    if pa.types.is_list(target) or pa.types.is_large_list(target):
        return (pa.types.is_list(source) or pa.types.is_large_list(source)) and _text_to_decimal(
            source.value_type, target.value_type
        )
    if pa.types.is_struct(target) and pa.types.is_struct(source):
        fields = {f.name: f.type for f in source}
        return any(_text_to_decimal(fields[f.name], f.type) for f in target if f.name in fields)
    return False


def decode_arrow(block: ArrowBlock) -> Decoded:
    """Parquet rows: cast to the canonical schema, or go record by record if they do not cast."""
    batch = block.batch
    sources = [f"{block.path}:row {block.first_row + i}" for i in range(batch.num_rows)]
    present = {f.name: f.type for f in batch.schema}
    if not any(_text_to_decimal(present[f.name], f.type) for f in schema() if f.name in present):
        try:
            columns = [
                pc.cast(batch.column(f.name), f.type)
                if f.name in present
                else pa.nulls(batch.num_rows, f.type)
                for f in schema()
            ]
            table = pa.Table.from_arrays(columns, schema=schema())
            return Decoded(table, sources, [None] * batch.num_rows, [])  # type: ignore[list-item]
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
            pass
    records = batch.to_pylist()
    raws: list[bytes | str] = [json.dumps(r, default=str) for r in records]
    return careful(sources, records, raws, parsed=True)
