"""Each stored code has one home (helpers/encoding.py): its Python functions and its DuckDB
macros agree, both ways, over every value; and no other file works a code out by hand."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pytest

from pipeline.helpers import encoding as e
from pipeline.helpers.packing import CARDS, VALUES
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def con() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute(e.macros_sql())
    return con


def _sql(con: duckdb.DuckDBPyConnection, expression: str, **columns: np.ndarray) -> np.ndarray:
    """`expression` over the rows of `columns`, in their order."""
    names = list(columns)
    table = {n: columns[n].astype(np.int64) for n in names}
    con.register("t", table)
    try:
        rows = con.execute(f"SELECT {expression} FROM t").fetchnumpy()
    finally:
        con.unregister("t")
    return next(iter(rows.values()))


def test_card_codes_round_trip_in_python_and_sql(con: duckdb.DuckDBPyConnection) -> None:
    rank, suit = (a.ravel() for a in np.mgrid[0 : e.N_RANKS, 0 : e.N_SUITS])
    code = e.card_code(rank, suit)
    assert sorted(code) == list(range(e.N_STANDARD))
    assert (e.rank_of(code) == rank).all() and (e.suit_of(code) == suit).all()
    assert (_sql(con, "card_code(rank, suit)", rank=rank, suit=suit) == code).all()
    assert (_sql(con, "rank_of(code)", code=code) == rank).all()
    assert (_sql(con, "suit_of(code)", code=code) == suit).all()
    every = np.arange(e.JOKER + 1)
    spelled = _sql(con, "card_text(code)", code=every)
    assert list(spelled) == list(e.CANONICAL)
    assert e.CANONICAL[e.card_code(12, 2)] == "Ah" and e.CANONICAL[e.JOKER] == "JK"
    texts = [*e.CANONICAL, "Xx", "ah", "10h", ""]  # the audit spells cards canonically
    con.register("t", pa.table({"text": texts}))
    back = con.execute("SELECT card_of_text(text) FROM t").fetchall()
    con.unregister("t")
    assert [b for (b,) in back] == [*range(e.JOKER + 1), None, None, None, None]


def test_placements_round_trip_in_python_and_sql(con: duckdb.DuckDBPyConnection) -> None:
    street, part, card = (a.ravel() for a in np.mgrid[1:14, 0:5, 0 : e.JOKER + 1])
    code = e.placement(street, part, card)
    assert len(set(code)) == len(code)
    for name, want in (("street_of", street), ("part_of", part), ("placed_card", card)):
        assert (getattr(e, name)(code) == want).all()
        assert (_sql(con, f"{name}(code)", code=code) == want).all()
    sql = _sql(con, "placement(street, part, card)", street=street, part=part, card=card)
    assert (sql == code).all()


def test_cut_keys_round_trip_in_python_and_sql(con: duckdb.DuckDBPyConnection) -> None:
    rng = np.random.default_rng(5)
    counts = rng.integers(0, e.GROUP_MASK + 1, size=(500, e.GROUPS_PER_KEY))
    counts[0] = e.GROUP_MASK  # every group full: the key's highest bits
    groups = np.arange(e.GROUPS_PER_KEY)
    keys = e.cut_key(counts, groups).sum(axis=1)
    assert keys.max() < 2**63
    assert (e.group_count(keys[:, None], groups) == counts).all()
    hand = np.repeat(np.arange(len(counts)), e.GROUPS_PER_KEY)
    con.register("t", {"hand": hand, "n": counts.ravel(), "g": np.tile(groups, len(counts))})
    by_sql = con.execute("SELECT sum(cut_key(n, g)) FROM t GROUP BY hand ORDER BY hand")  # cuts.sql
    assert [k for (k,) in by_sql.fetchall()] == keys.tolist()
    back = con.execute(
        "SELECT group_count(k, g) FROM (SELECT sum(cut_key(n, g)) AS k, hand FROM t "
        "GROUP BY hand), range(9) AS r(g) ORDER BY hand, g"
    ).fetchall()
    con.unregister("t")
    assert [c for (c,) in back] == counts.ravel().tolist()


# Arithmetic that works out a code by hand: a card's rank or suit by 4, a placement's
# parts by 100 or 1000, a cut key's 7 bits. Files where the same numbers mean something
# else are named, each with what it is.
_BY_HAND = re.compile(
    r"((?<!\*)\*(?!\*)|//|%)\s*(4|100|1000)\b|<<\s*\(?\s*7\b|&\s*127\b|uint64\(4\)"
)
_OTHER_MEANINGS = {
    "pipeline/helpers/encoding.py": "the home of the codes",
    "pipeline/helpers/columns.py": "the calendar: leap years by 4 and 100, years of 4 digits",
    "pipeline/core/money.py": "cents: 100 to the unit",
    "pipeline/engine/evaluate_file.py": "milliseconds",
}


def by_hand(text: str) -> list[int]:
    """The lines of `text` (comments and docstrings aside) that work a code out by hand."""
    lines = []
    for number, line in enumerate(text.splitlines(), 1):
        code = line.split("#")[0].split("--")[0]
        if _BY_HAND.search(code) and "rank * 4 + suit" not in code:
            lines.append(number)
    return lines


def test_no_code_is_worked_out_outside_its_home() -> None:
    found = {}
    for path in sorted([*(ROOT / "pipeline").rglob("*.py"), *(ROOT / "sql").rglob("*.sql")]):
        name = str(path.relative_to(ROOT))
        if name not in _OTHER_MEANINGS and (lines := by_hand(path.read_text())):
            found[name] = lines
    assert found == {}


@pytest.mark.parametrize(
    "line",
    [
        "rank = codes // 4",
        "suit = cards % 4",
        "placements = street * 1000 + part * 100 + card",
        "lambda p: p % 100",
        "sum(standard::BIGINT << (7 * grp))",
        "(present >> (7 * g)) & 127",
        "SELECT list_transform(cards, lambda c: c % 4)",
        "taken = used >> (rank * np.uint64(4))",
    ],
)
def test_the_check_sees_a_code_worked_out_by_hand(line: str) -> None:
    assert by_hand(line) == [1]


def test_an_audit_holds_the_macros(tmp_path: Path) -> None:
    from pipeline.engine.verify import verify

    verify([ROOT / "fixtures" / "examples" / "family" / "clean" / "hands.jsonl"], tmp_path)
    with duckdb.connect(str(tmp_path / "audit.duckdb"), read_only=True) as con:
        names = {
            n for (n,) in con.execute("SELECT function_name FROM duckdb_functions()").fetchall()
        }
        assert {name for name, _, _ in e.MACROS} <= names
        assert con.execute("SELECT card_text(card_code(12, 2))").fetchall() == [("Ah",)]


def test_packed_words_read_back_by_their_macros(con: duckdb.DuckDBPyConnection) -> None:
    rng = np.random.default_rng(8)
    for packing, count in ((CARDS, 13), (VALUES, 6)):
        items = rng.integers(0, packing.mask + 1, size=(50, count))
        words = packing.pack(items)
        columns = {name: pa.array(w) for name, w in words.items()}
        con.register("w", pa.table(columns))
        unpacked = [
            [v for (v,) in con.execute(f"SELECT {packing.unpacked_sql('w', str(i), len(words))} "
                                       "FROM w").fetchall()]
            for i in range(count)
        ]  # fmt: skip
        con.unregister("w")
        assert np.array(unpacked).T.tolist() == items.tolist()


def test_sql_made_from_the_code_is_current() -> None:
    from scripts.export_sql import TARGETS

    for target, text in TARGETS.items():
        assert target.read_text() == text(), "run scripts/export_sql.py"
