"""Card codes over whole columns: text <-> small integers (rank * 4 + suit, joker 52).

Ranks run 2..A as 0..12 and suits c, d, h, s as 0..3, the order in which the
examples list joker substitutes (2c 2d 2h 2s 3c ... As). Parsing maps each
distinct spelling once, so a column of a million cards costs a dictionary
encode, not a million Python calls.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.helpers.encoding import CANONICAL, JOKER, N_STANDARD, RANKS, SUITS, card_code
from pipeline.helpers.errors import CardError

__all__ = ["CANONICAL", "JOKER", "N_STANDARD", "RANKS", "SUITS"]

INVALID = -1

CardCodes = npt.NDArray[np.int8]


def _spellings() -> dict[str, int]:
    """Every accepted spelling: either case for rank and suit, '10' for T, JK any case."""
    table: dict[str, int] = {}
    for r, rank in enumerate(RANKS):
        rank_spellings = {rank, rank.lower()} | ({"10"} if rank == "T" else set())
        for s, suit in enumerate(SUITS):
            for rs in rank_spellings:
                for ss in (suit, suit.upper()):
                    table[rs + ss] = card_code(r, s)
    for j in ("JK", "Jk", "jK", "jk"):
        table[j] = JOKER
    return table


SPELLINGS: dict[str, int] = _spellings()


def _pair_table() -> npt.NDArray[np.int8]:
    """Code of every accepted two-byte spelling, indexed by first byte * 256 + second."""
    table = np.full(1 << 16, INVALID, dtype=np.int8)
    for text, code in SPELLINGS.items():
        if len(text) == 2:
            table[ord(text[0]) << 8 | ord(text[1])] = code
    return table


_PAIR_CODE = _pair_table()


def try_parse(texts: pa.Array | Sequence[str | None]) -> CardCodes:
    """Codes for a column of card texts; INVALID (-1) where a text is not a card.

    Works on the bytes of the Arrow column: a card is two bytes (rank, suit), three
    for '10' and a suit, or JK in any case.

    >>> try_parse(["Ah", "10d", "jk", "Xx", "2C"]).tolist()
    [50, 33, 52, -1, 0]
    """
    array = texts if isinstance(texts, pa.Array) else pa.array(texts, type=pa.string())
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if pa.types.is_dictionary(array.type):  # each distinct text parsed once
        return _by_index(try_parse(array.dictionary), array.indices)
    if not pa.types.is_string(array.type):
        array = array.cast(pa.string())
    n = len(array)
    if n == 0:
        return np.empty(0, dtype=np.int8)
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int32)[array.offset : array.offset + n + 1]
    length = np.diff(offsets)
    if (length == 2).all():  # the usual column: the bytes are the cards, two by two
        pairs = np.frombuffer(array.buffers()[2], dtype=">u2", count=n, offset=int(offsets[0]))
        return _PAIR_CODE[pairs]
    data = (
        np.frombuffer(array.buffers()[2], dtype=np.uint8)
        if array.buffers()[2]
        else np.zeros(0, np.uint8)
    )
    data = np.append(data, np.zeros(3, np.uint8))  # reads past a short last card stay in bounds
    start = offsets[:-1]
    # One lookup of the first two bytes: a card is nearly always two bytes long.
    pair = data[start].astype(np.uint16) << 8 | data[start + 1]
    codes = np.where(length == 2, _PAIR_CODE[pair], INVALID).astype(np.int8)
    ten = np.flatnonzero(length == 3)
    if ten.size:  # '10' and a suit reads as 'T' and that suit
        is_ten = (data[start[ten]] == ord("1")) & (data[start[ten] + 1] == ord("0"))
        as_t = _PAIR_CODE[ord("T") << 8 | data[start[ten] + 2].astype(np.uint16)]
        codes[ten] = np.where(is_ten, as_t, INVALID)
    if array.null_count:
        codes[pc.is_null(array).to_numpy(zero_copy_only=False)] = INVALID
    return codes


def _by_index(codes: CardCodes, indices: pa.Array) -> CardCodes:
    """The codes of a dictionary's texts, spread out over its indices (INVALID where null)."""
    lookup = np.append(codes, np.int8(INVALID))
    return lookup[pc.fill_null(indices, len(codes)).to_numpy(zero_copy_only=False)]


def parse(texts: pa.Array | Sequence[str | None], where: Sequence[str] | None = None) -> CardCodes:
    """Codes for a column of card texts; a CardError names the first bad card and where it was.

    `where` gives, per card, a place to quote in the error (a file and line, a field);
    without it the error quotes the position in the column.

    >>> parse(["Ts", "JK"]).tolist()
    [35, 52]
    >>> parse(["Ts", "Zz"], where=["board 1", "board 2"])
    Traceback (most recent call last):
    ...
    pipeline.helpers.errors.CardError: The card 'Zz' at board 2 is not a card: ...
    """
    codes = try_parse(texts)
    bad = np.flatnonzero(codes == INVALID)
    if bad.size:
        i = int(bad[0])
        card = texts[i]
        text = card.as_py() if isinstance(card, pa.Scalar) else card
        raise CardError(text, where[i] if where is not None else f"position {i}")
    return codes


def format_cards(codes: npt.NDArray[np.integer]) -> npt.NDArray[np.object_]:
    """Canonical text ('Ah', 'Td', 'JK') of each code, same shape; None where the code is -1.

    >>> format_cards(np.array([[50, 33], [52, -1]])).tolist()
    [['Ah', 'Td'], ['JK', None]]
    """
    codes = np.asarray(codes)
    padded = np.array([*CANONICAL, None], dtype=object)
    return padded[np.where(codes < 0, len(CANONICAL), codes)]


_TEXT_BYTES = np.frombuffer("".join(CANONICAL).encode(), dtype=np.uint8).reshape(-1, 2)


def card_texts(codes: npt.NDArray[np.integer]) -> pa.StringArray:
    """'Ah Kd 7c' per row of a (rows, k) array of codes, built as bytes (no Python strings).

    Every card is two characters, so every text is 3k - 1 bytes long.

    >>> card_texts(np.array([[50, 33], [52, 0]])).to_pylist()
    ['Ah Td', 'JK 2c']
    """
    codes = np.asarray(codes)
    n, k = codes.shape
    width = 3 * k - 1
    text = np.full((n, 3 * k), ord(" "), dtype=np.uint8)
    text.reshape(n, k, 3)[:, :, :2] = _TEXT_BYTES[codes]
    data = np.ascontiguousarray(text[:, :width]).reshape(-1)
    offsets = np.arange(n + 1, dtype=np.int32) * width
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data))
