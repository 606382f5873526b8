"""From raw blocks to the canonical Arrow table, fast where the input is clean.

The fast path hands a whole block of JSON Lines to Arrow's JSON reader with the
canonical schema, amounts read as text and checked against the models' patterns
before they become decimals. Anything it would read differently from the models
(an amount written as a JSON number, '1e2', a line holding two objects, a type
error) makes it give up on that block, which is then read in pieces; Arrow names
the line it stopped at, so the lines it cannot take are soon alone. Those go
through the record-by-record path: Python's json (keeping the literal text of numbers) and
the pydantic models, record by record.
"""

from __future__ import annotations

import dataclasses
import functools
import io
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, overload

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj
from pydantic import ValidationError

from pipeline.helpers.columns import Leaf, at_path, leaves, map_leaves, whole
from pipeline.ingest.digests import (
    Texts,
    canonical_rows,
    column_digests,
    digests_of,
    line_digests,
)
from pipeline.ingest.hand_history import (
    MONEY_DIGITS,
    MONEY_SCALE,
    RATE_SCALE,
    Hand,
    arrow_schema,
    text_schema,
)
from pipeline.ingest.parts import ArrowBlock, LinesBlock, ObjectsBlock
from pipeline.ingest.quarantine import QuarantineCheck, Quarantined, raw_text
from pipeline.ingest.sources import loads

_SMALLEST_FAST = 32
# Lines read together once a block is refused: a bad line then costs the reading of
# its piece again, not of halves of the block (a block of 3,700 lines with 13 bad ones
# was read about six times over), and Arrow's cost per call (0.7 ms) stays small.
_PIECE = 128
# Lines named wrong in one piece before it is halved instead: each is found by reading
# the rest of the piece again.
_REFUSALS = 4
_JSON_CHUNK = 1 << 20
# The text amounts a column takes as read: the decimals the models allow, and no more
# integer digits than the column's precision leaves (10**16 dollars does not fit
# DECIMAL(18, 2)). Anything else, leading zeros included, goes record by record, where
# the models decide.
_MONEY_FITS = rf"-?\d{{1,{MONEY_DIGITS - MONEY_SCALE}}}(\.\d{{1,{MONEY_SCALE}}})?"
_RATE_FITS = rf"\d{{1,{MONEY_DIGITS - RATE_SCALE}}}(\.\d{{1,{RATE_SCALE}}})?"
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
    """Records in the canonical schema, each with its source, raw text and digest
    (`digests.py`), and the rejects."""

    table: pa.Table
    sources: list[str]
    raws: Sequence[bytes | str]
    digests: list[str]
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


def _parsed(source: str, text: bytes | str, raw: bytes | str, digest: str) -> Any:
    """A JSON record's value, or a quarantine row (with its `raw` text) saying why it is none."""
    try:
        return loads(text)
    except UnicodeDecodeError:
        why = f"{source} is not UTF-8 text"
        return Quarantined(source, None, QuarantineCheck.unreadable, why, raw_text(raw), digest)
    except (ValueError, RecursionError) as error:
        why = error.msg if hasattr(error, "msg") else "nested too deep"
        return Quarantined(
            source,
            readable_hand_id(raw),
            QuarantineCheck.unreadable,
            f"{source} is not valid JSON ({why})",
            raw_text(raw),
            digest,
        )


def _judged(source: str, record: Any, raw: bytes | str, digest: str) -> Hand | Quarantined:
    """A record as the models read it, or a quarantine row with their words."""
    if not isinstance(record, dict):
        return Quarantined(
            source,
            None,
            QuarantineCheck.schema,
            f"{source}: a hand record is a JSON object, not {type(record).__name__}",
            raw_text(raw),
            digest,
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
            digest,
        )


