"""The SHA-256 of each record, as it was read: what evidence of an audited hand rests on.

A JSON record's digest is that of its exact bytes: a JSON Lines line without its line
ending (LF, or CR LF), a JSON array's object from its `{` to its `}`, gzip's after
decompression. A Parquet row has no bytes of its own: its digest is that of its
canonical JSON (`canonical_rows`), which the README defines and the quarantine keeps as
the row's raw text.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Iterable, Sequence
from typing import Any, overload

import numpy as np
import numpy.typing as npt
import polars as pl
import pyarrow as pa


def digest_of(raw: bytes | str) -> str:
    """The SHA-256 of one record's bytes (text as UTF-8), in hex."""
    return hashlib.sha256(raw.encode() if isinstance(raw, str) else raw).hexdigest()


def digests_of(raws: Iterable[bytes | str]) -> list[str]:
    return [digest_of(raw) for raw in raws]


def line_digests(text: bytes, ends: npt.NDArray[np.int64]) -> list[str]:
    """The digests of the lines of `text` ending at `ends` (each at its line feed, the last
    at the text's end), hashed in place: no line is copied out of the text."""
    data, stops = memoryview(text), ends.tolist()
    starts = [0, *(e + 1 for e in stops[:-1])]
    return [hashlib.sha256(data[a:b]).hexdigest() for a, b in zip(starts, stops, strict=True)]


def column_digests(texts: pa.Array) -> list[str]:
    """The digests of a column of texts (no nulls), read from its buffers in place."""
    if str(texts.type) == "string_view":
        return _view_digests(texts)
    texts = texts.cast(pa.large_string()) if pa.types.is_string(texts.type) else texts
    offsets = np.frombuffer(texts.buffers()[1], np.int64)[
        texts.offset : texts.offset + len(texts) + 1
    ]
    data = memoryview(texts.buffers()[2] or b"")
    ends = offsets.tolist()
    return [hashlib.sha256(data[a:b]).hexdigest() for a, b in itertools.pairwise(ends)]


def _view_digests(texts: pa.Array) -> list[str]:
    """`column_digests` of Arrow's string views (as polars holds text): each view is 16
    bytes, its length first; a text of up to 12 bytes follows it inline, a longer one is
    at the offset (last) in the data buffer (third) it names."""
    buffers = texts.buffers()
    views = np.frombuffer(buffers[1], np.int32).reshape(-1, 4)[
        texts.offset : texts.offset + len(texts)
    ]
    inline, data = memoryview(buffers[1]), [memoryview(b) for b in buffers[2:]]
    first = texts.offset
    out = []
    for row, (size, _, buffer, at) in enumerate(views.tolist(), first):
        if size <= _INLINE:
            out.append(hashlib.sha256(inline[16 * row + 4 : 16 * row + 4 + size]).hexdigest())
        else:
            out.append(hashlib.sha256(data[buffer][at : at + size]).hexdigest())
    return out


# The longest text a string view holds in itself.
_INLINE = 12


def canonical_type(given: pa.DataType) -> pa.DataType:
    """The type a column takes in the canonical JSON: text, whole numbers and booleans as
    they are, lists and structs of such, dictionaries as their values, and any other value
    (a decimal, a timestamp, a float) as Arrow's text of it."""
    if pa.types.is_dictionary(given):
        return canonical_type(given.value_type)
    if pa.types.is_struct(given):
        fields = sorted(given, key=lambda f: f.name)
        return pa.struct([f.with_type(canonical_type(f.type)) for f in fields])
    if pa.types.is_list(given) or pa.types.is_large_list(given):
        return pa.list_(canonical_type(given.value_type))
    if pa.types.is_fixed_size_list(given):
        return pa.list_(canonical_type(given.value_type))
    if pa.types.is_integer(given) or pa.types.is_boolean(given):
        return given
    return pa.string()  # text, and nulls alone (Arrow's casts of null fields are unsound)


