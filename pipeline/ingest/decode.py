"""From raw blocks to the canonical Arrow table, fast where the input is clean.

The fast path hands a whole block of JSON Lines to Arrow's JSON reader with the
canonical schema, amounts read as text and checked against the models' patterns
before they become decimals. Anything it would read differently from the models
(an amount written as a JSON number, '1e2', a line holding two objects, a type
error) makes it give up on that block, which is then halved until the lines it
cannot take are alone; those go through the careful path: Python's json (keeping
the literal text of numbers) and the pydantic models, record by record.
"""

from __future__ import annotations

import dataclasses
import io
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, overload

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj
from pydantic import ValidationError

from pipeline.columns import Leaf, at_path, leaves, map_leaves, whole
from pipeline.hand_history import (
    MONEY_SCALE,
    MONEY_TEXT,
    RATE_TEXT,
    Hand,
    arrow_schema,
    text_schema,
)
from pipeline.ingest.quarantine import QuarantineCheck, Quarantined, raw_text
from pipeline.ingest.sources import ArrowBlock, LinesBlock, ObjectsBlock, loads

_SMALLEST_FAST = 32
# An amount written as a JSON number (hand-history.md allows it when its literal text has
# at most two decimals): quoted, it reads as text and is checked as text amounts are.
# Inside a JSON string a quote is escaped, so `"won": 12` can only be a key and its value.
_AMOUNT_KEYS = b"|".join(
    sorted(
        {
            p[-1].encode()
            for p, t, _ in leaves(pa.struct(list(arrow_schema())))
            if pa.types.is_decimal(t)
        }
    )
)
_BARE_AMOUNT = re.compile(rb'("(?:' + _AMOUNT_KEYS + rb')"\s*:\s*)(-?[0-9][0-9.eE+-]*)')


@dataclass(frozen=True)
class Decoded:
    """Records in the canonical schema, each with its source and raw text, and the rejects."""

    table: pa.Table
    sources: list[str]
    raws: Sequence[bytes | str]
    quarantined: list[Quarantined]


class _BlockLines(Sequence[bytes]):
    """A block's lines as raws, split off its text only if one is asked for (a reject's)."""

    def __init__(self, block: LinesBlock) -> None:
        self.block = block

    def __len__(self) -> int:
        return len(self.block.line_numbers)

    @overload
    def __getitem__(self, index: int) -> bytes: ...
    @overload
    def __getitem__(self, index: slice) -> list[bytes]: ...
    def __getitem__(self, index: int | slice) -> bytes | list[bytes]:
        return self.block.lines[index]


schema = arrow_schema


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


_HAND_ID = re.compile(rb'"hand_id"\s*:\s*"([^"\\]{1,200})"')


def readable_hand_id(raw: bytes | str) -> str | None:
    """The hand_id of a line that is not valid JSON, when its text still shows one."""
    found = _HAND_ID.search(raw if isinstance(raw, bytes) else raw.encode("utf-8", "replace"))
    return found.group(1).decode("utf-8", "replace") if found else None


def hand_id_of(record: Any) -> str | None:
    hand_id = record.get("hand_id") if isinstance(record, dict) else None
    return hand_id if isinstance(hand_id, str) else None


def _parsed(source: str, raw: bytes | str) -> Any:
    """A JSON line's value, or a quarantine row saying why it is none."""
    try:
        return loads(raw)
    except UnicodeDecodeError:
        return Quarantined(
            source, None, QuarantineCheck.unreadable, f"{source} is not UTF-8 text", raw_text(raw)
        )
    except (ValueError, RecursionError) as error:
        why = error.msg if hasattr(error, "msg") else "nested too deep"
        return Quarantined(
            source,
            readable_hand_id(raw),
            QuarantineCheck.unreadable,
            f"{source} is not valid JSON ({why})",
            raw_text(raw),
        )


def _judged(source: str, record: Any, raw: bytes | str) -> Hand | Quarantined:
    """A record as the models read it, or a quarantine row with their words."""
    if not isinstance(record, dict):
        return Quarantined(
            source,
            None,
            QuarantineCheck.schema,
            f"{source}: a hand record is a JSON object, not {type(record).__name__}",
            raw_text(raw),
        )
    try:
        return Hand.model_validate(record)
    except ValidationError as error:
        return Quarantined(
            source,
            hand_id_of(record),
            QuarantineCheck.schema,
            f"{source}: {schema_message(error)}",
            raw_text(raw),
        )