def record_by_record(
    sources: list[str],
    records: list[Any],
    raws: Sequence[bytes | str],
    parsed: bool,
    digests: list[str] | None = None,
) -> Decoded:
    """Record by record: parse (unless `parsed`), validate with the models, keep or reject.
    `digests`: the records' own, when their raws are not their bytes (Parquet's rows)."""
    digests = digests_of(raws) if digests is None else digests
    keep: list[dict[str, Any]] = []
    keep_sources: list[str] = []
    keep_raws: list[bytes | str] = []
    keep_digests: list[str] = []
    rejects: list[Quarantined] = []
    for source, record, raw, digest in zip(sources, records, raws, digests, strict=True):
        value = record if parsed else _parsed(source, record, raw, digest)
        hand = value if isinstance(value, Quarantined) else _judged(source, value, raw, digest)
        if isinstance(hand, Quarantined):
            rejects.append(hand)
            continue
        keep.append(hand.model_dump())
        keep_sources.append(source)
        keep_raws.append(raw)
        keep_digests.append(digest)
    table = pa.Table.from_pylist(keep, schema=schema())
    return Decoded(table, keep_sources, keep_raws, keep_digests, rejects)


@dataclass(frozen=True)
class _Refused:
    """Lines Arrow's reader did not take as the models would. `row`: the line (from 0)
    found wrong, when known."""

    row: int | None = None
    number_for_text: bool = False  # Arrow met a number where text goes (an amount, maybe)


def _fast_text(data: bytes, count: int, threads: bool) -> pa.Table | _Refused:
    """`count` lines of JSON (`data`, joined by line feeds) through Arrow's JSON reader with
    the text schema (amounts not yet checked), or why not.

    Amounts written as JSON numbers make Arrow give up; the lines are read again with
    them quoted, to be checked as text amounts are.
    """
    if not data.isascii():
        try:
            data.decode("utf-8")  # Arrow does not check the text of strings
        except UnicodeDecodeError as error:
            return _Refused(data.count(b"\n", 0, error.start))
    table = _read_json(data, threads)
    if isinstance(table, _Refused) and table.number_for_text:  # amounts as JSON numbers?
        quoted = _BARE_AMOUNT.sub(rb'\1"\2"', data)
        table = table if len(quoted) == len(data) else _read_json(quoted, threads)
    if not isinstance(table, _Refused) and table.num_rows != count:  # no object, or two
        return _Refused()
    return table


# Where Arrow's JSON reader says it stopped: "... in row N" (N from 0, in the text read).
_STOPPED_AT = re.compile(r" in row (\d+)$")


