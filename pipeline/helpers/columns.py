"""Arrow column helpers: list flattening with parents, exact money as cents, UTC timestamps."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

Ints = npt.NDArray[np.int64]


def whole(column: pa.Array | pa.ChunkedArray) -> pa.Array:
    """The column as one array; a column of one chunk is that chunk, not a copy of it
    (`ChunkedArray.combine_chunks` copies even then)."""
    if not isinstance(column, pa.ChunkedArray):
        return column
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


def text(column: pa.Array) -> pa.Array:
    """A text column as plain strings (Parquet's may come as a dictionary)."""
    return column.cast(pa.string()) if pa.types.is_dictionary(column.type) else column


def children(lists: pa.Array) -> tuple[pa.Array, npt.NDArray[np.int64]]:
    """The values of a list column and, for each, the index of the list it belongs to."""
    lists = whole(lists)
    values = pc.list_flatten(lists)
    parents = pc.list_parent_indices(lists).to_numpy().astype(np.int64, copy=False)
    return values, parents


def field(structs: pa.Array, name: str) -> pa.Array:
    """A struct column's field, null where the struct itself is null."""
    return pc.struct_field(structs, name)


def unscaled(decimals: pa.Array) -> Ints:
    """The unscaled integers of a decimal128 column (cents at scale 2); 0 where null.

    The values fit in 64 bits (precision 18), so the low word of each 128-bit value
    is the number itself: read from the buffer, never through a float.
    """
    decimals = whole(decimals)
    if not pa.types.is_decimal(decimals.type):
        raise TypeError(f"expected a decimal column, got {decimals.type}")
    words = np.frombuffer(decimals.buffers()[1], dtype=np.int64)
    low = words[2 * decimals.offset : 2 * (decimals.offset + len(decimals)) : 2].copy()
    if decimals.null_count:
        low[is_null(decimals)] = 0
    return low


def is_null(column: pa.Array) -> npt.NDArray[np.bool_]:
    if column.null_count == 0:
        return np.zeros(len(column), dtype=bool)
    return pc.is_null(column).to_numpy(zero_copy_only=False)


def ints(column: pa.Array, fill: int = 0) -> Ints:
    return pc.fill_null(column, fill).to_numpy(zero_copy_only=False).astype(np.int64)


def lengths(lists: pa.Array) -> Ints:
    """Length of each list; -1 where the list is null."""
    return ints(pc.list_value_length(lists), -1)


_TIMESTAMP = (
    r"^(?P<y>\d{4})-(?P<mo>\d{2})-(?P<d>\d{2})[Tt ](?P<h>\d{2}):(?P<mi>\d{2}):(?P<s>\d{2})"
    r"(?P<frac>\.\d{1,9})?(?P<zone>[Zz]|(?P<sign>[+-])(?P<oh>\d{2}):(?P<om>\d{2}))$"
)
_DAYS_IN_MONTH = np.array([0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])


def _days_from_civil(y: Ints, m: Ints, d: Ints) -> Ints:
    """Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm)."""
    y = y - (m <= 2)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + np.where(m > 2, -3, 9)) + 2) // 5 + d - 1
    return era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468


_PLAIN_UTC = np.frombuffer(b"0000-00-00T00:00:00Z", dtype=np.uint8)
_DIGIT = ord("0") == _PLAIN_UTC


def _plain_utc_parts(texts: pa.Array) -> dict[str, Ints] | None:
    """The parts of a column whose texts all read 'YYYY-MM-DDTHH:MM:SSZ', from the bytes.

    That is the common shape; anything else (nulls, offsets, fractions) returns None.
    """
    if len(texts) == 0 or texts.null_count or not pa.types.is_string(texts.type):
        return None
    width = len(_PLAIN_UTC)
    offsets = np.frombuffer(texts.buffers()[1], dtype=np.int32)[
        texts.offset : texts.offset + len(texts) + 1
    ]
    if not np.all(np.diff(offsets) == width):
        return None
    data = np.frombuffer(texts.buffers()[2], dtype=np.uint8)[offsets[0] : offsets[-1]]
    data = data.reshape(-1, width)
    digits = data[:, _DIGIT] - ord("0")  # uint8: a byte below '0' wraps above 9
    if (digits > 9).any() or (data[:, ~_DIGIT] != _PLAIN_UTC[~_DIGIT]).any():
        return None
    d = digits.astype(np.int64)
    zero = np.zeros(len(texts), dtype=np.int64)
    return {
        "y": d[:, 0] * 1000 + d[:, 1] * 100 + d[:, 2] * 10 + d[:, 3],
        "mo": d[:, 4] * 10 + d[:, 5],
        "d": d[:, 6] * 10 + d[:, 7],
        "h": d[:, 8] * 10 + d[:, 9],
        "mi": d[:, 10] * 10 + d[:, 11],
        "s": d[:, 12] * 10 + d[:, 13],
        "oh": zero,
        "om": zero,
        "micros": zero,
        "sign": zero + 1,
    }


