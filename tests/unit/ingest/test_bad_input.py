"""Bad input of every kind ends in quarantine with its check; nothing escapes, nothing is lost."""

from __future__ import annotations

import gzip
import importlib
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.ingest.decode import decode_lines
from pipeline.ingest.sources import read_blocks
from tests.unit.ingest.helpers import ingest, valid_hand, write_lines


def spoil(change: Any) -> str:
    hand = valid_hand()
    change(hand)
    return json.dumps(hand)


def set_(path: str, value: Any) -> Any:
    def apply(hand: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target: Any = hand
        for p in parents:
            target = target[int(p)] if p.isdigit() else target[p]
        if isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value

    return apply


CASES: dict[str, tuple[str | bytes, str]] = {
    "truncated line": (json.dumps(valid_hand())[:300], "unreadable"),
    "not utf-8": (b'{"hand_id": "\xff\xfe"}', "unreadable"),
    "deeply nested": ("[" * 100_000 + "]" * 100_000, "unreadable"),
    "NaN money": (spoil(set_("point_value", "X")).replace('"X"', "NaN"), "schema"),
    "Infinity money": (spoil(set_("rake_cap", "X")).replace('"X"', "Infinity"), "schema"),
    "exponent money": (spoil(set_("rake_cap", "X")).replace('"X"', "1e2"), "schema"),
    "exponent money as text": (spoil(set_("rake_cap", "1e2")), "schema"),
    "three decimals": (spoil(set_("players.0.won", "9.001")), "schema"),
    "three decimals as a number": (
        spoil(set_("players.0.won", "X")).replace('"X"', "9.000"),
        "schema",
    ),
    "negative stack": (spoil(set_("players.0.stack_start", "-1.00")), "schema"),
    # Constraints of optional fields (a Field inside an optional type) hold too.
    "negative add-on": (spoil(set_("players.0.add_on", "-1.00")), "schema"),
    "empty currency": (spoil(set_("currency", "")), "schema"),
    "currency in lower case": (spoil(set_("currency", "usd")), "schema"),
    "one player": (spoil(lambda h: h.update(players=h["players"][:1])), "players"),
    "seven players": (
        spoil(lambda h: h.update(players=h["players"] + h["players"][:3])),
        "players",
    ),
    "repeated seat": (spoil(set_("players.1.seat", 1)), "players"),
    "board of four": (spoil(lambda h: h["boards"][0].pop()), "schema"),
    "three boards": (spoil(lambda h: h["boards"].append(["2c", "3c", "4c", "5c", "6c"])), "schema"),
    "joker on a board": (spoil(set_("boards.1.0", "JK")), "joker"),
    "three jokers": (spoil(set_("players.0.top.0", "JK")), "joker"),
    "joker in plain taiwanese": (spoil(set_("variant", "taiwanese")), "joker"),
    "unknown variant": (spoil(set_("variant", "omaha")), "schema"),
    "bad timestamp": (spoil(set_("started_at", "2026-02-30T10:00:00Z")), "schema"),
    "timestamp without zone": (spoil(set_("started_at", "2026-11-29T10:00:00")), "schema"),
    "null hand_id": (spoil(set_("hand_id", None)), "schema"),
    "seat as text": (spoil(set_("players.0.seat", "1")), "schema"),
    "bad card": (spoil(set_("players.0.middle.0", "Tx")), "card"),
    "duplicate card": (spoil(set_("players.0.top.0", "Qs")), "duplicate_card"),
    "row of two in the top": (
        spoil(lambda h: h["players"][0]["top"].append(h["players"][0]["middle"].pop())),
        "setting",
    ),
    "rows differ from cards": (spoil(set_("players.0.cards.0", "2h")), "setting"),
    "a JSON number line": ("42", "schema"),
}


@pytest.mark.parametrize("case", CASES)
def test_each_bad_record_is_quarantined_with_its_check(case: str, tmp_path: Path) -> None:
    line, check = CASES[case]
    path = write_lines(tmp_path / "hands.jsonl", [json.dumps(valid_hand()), line])
    _, rejects, accounting = ingest(path)
    assert [q.check.value for q in rejects] == [check], [q.message for q in rejects]
    assert accounting.read == 2 and accounting.verified == 1 and accounting.quarantined == 1
    assert rejects[0].source.endswith(":2")
    assert rejects[0].raw


def test_messages_name_the_source_and_the_field(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "h.jsonl", [spoil(set_("players.0.stack_start", "-1.00"))])
    _, rejects, _ = ingest(path)
    assert f"{path}:1" in rejects[0].message
    assert "players.0.stack_start" in rejects[0].message
    path = write_lines(tmp_path / "c.jsonl", [spoil(set_("players.2.middle.1", "1h"))])
    _, rejects, _ = ingest(path)
    assert "seat 4 middle holds '1h', which is not a card" in rejects[0].message


def test_a_money_or_rate_message_says_how_many_decimals(tmp_path: Path) -> None:
    lines = [
        spoil(set_("players.0.won", "9.001")),
        spoil(lambda h: h.update(hand_id="rate", rake_rate="0.0000000001")),
    ]
    _, rejects, _ = ingest(write_lines(tmp_path / "h.jsonl", lines))
    money, rate = (q.message for q in rejects)
    assert "money '9.001' is not a plain decimal with at most two decimals" in money
    assert "rate '0.0000000001' is not a plain decimal from 0 to 1 with at most nine" in rate


def test_money_as_numbers_and_strings_is_accepted_exactly(tmp_path: Path) -> None:
    as_text = valid_hand()
    as_number = valid_hand()
    as_number["hand_id"] = "other"
    line = json.dumps(as_number).replace('"point_value": "1.00"', '"point_value": 1.00')
    line = line.replace('"stack_start": "15.00"', '"stack_start": 15')
    path = write_lines(tmp_path / "h.jsonl", [json.dumps(as_text), line])
    batches, rejects, _ = ingest(path)
    assert rejects == []
    hands = [b for b in batches if len(b)]
    assert [int(x) for b in hands for x in b.hands.point_value] == [100, 100]
    seat_one = [
        int(s)
        for b in hands
        for s, seat in zip(b.players.stack_start, b.players.seat, strict=True)
        if seat == 1
    ]
    assert seat_one == [1500, 1500]


def test_unknown_fields_are_kept_out_and_the_record_accepted(tmp_path: Path) -> None:
    hand = valid_hand()
    hand["dealer_notes"] = {"anything": [1, 2, 3]}
    hand["players"][0]["avatar"] = "cat.png"
    _, rejects, accounting = ingest(write_lines(tmp_path / "h.jsonl", [json.dumps(hand)]))
    assert rejects == [] and accounting.verified == 1


def test_whole_files_that_cannot_be_read(tmp_path: Path) -> None:
    (tmp_path / "scalar.json").write_text("3")
    (tmp_path / "broken.json").write_text("[" + json.dumps(valid_hand()) + ', {"hand_id": ')
    hands = "".join(json.dumps({**valid_hand(), "hand_id": f"g{i}"}) + "\n" for i in range(50))
    (tmp_path / "corrupt.jsonl.gz").write_bytes(gzip.compress(hands.encode())[:2000])
    (tmp_path / "corrupt.parquet").write_bytes(b"PAR1 this is not parquet")
    (tmp_path / "empty.jsonl").write_text("")
    _, rejects, accounting = ingest(tmp_path)
    unreadable = {Path(q.source.split(":")[0]).name for q in rejects if q.check == "unreadable"}
    assert unreadable == {
        "scalar.json",
        "broken.json",
        "corrupt.jsonl.gz",
        "corrupt.parquet",
        "empty.jsonl",
    }
    assert accounting.verified >= 1  # the whole first hand of broken.json, and what gzip gave
    assert accounting.read == accounting.verified + accounting.quarantined


def test_a_corrupt_parquet_row_group_loses_only_its_rows(tmp_path: Path) -> None:
    hands = [{**valid_hand(), "hand_id": f"g{i}"} for i in range(6)]
    lines = write_lines(tmp_path / "h.jsonl", [json.dumps(h) for h in hands])
    table = pa.concat_tables([decode_lines(b).table for b in read_blocks(lines)])  # type: ignore[arg-type]
    path = tmp_path / "h.parquet"
    pq.write_table(table, path, row_group_size=2)
    # Spoil the compressed pages of the second row group's first column.
    chunk = pq.ParquetFile(path).metadata.row_group(1).column(0)
    data = bytearray(path.read_bytes())
    start = chunk.data_page_offset
    data[start : start + chunk.total_compressed_size] = b"\xff" * chunk.total_compressed_size
    path.write_bytes(bytes(data))
    lines.unlink()

    batches, rejects, accounting = ingest(path)
    assert [q.check for q in rejects] == ["unreadable"]
    assert "row group 1 (from row 3)" in rejects[0].message
    verified = [h for b in batches for h in b.hands.hand_id.to_pylist()]
    assert verified == ["g0", "g1", "g4", "g5"]
    assert accounting.read == accounting.verified + accounting.quarantined


def chinese_hand(line: int = 0) -> dict[str, Any]:
    """A correctly settled hand of family/worked.md, fresh each call: the first is closed
    Chinese, the third Open-Face Chinese."""
    worked = Path(__file__).parents[3] / "fixtures" / "family_worked_hands.jsonl"
    return json.loads(worked.read_text().splitlines()[line])


def spoil_chinese(change: Any, line: int = 0) -> str:
    hand = chinese_hand(line)
    change(hand)
    return json.dumps(hand)


def _discard(hand: dict[str, Any], card: str) -> None:
    """Seat 1's first street discards `card` as well."""
    street = hand["players"][0]["streets"][0]
    street["dealt"].append(card)
    street["discard"] = [card]


CHINESE_CASES: dict[str, tuple[str, str]] = {
    "a board on a Chinese hand": (
        spoil_chinese(lambda h: h.update(boards=[["2c", "3c", "4c", "5c", "6c"]])),
        "schema",
    ),
    "five players": (
        spoil_chinese(
            lambda h: h.update(
                players=h["players"] + [dict(p, seat=p["seat"] + 1) for p in h["players"][:2]]
            )
        ),
        "players",
    ),
    "one player": (spoil_chinese(lambda h: h.update(players=h["players"][:1])), "players"),
    "an unknown natural": (
        spoil_chinese(lambda h: h["players"][0].update(declare="natural", natural="flush")),
        "schema",
    ),
    "a natural declared without its name": (
        spoil_chinese(lambda h: h["players"][0].update(declare="natural")),
        "schema",
    ),
    "rows of 3, 5 and 4": (
        spoil_chinese(lambda h: h["players"][0]["bottom"].pop()),
        "setting",
    ),
    "rows that are not the dealt cards": (
        spoil_chinese(
            lambda h: h["players"][0].update(
                cards=["As"]
                + h["players"][0]["top"][1:]
                + h["players"][0]["middle"]
                + h["players"][0]["bottom"]
            )
        ),
        "setting",
    ),
    "a card dealt twice": (
        spoil_chinese(lambda h: h["players"][0]["top"].__setitem__(0, h["players"][1]["top"][0])),
        "duplicate_card",
    ),
    "a joker": (spoil_chinese(lambda h: h["players"][0]["top"].__setitem__(0, "JK")), "joker"),
    "an unknown scoring": (spoil_chinese(lambda h: h.update(scoring="3-3")), "schema"),
    "a hand number past 64 bits": (spoil_chinese(lambda h: h.update(hand_no=2**63)), "schema"),
    "points past 64 bits": (
        spoil_chinese(lambda h: h["players"][0].update(points=-(2**63) - 1)),
        "schema",
    ),
    "an open-face hand without streets": (
        spoil_chinese(lambda h: h["players"][1].pop("streets"), line=2),
        "setting",
    ),
    "a street card that is not a card": (spoil_chinese(lambda h: _discard(h, "Xx"), 2), "card"),
    "a discard another seat holds": (
        spoil_chinese(lambda h: _discard(h, h["players"][1]["top"][0]), 2),
        "duplicate_card",
    ),
}


@pytest.mark.parametrize("case", CHINESE_CASES)
def test_each_bad_chinese_record_is_quarantined_with_its_check(case: str, tmp_path: Path) -> None:
    line, check = CHINESE_CASES[case]
    path = write_lines(tmp_path / "hands.jsonl", [json.dumps(chinese_hand()), line])
    _, rejects, accounting = ingest(path)
    assert [q.check.value for q in rejects] == [check], [q.message for q in rejects]
    assert accounting.read == 2 and accounting.verified == 1 and accounting.quarantined == 1


def test_a_json_array_names_the_line_each_hand_starts_on(tmp_path: Path) -> None:
    """Objects of an array are read as lines (columnar) but named by where they start."""
    hands = [valid_hand() for _ in range(3)]
    for i, hand in enumerate(hands):
        hand["hand_id"] += f"-{i}"
    hands[2]["players"][0]["middle"][0] = "Tx"
    texts = [json.dumps(hands[0], indent=1), json.dumps(hands[1]), json.dumps(hands[2], indent=2)]
    document = "[\n" + ",\n".join(texts) + "\n]\n"
    path = tmp_path / "hands.json"
    path.write_text(document)
    _, rejects, accounting = ingest(path)
    line = document.count("\n", 0, document.index(texts[2])) + 1
    assert [(q.check.value, q.source) for q in rejects] == [("card", f"{path}:{line}")]
    assert accounting.verified == 2 and line > 40


def test_bad_records_spread_through_a_block_cost_only_their_pieces(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every bad case of CASES among 1,200 good hands, in one block: each bad record alone
    is quarantined with its check, every good one is verified, in order; and Arrow reads
    the block about once, then once more in pieces, and a little around each bad line."""
    decoding = importlib.import_module("pipeline.ingest.decode")  # the module, not decode()
    read: list[int] = []
    read_json = decoding._read_json

    def counted(data: bytes, threads: bool) -> Any:
        read.append(len(data))
        return read_json(data, threads)

    monkeypatch.setattr(decoding, "_read_json", counted)
    good = [json.dumps({**valid_hand(), "hand_id": f"g{i}"}) for i in range(1200)]
    lines: list[str | bytes] = list(good)
    bad_at = {}
    for k, (case, (line, check)) in enumerate(CASES.items()):
        at = 20 + k * 35
        lines.insert(at, line)
        bad_at[at + 1] = (case, check)  # line numbers from 1
    batches, rejects, accounting = ingest(write_lines(tmp_path / "h.jsonl", lines))
    got = {int(q.source.rsplit(":", 1)[1]): q.check.value for q in rejects}
    assert got == {n: check for n, (_, check) in bad_at.items()}
    verified = [str(h) for b in batches for h in b.hands.hand_id]
    assert verified == [f"g{i}" for i in range(1200)]
    assert accounting.verified == 1200 and accounting.quarantined == len(CASES)
    # Halving the block around each bad line read it 3.3 times over; pieces, 1.7 times.
    assert sum(read) <= 2.5 * sum(len(x) + 1 for x in lines), sum(read)