def careful(
    sources: list[str], records: list[Any], raws: list[bytes | str], parsed: bool
) -> Decoded:
    """Record by record: parse (unless `parsed`), validate with the models, keep or reject."""
    keep: list[dict[str, Any]] = []
    keep_sources: list[str] = []
    keep_raws: list[bytes | str] = []
    rejects: list[Quarantined] = []
    for source, record, raw in zip(sources, records, raws, strict=True):
        value = record if parsed else _parsed(source, record)
        hand = value if isinstance(value, Quarantined) else _judged(source, value, raw)
        if isinstance(hand, Quarantined):
            rejects.append(hand)
            continue
        keep.append(hand.model_dump())
        keep_sources.append(source)
        keep_raws.append(raw)
    table = pa.Table.from_pylist(keep, schema=schema())
    return Decoded(table, keep_sources, keep_raws, rejects)


def _fast_text(data: bytes, count: int, threads: bool) -> pa.Table | None:
    """`count` lines of JSON (`data`, joined by line feeds) through Arrow's JSON reader, or
    None if the models might read them otherwise.

    Amounts are read as text and checked with the models' patterns. Amounts written as
    JSON numbers make Arrow give up; the lines are read again with them quoted.
    """
    if not data.isascii():
        try:
            data.decode("utf-8")  # Arrow does not check the text of strings
        except UnicodeDecodeError:
            return None
    table = _read_json(data, threads)
    if table is None and _BARE_AMOUNT.search(data):  # amounts written as JSON numbers
        table = _read_json(_BARE_AMOUNT.sub(rb'\1"\2"', data), threads)
    if table is None or table.num_rows != count or _rows_with_bad_amounts(table):
        return None
    return table.cast(schema())