def _read_json(data: bytes, threads: bool) -> pa.Table | _Refused:
    """Arrow's JSON reader with the text schema, or the line where it gave up."""
    one_chunk = not threads or len(data) < _JSON_CHUNK  # one chunk: its rows count from the first
    try:
        return pj.read_json(
            io.BytesIO(data),
            # Threads split the block in chunks of whole lines, for when blocks are read
            # one at a time; with worker threads, each parses its own block alone.
            read_options=pj.ReadOptions(
                use_threads=threads,
                block_size=len(data) + 1 if one_chunk else max(_JSON_CHUNK, len(data) // 2),
            ),
            parse_options=pj.ParseOptions(
                explicit_schema=text_schema(), unexpected_field_behavior="ignore"
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as error:
        stopped = _STOPPED_AT.search(str(error)) if one_chunk else None
        return _Refused(
            int(stopped.group(1)) if stopped else None,
            number_for_text="from string to number" in str(error),
        )


def concat(parts: list[Decoded]) -> Decoded:
    if len(parts) == 1:
        return parts[0]
    return Decoded(
        pa.concat_tables([p.table for p in parts]),
        [s for p in parts for s in p.sources],
        [r for p in parts for r in p.raws],
        [d for p in parts for d in p.digests],
        [q for p in parts for q in p.quarantined],
    )


def decode_lines(block: LinesBlock, threads: bool = True) -> Decoded:
    sources = [f"{block.path}:{n}" for n in block.line_numbers]
    raws: Sequence[bytes | str] = _BlockLines(block) if block.originals is None else block.originals
    if block.ends is not None and block.originals is None:
        digests = line_digests(block.text, block.ends)
    else:
        digests = digests_of(raws)

    def text(lo: int, hi: int) -> bytes:
        all_of_it = lo == 0 and hi == len(sources)
        return block.text if all_of_it else b"\n".join(block.lines[lo:hi])

    def one_by_one(lo: int, hi: int) -> Decoded:
        return record_by_record(
            sources[lo:hi], list(block.lines[lo:hi]), raws[lo:hi], False, digests[lo:hi]
        )

    return _columnar(text, sources, raws, digests, one_by_one, threads)


def decode_objects(block: ObjectsBlock, threads: bool = True) -> Decoded:
    """A JSON array's hands, read as JSON Lines are: each object's text made one line (a
    line break in JSON text can only stand between tokens, never inside a string), so the
    block takes the columnar path; the objects it cannot take go one by one."""
    lines = [raw.replace("\n", " ").replace("\r", " ").encode() for raw in block.raws]
    raws: list[bytes | str] = list(block.raws)
    digests = digests_of(raws)

    def one_by_one(lo: int, hi: int) -> Decoded:
        return record_by_record(
            block.sources[lo:hi], block.records[lo:hi], raws[lo:hi], True, digests[lo:hi]
        )

    return _columnar(
        lambda lo, hi: b"\n".join(lines[lo:hi]), block.sources, raws, digests, one_by_one, threads
    )


def _columnar(
    text: Callable[[int, int], bytes],
    sources: list[str],
    raws: Sequence[bytes | str],
    digests: list[str],
    one_by_one: Callable[[int, int], Decoded],
    threads: bool,
) -> Decoded:
    """Lines of JSON (`text(lo, hi)`: lines lo to hi joined) through Arrow's reader.

    A block Arrow refuses is read again in pieces; in a piece, a line Arrow names as
    wrong goes `one_by_one` and the lines after it are read again; a piece refused with
    no line named (or refused too often) is halved until the lines it cannot take are
    alone. The amounts of all that Arrow read are then checked at once: a line with one
    the models would not read goes `one_by_one` too.
    """
    if not sources:
        return Decoded(schema().empty_table(), [], [], [], [])
    pieces: list[tuple[int, int, pa.Table]] = []  # lines Arrow read, in order
    alone: list[tuple[int, int]] = []  # lines to read one by one
    # Lines still to read, in order (a stack: no recursion, no cycles): from, to, and how
    # many times Arrow refused lines before these in their piece.
    pending = [(0, len(sources), 0)]
    while pending:
        lo, hi, refusals = pending.pop()
        read = _fast_text(text(lo, hi), hi - lo, threads and lo == 0)
        if not isinstance(read, _Refused):
            pieces.append((lo, hi, read))
        elif hi - lo <= _SMALLEST_FAST:
            alone.append((lo, hi))
        elif hi - lo > _PIECE:
            pending += [(at, min(at + _PIECE, hi), 0) for at in range(lo, hi, _PIECE)][::-1]
        elif read.row is not None and 0 <= read.row < hi - lo and refusals < _REFUSALS:
            wrong = lo + read.row
            pending += [(wrong + 1, hi, refusals + 1)] if wrong + 1 < hi else []
            alone.append((wrong, wrong + 1))
            pending += [(lo, wrong, 0)] if lo < wrong else []
        else:
            mid = (lo + hi) // 2
            pending += [(mid, hi, 0), (lo, mid, 0)]
    if not pieces:
        return concat([one_by_one(lo, hi) for lo, hi in sorted(alone)])
    table = pa.concat_tables([t for *_, t in pieces]) if len(pieces) > 1 else pieces[0][2]
    lines = np.concatenate([np.arange(lo, hi) for lo, hi, _ in pieces])  # each row's line
    bad = _rows_with_bad_amounts(table)
    if bad:
        alone += [(line, line + 1) for line in lines[bad].tolist()]
        keep = np.ones(len(lines), dtype=bool)
        keep[bad] = False
        table, lines = table.filter(pa.array(keep)), lines[keep]
    ordered = _in_order(
        table.cast(schema()), lines, sorted(alone), sources, raws, digests, one_by_one
    )
    return concat(ordered)


def _in_order(
    table: pa.Table,
    lines: npt.NDArray[np.int64],
    alone: list[tuple[int, int]],
    sources: list[str],
    raws: Sequence[bytes | str],
    digests: list[str],
    one_by_one: Callable[[int, int], Decoded],
) -> list[Decoded]:
    """The rows Arrow read (`table`, from `lines`) and the lines read one by one
    (`alone`), in the order of the lines. Raws are sliced only for part of the block (a
    block's lines are split off its text only when asked for)."""
    parts, row = [], 0
    for lo, hi in [*alone, (len(sources), len(sources))]:
        until = int(np.searchsorted(lines, lo))
        if until > row:
            first, last = int(lines[row]), int(lines[until - 1]) + 1
            whole_block = (first, last) == (0, len(sources))
            own = raws if whole_block else raws[first:last]
            part = table.slice(row, until - row)
            parts.append(Decoded(part, sources[first:last], own, digests[first:last], []))
            row = until
        if lo < hi:
            parts.append(one_by_one(lo, hi))
    return parts


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
    bad: set[int] = set()
    for path, pattern in _text_amounts(batch.schema):
        texts, rows = at_path(whole(batch[path[0]]), path[1:])
        ok = pc.match_substring_regex(texts.cast(pa.string()), pattern)
        bad.update(rows[pc.invert(pc.fill_null(ok, True)).to_numpy(zero_copy_only=False)].tolist())
    return sorted(bad)


@functools.lru_cache(maxsize=64)
def _text_amounts(given: pa.Schema) -> list[tuple[tuple[str, ...], str]]:
    """The paths of the amounts written as text in a schema, and the pattern of each."""
    canonical = pa.struct([f for f in schema() if f.name in given.names])
    shape = pa.struct([pa.field(f.name, given.field(f.name).type) for f in canonical])
    return [
        (leaf[0], f"^(?:{_MONEY_FITS if leaf[1].scale == MONEY_SCALE else _RATE_FITS})$")
        for leaf in leaves(canonical, shape)
        if _reads_text_as_decimal(leaf)
    ]


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
    rows = _Rows(
        [f"{block.path}:row {block.first_row + i}" for i in range(batch.num_rows)],
        Texts(texts := canonical_rows(batch)),
        column_digests(texts),
    )
    parts, start = [], 0
    for row in [*_rows_with_bad_amounts(batch), batch.num_rows]:
        if row > start:
            parts.append(
                _cast_or_record_by_record(batch.slice(start, row - start), rows[start:row])
            )
        if row < batch.num_rows:
            parts.append(_careful_rows(batch.slice(row, 1), rows[row : row + 1]))
        start = row + 1
    if len(parts) > 1:  # as one table: dictionaries read plainly, as the record-by-record path does
        parts = [dataclasses.replace(p, table=p.table.cast(schema())) for p in parts]
    return concat(parts) if parts else _cast_or_record_by_record(batch, rows)


@dataclass(frozen=True)
class _Rows:
    """Parquet rows' sources, canonical texts (their raws) and digests."""

    sources: list[str]
    raws: Texts
    digests: list[str]

    def __getitem__(self, rows: slice) -> _Rows:
        return _Rows(self.sources[rows], self.raws[rows], self.digests[rows])


def _cast_or_record_by_record(batch: pa.Table | pa.RecordBatch, rows: _Rows) -> Decoded:
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
        return Decoded(table, rows.sources, rows.raws, rows.digests, [])
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return _careful_rows(batch, rows)


def _utc(column: pa.Array) -> pa.Array:
    """A timestamp column as UTC instants, which cast to RFC 3339 text: one without a time
    zone (as Arrow's JSON reader makes of "...Z" texts, for one) is read as UTC, one in
    another zone (Europe/Paris, say) as the same instants in UTC."""
    if pa.types.is_timestamp(column.type) and column.type.tz not in ("UTC", "+00:00"):
        return column.cast(pa.timestamp(column.type.unit, "UTC"))
    return column


def _careful_rows(batch: pa.Table | pa.RecordBatch, rows: _Rows) -> Decoded:
    return record_by_record(rows.sources, batch.to_pylist(), rows.raws, True, rows.digests)