def canonical_rows(rows: pa.Table | pa.RecordBatch) -> pa.Array:
    """Each row as canonical JSON: an object of the columns by name (a struct's fields
    likewise, so that the order a file holds them in does not matter), no white space,
    text as JSON strings (only `"`, `\\` and control characters escaped), whole numbers as
    numbers, booleans, null (a null struct as an object of nulls: JSON writers differ on
    it), and every other value as the JSON string of Arrow's text of it (`canonical_type`):
    a decimal "12.50", a timestamp "2026-11-29 20:15:03.000000Z"."""
    table = rows if isinstance(rows, pa.Table) else pa.Table.from_batches([rows])
    if table.num_rows == 0:
        return pa.array([], pa.large_string())
    names = sorted(table.column_names)
    try:
        plain = present_structs(
            pa.Table.from_arrays(
                [table[n].cast(canonical_type(table[n].type)) for n in names], names=names
            )
        )
        frame = pl.from_arrow(plain)
        assert isinstance(frame, pl.DataFrame)  # a table gives a frame
        texts = _arrow(frame.select(pl.struct(pl.all()).struct.json_encode()).to_series())
    except (pa.ArrowException, pl.exceptions.PolarsError):
        # A value Arrow cannot cast to text or polars cannot write (a map, bytes that are
        # no UTF-8): the rows by Python's writer, every column Arrow can cast cast as above
        # (its timestamps as Arrow's text), the others' values as text (bytes in hex).
        columns = [_canonical_or_as_is(table[n]) for n in names]
        rows = present_structs(pa.Table.from_arrays(columns, names=names)).to_pylist()
        return pa.array([canonical_row_text(r) for r in rows], pa.large_string())
    return texts


def _canonical_or_as_is(column: pa.ChunkedArray) -> pa.ChunkedArray:
    try:
        return column.cast(canonical_type(column.type))
    except pa.ArrowException:
        return column


def _arrow(texts: pl.Series) -> pa.Array:
    """polars' texts as Arrow's, as it holds them (string views: no copy) where this
    polars can say so (1.1 and later)."""
    try:
        newest = pl.CompatLevel.newest()  # type: ignore[attr-defined,unused-ignore]
    except AttributeError:
        return texts.to_arrow()
    return texts.to_arrow(compat_level=newest)


def present_structs(table: pa.Table) -> pa.Table:
    """The table with every struct present, its fields null where it was null (JSON
    writers differ on a null struct: some write null, others an object of nulls)."""
    return pa.Table.from_arrays(
        [_present(c.combine_chunks()) for c in table.columns], names=table.column_names
    )


def _present(values: pa.Array) -> pa.Array:
    if pa.types.is_struct(values.type):
        children = [_present(child) for child in values.flatten()]
        return pa.StructArray.from_arrays(children, fields=list(values.type))
    if pa.types.is_list(values.type):
        inner = _present(values.values)
        return pa.ListArray.from_arrays(values.offsets, inner, mask=values.is_null())
    return values


def canonical_row_text(row: dict[str, Any]) -> str:
    """One row of `canonical_rows`' plain columns (`canonical_type`, then
    `present_structs`) as canonical JSON, by Python's own JSON writer: the definition,
    written out, that the columnar writer is tested against."""
    return json.dumps(
        row, separators=(",", ":"), ensure_ascii=False, sort_keys=True, default=_as_text
    )


def _as_text(value: object) -> str:
    """A value JSON cannot hold, as text: bytes in hex, anything else as Python writes it."""
    return value.hex() if isinstance(value, bytes) else str(value)


class Texts(Sequence[str]):
    """A column of texts read one at a time (a Parquet block's canonical rows, as raws)."""

    def __init__(self, column: pa.Array) -> None:
        self.column = column

    def __len__(self) -> int:
        return len(self.column)

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> Texts: ...
    def __getitem__(self, index: int | slice) -> str | Texts:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self.column))
            if step != 1:
                raise ValueError("a column of texts is sliced in order")
            return Texts(self.column.slice(start, max(stop - start, 0)))
        return str(self.column[index].as_py())