def _read_json(data: bytes, threads: bool) -> pa.Table | None:
    """Arrow's JSON reader with the text schema, or None where it gives up."""
    try:
        return pj.read_json(
            io.BytesIO(data),
            # Threads split the block in chunks of whole lines, for when blocks are read
            # one at a time; with worker threads, each parses its own block alone.
            read_options=pj.ReadOptions(
                use_threads=threads,
                block_size=max(1 << 20, len(data) // 2 if threads else len(data) + 1),
            ),
            parse_options=pj.ParseOptions(
                explicit_schema=text_schema(), unexpected_field_behavior="ignore"
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


def concat(parts: list[Decoded]) -> Decoded:
    if len(parts) == 1:
        return parts[0]
    return Decoded(
        pa.concat_tables([p.table for p in parts]),
        [s for p in parts for s in p.sources],
        [r for p in parts for r in p.raws],
        [q for p in parts for q in p.quarantined],
    )


def decode_lines(block: LinesBlock, threads: bool = True) -> Decoded:
    sources = [f"{block.path}:{n}" for n in block.line_numbers]

    def text(lo: int, hi: int) -> bytes:
        whole = lo == 0 and hi == len(sources)
        return block.text if whole else b"\n".join(block.lines[lo:hi])

    def one_by_one(lo: int, hi: int) -> Decoded:
        lines = block.lines[lo:hi]
        return careful(sources[lo:hi], list(lines), list(lines), parsed=False)

    return _columnar(text, sources, _BlockLines(block), one_by_one, threads)


def decode_objects(block: ObjectsBlock, threads: bool = True) -> Decoded:
    """A JSON array's hands, read as JSON Lines are: each object's text made one line (a
    line break in JSON text can only stand between tokens, never inside a string), so the
    block takes the columnar path; the objects it cannot take go one by one."""
    lines = [raw.replace("\n", " ").replace("\r", " ").encode() for raw in block.raws]
    raws: list[bytes | str] = list(block.raws)

    def one_by_one(lo: int, hi: int) -> Decoded:
        return careful(block.sources[lo:hi], block.records[lo:hi], raws[lo:hi], parsed=True)

    return _columnar(
        lambda lo, hi: b"\n".join(lines[lo:hi]), block.sources, raws, one_by_one, threads
    )


def _columnar(
    text: Callable[[int, int], bytes],
    sources: list[str],
    raws: Sequence[bytes | str],
    one_by_one: Callable[[int, int], Decoded],
    threads: bool,
) -> Decoded:
    """Lines of JSON (`text(lo, hi)`: lines lo to hi joined) through Arrow's reader; a part
    it gives up on is halved until the lines it cannot take are alone, and those are read
    `one_by_one`."""
    parts: list[Decoded] = []
    pending = [(0, len(sources))]  # halves still to read, in order (no recursion: no cycles)
    while pending:
        lo, hi = pending.pop()
        table = _fast_text(text(lo, hi), hi - lo, threads)
        if table is not None:
            whole = lo == 0 and hi == len(sources)
            parts.append(Decoded(table, sources[lo:hi], raws if whole else raws[lo:hi], []))
        elif hi - lo <= _SMALLEST_FAST:
            parts.append(one_by_one(lo, hi))
        else:
            mid = (lo + hi) // 2
            pending += [(mid, hi), (lo, mid)]
    return concat(parts)


def _reads_text_as_decimal(leaf: Leaf) -> bool:
    """Whether this leaf's decimals come from text (checked here as JSON's are)."""
    _, target, source = leaf
    return (
        pa.types.is_decimal(target)
        and source is not None
        and not pa.types.is_decimal(source)
        and not pa.types.is_integer(source)
    )


def _rows_with_bad_amounts(batch: pa.Table | pa.RecordBatch) -> list[int]:
    """The rows holding an amount written as text the models would not read (an exponent,
    more decimals than allowed, not a number): those go record by record."""
    canonical = pa.struct([f for f in schema() if f.name in batch.schema.names])
    given = pa.struct([pa.field(f.name, batch.schema.field(f.name).type) for f in canonical])
    bad: set[int] = set()
    for leaf in leaves(canonical, given):
        if not _reads_text_as_decimal(leaf):
            continue
        path, target, _ = leaf
        texts, rows = at_path(whole(batch[path[0]]), path[1:])
        pattern = MONEY_TEXT if target.scale == MONEY_SCALE else RATE_TEXT
        ok = pc.match_substring_regex(texts.cast(pa.string()), f"^(?:{pattern.pattern})$")
        bad.update(rows[pc.invert(pc.fill_null(ok, True)).to_numpy(zero_copy_only=False)].tolist())
    return sorted(bad)


def _keeping_dictionary(leaf: Leaf) -> pa.DataType:
    """Text read as a dictionary (as Parquet's is) stays one; the checks take either."""
    _, target, source = leaf
    if source is not None and pa.types.is_dictionary(source) and pa.types.is_string(target):
        return pa.dictionary(source.index_type, target)
    return target


def decode_arrow(block: ArrowBlock) -> Decoded:
    """Parquet rows cast to the canonical schema, amounts written as text checked first; the
    rows that do not cast (or hold an amount the models would not read) go record by record."""
    batch = block.batch
    sources = [f"{block.path}:row {block.first_row + i}" for i in range(batch.num_rows)]
    parts, start = [], 0
    for row in [*_rows_with_bad_amounts(batch), batch.num_rows]:
        if row > start:
            parts.append(_cast_or_careful(batch.slice(start, row - start), sources[start:row]))
        if row < batch.num_rows:
            parts.append(_careful_rows(batch.slice(row, 1), sources[row : row + 1]))
        start = row + 1
    if len(parts) > 1:  # as one table: dictionaries read plainly, as the careful path does
        parts = [dataclasses.replace(p, table=p.table.cast(schema())) for p in parts]
    return concat(parts) if parts else _cast_or_careful(batch, sources)


def _cast_or_careful(batch: pa.Table | pa.RecordBatch, sources: list[str]) -> Decoded:
    """Rows whose amounts are fine: cast to the canonical schema, or if they do not cast
    (a type the models would read otherwise), record by record."""
    present = {f.name: f.type for f in batch.schema}
    try:
        columns = [
            pc.cast(
                _utc(whole(batch[f.name])),
                map_leaves(f.type, present[f.name], _keeping_dictionary),
            )
            if f.name in present
            else pa.nulls(batch.num_rows, f.type)
            for f in schema()
        ]
        fields = [f.with_type(c.type) for f, c in zip(schema(), columns, strict=True)]
        table = pa.Table.from_arrays(columns, schema=pa.schema(fields))
        return Decoded(table, sources, [None] * batch.num_rows, [])  # type: ignore[list-item]
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return _careful_rows(batch, sources)


def _utc(column: pa.Array) -> pa.Array:
    """A timestamp column as UTC instants, which cast to RFC 3339 text: one without a time
    zone (as Arrow's JSON reader makes of "...Z" texts, for one) is read as UTC."""
    if pa.types.is_timestamp(column.type) and column.type.tz is None:
        return column.cast(pa.timestamp(column.type.unit, "UTC"))
    return column


def _careful_rows(batch: pa.Table | pa.RecordBatch, sources: list[str]) -> Decoded:
    records = batch.to_pylist()
    raws: list[bytes | str] = [json.dumps(r, default=str) for r in records]
    return careful(sources, records, raws, parsed=True)