def _utc_parts(texts: pa.Array) -> tuple[dict[str, Ints], npt.NDArray[np.bool_]]:
    """The parts of every text by one regular expression, and where the text has that form."""
    parts = pc.extract_regex(pc.fill_null(texts, ""), _TIMESTAMP)
    ok = pc.is_valid(parts).to_numpy(zero_copy_only=False)

    def number(name: str) -> Ints:
        text = pc.struct_field(parts, name)
        return ints(
            pc.cast(pc.if_else(pc.equal(pc.fill_null(text, ""), ""), "0", text), pa.int64())
        )

    frac = pc.utf8_rpad(
        pc.utf8_slice_codeunits(pc.fill_null(pc.struct_field(parts, "frac"), ""), 1, 7),
        6,
        padding="0",
    )
    negative = pc.fill_null(pc.equal(pc.struct_field(parts, "sign"), "-"), False)
    numbers = {name: number(name) for name in ("y", "mo", "d", "h", "mi", "s", "oh", "om")}
    numbers["micros"] = ints(pc.cast(frac, pa.int64()))
    numbers["sign"] = np.where(negative.to_numpy(zero_copy_only=False), -1, 1)
    return numbers, ok


def utc_micros(texts: pa.Array) -> tuple[Ints, npt.NDArray[np.bool_]]:
    """RFC 3339 texts to microseconds since the epoch (UTC), and where a text is no such time.

    The parts are read from the bytes when every text has the plain UTC shape, by a
    regular expression otherwise, and checked by arithmetic, so a date that does not
    exist (February 30th) is caught rather than rolled over.
    """
    plain = _plain_utc_parts(texts)
    if plain is None:
        parts, ok = _utc_parts(texts)
    else:
        parts, ok = plain, np.ones(len(texts), dtype=bool)
    y, mo, d = parts["y"], parts["mo"], parts["d"]
    h, mi, sec = parts["h"], parts["mi"], parts["s"]
    oh, om = parts["oh"], parts["om"]
    leap = ((y % 4 == 0) & (y % 100 != 0)) | (y % 400 == 0)
    month_ok = (mo >= 1) & (mo <= 12)
    dim = _DAYS_IN_MONTH[np.where(month_ok, mo, 1)] + ((mo == 2) & leap)
    ok = ok & month_ok & (d >= 1) & (d <= dim) & (h <= 23) & (mi <= 59) & (sec <= 59)
    ok &= (oh <= 23) & (om <= 59)
    seconds = (
        _days_from_civil(y, np.where(month_ok, mo, 1), d) * 86400
        + h * 3600
        + mi * 60
        + sec
        - parts["sign"] * (oh * 60 + om) * 60
    )
    return np.where(ok, seconds * 1_000_000 + parts["micros"], 0), ~ok


def decimals(
    unscaled_values: npt.ArrayLike,
    scale: int = 2,
    precision: int = 18,
    valid: npt.NDArray[np.bool_] | None = None,
) -> pa.Array:
    """A decimal128 column from unscaled integers (cents at scale 2), built from the bits."""
    values = np.asarray(unscaled_values, dtype=np.int64)
    words = np.empty((len(values), 2), dtype=np.int64)
    words[:, 0] = values
    words[:, 1] = np.where(values < 0, -1, 0)  # sign extension to 128 bits
    mask = None if valid is None else pa.array(valid, type=pa.bool_()).buffers()[1]
    return pa.Array.from_buffers(
        pa.decimal128(precision, scale),
        len(values),
        [mask, pa.py_buffer(words.tobytes())],
        null_count=-1 if valid is not None else 0,
    )


# A leaf of a nested type: its path (field names, and "[]" for a list's items), the
# canonical type there, and the type a source has there (None where it has none).
Leaf = tuple[tuple[str, ...], pa.DataType, pa.DataType | None]


def _is_list(dtype: pa.DataType | None) -> bool:
    return dtype is not None and (pa.types.is_list(dtype) or pa.types.is_large_list(dtype))


def map_leaves(
    target: pa.DataType,
    source: pa.DataType | None,
    leaf: Callable[[Leaf], pa.DataType],
    path: tuple[str, ...] = (),
) -> pa.DataType:
    """`target` rebuilt with each leaf (a type neither list nor struct) replaced by
    `leaf((path, target_leaf, source_leaf))`, walking `source` alongside where it has the
    same shape. The one walker of nested types: what to do at a leaf is the caller's."""
    if pa.types.is_list(target):
        inner = source.value_type if source is not None and _is_list(source) else None
        value = map_leaves(target.value_type, inner, leaf, (*path, "[]"))
        return pa.list_(target.value_field.with_type(value))
    if pa.types.is_struct(target):
        have = {f.name: f.type for f in source} if source and pa.types.is_struct(source) else {}
        return pa.struct(
            [
                f.with_type(map_leaves(f.type, have.get(f.name), leaf, (*path, f.name)))
                for f in target
            ]
        )
    return leaf((path, target, source))


def leaves(target: pa.DataType, source: pa.DataType | None = None) -> list[Leaf]:
    """Every leaf of `target`, with the source's type there."""
    found: list[Leaf] = []

    def keep(leaf: Leaf) -> pa.DataType:
        found.append(leaf)
        return leaf[1]

    map_leaves(target, source, keep)
    return found


def at_path(column: pa.Array, path: tuple[str, ...]) -> tuple[pa.Array, npt.NDArray[np.int64]]:
    """The values of a nested column at a leaf's path (lists flattened), and the row of
    `column` each comes from."""
    rows = np.arange(len(column))
    for step in path:
        if step == "[]":
            rows = rows[pc.list_parent_indices(column).to_numpy()]
            column = pc.list_flatten(column)
        else:
            column = pc.struct_field(column, step)
    return column, rows
