"""The `identifier` rule of ingest: ids that may not hold control or bidirectional characters.

A hand, table or player id is shown to auditors and written to their spreadsheets. An
id holding a control character (C0, DEL, C1: ESC among them) or a bidirectional
override or isolate could rewrite what a terminal shows, or read in reverse, so such a
record is quarantined with the field named and the character escaped, its raw text
kept (hand-history.md, "Identifiers"). Judged over whole columns with one regular
expression each.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.helpers.columns import children, field, whole
from pipeline.helpers.display import FORBIDDEN_IN_IDENTIFIERS, first_forbidden, quoted
from pipeline.ingest.game_rules import Flags, Verdict

# RE2, as Arrow's kernels take it: the same characters as display.FORBIDDEN.
_PATTERN = (
    "[" + "".join(f"\\x{{{ord(c):x}}}" if c != "-" else "-" for c in FORBIDDEN_IN_IDENTIFIERS) + "]"
)


def _holds_forbidden(texts: pa.Array | pa.ChunkedArray) -> Flags:
    texts = whole(texts)
    if _printable_ascii(texts):  # the usual column: no regular expression over it
        return np.zeros(len(texts), dtype=bool)
    found = pc.match_substring_regex(texts, _PATTERN)
    return pc.fill_null(found, False).to_numpy(zero_copy_only=False)


def _printable_ascii(texts: pa.Array) -> bool:
    """Whether every byte of the column's text (its dictionary's, for a dictionary) is
    printable ASCII, 0x20 to 0x7e: then it holds none of the forbidden characters, each
    of which is a C0 control, DEL, or encoded in UTF-8 by bytes from 0x80 up."""
    if pa.types.is_dictionary(texts.type):
        texts = texts.dictionary
    if not (pa.types.is_string(texts.type) or pa.types.is_large_string(texts.type)):
        return False
    data = texts.buffers()[2]
    if data is None:
        return True
    shifted = np.frombuffer(data, np.uint8) - np.uint8(0x20)  # below 0x20 wraps to 0xe0 up
    return not bool((shifted > 0x5E).any())


def identifier_rule(table: pa.Table) -> Verdict:
    """Records whose hand_id, table_id or a player_id (dealt in or sitting out) holds a
    character an identifier may not."""
    n = table.num_rows
    places: list[tuple[str, pa.Array, np.ndarray, Flags]] = []
    for name in ("hand_id", "table_id"):
        texts = whole(table[name])
        places.append((name, texts, np.arange(n), _holds_forbidden(texts)))
    for column, what in (("players", "player_id"), ("sitting_out", "sitting_out player_id")):
        items, owner = children(table[column])
        texts = field(items, "player_id")
        places.append((what, texts, owner, _holds_forbidden(texts)))
    failed = np.zeros(n, dtype=bool)
    for _, _, owner, bad in places:
        failed[owner[bad]] = True

    def why(i: int) -> str:
        for name, texts, owner, bad in places:
            for k in np.flatnonzero(bad & (owner == i))[:1]:
                text = texts[int(k)].as_py()
                return (
                    f"{name} {quoted(text)} holds {first_forbidden(text)}; an identifier may "
                    "not hold control or bidirectional-override characters"
                )
        raise AssertionError("the identifier rule failed a record without such a character")

    return Verdict(failed, why)
