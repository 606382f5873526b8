import numpy as np
import pyarrow as pa
import pytest

from pipeline.core.cards import CANONICAL, JOKER, format_cards, parse, try_parse
from pipeline.helpers.errors import CardError


def test_every_canonical_card_round_trips() -> None:
    codes = parse(list(CANONICAL))
    assert codes.tolist() == list(range(53))
    assert format_cards(codes).tolist() == list(CANONICAL)


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("Ah", 50),
        ("ah", 50),
        ("AH", 50),
        ("10d", 33),
        ("Td", 33),
        ("td", 33),
        ("2c", 0),
        ("JK", JOKER),
        ("jk", JOKER),
        ("Jk", JOKER),
    ],
)
def test_accepted_spellings(text: str, code: int) -> None:
    assert parse([text]).tolist() == [code]


@pytest.mark.parametrize("text", ["Jo", "X", "*", "1c", "Ahh", "", " Ah", "A", "11h", "Ax", None])
def test_rejected_spellings(text: str | None) -> None:
    assert try_parse([text]).tolist() == [-1]


def test_error_names_the_card_and_where_it_was() -> None:
    with pytest.raises(CardError, match=r"'Zz' at hands.jsonl:7 board 2"):
        parse(["Ah", "Zz"], where=["hands.jsonl:7 board 1", "hands.jsonl:7 board 2"])
    with pytest.raises(CardError, match="position 1"):
        parse(["Ah", "Jo"])


def test_arrow_columns_and_empty_input() -> None:
    column = pa.chunked_array([["Ah", None], ["2c"]]).combine_chunks()
    assert try_parse(column).tolist() == [50, -1, 0]
    assert try_parse([]).shape == (0,)


def test_format_keeps_shape_and_marks_missing() -> None:
    codes = np.array([[0, 52], [-1, 51]], dtype=np.int8)
    assert format_cards(codes).tolist() == [["2c", "JK"], [None, "As"]]


def test_every_spelling_of_the_rules_parses_and_nothing_else_of_two_or_three_letters() -> None:
    from pipeline.core.cards import SPELLINGS

    texts = list(SPELLINGS)
    assert try_parse(texts).tolist() == [SPELLINGS[t] for t in texts]
    alphabet = "23456789TJQKAtjqkacdhsCDHSx10 *"
    others = [a + b for a in alphabet for b in alphabet if a + b not in SPELLINGS]
    others += ["1" + b + c for b in "0x" for c in "cdhsCDHSx" if "1" + b + c not in SPELLINGS]
    assert (try_parse(others) == -1).all()
