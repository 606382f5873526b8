"""The small-integer codes an audit stores, each defined here and nowhere else: in Python
(over numbers or numpy arrays alike) and as the DuckDB macros of the same names, which
every audit database holds, so that a report in sql/ and the DuckDB CLI read them too.

- A card code is rank * 4 + suit: ranks 2..A as 0..12, suits c, d, h, s as 0..3, and a
  joker 52.
- A placement (an open-face card, where it went and when) is street * 1000 + part * 100
  + card code: the street from 1, the part an index into the streets' parts (0 dealt,
  1 top, 2 middle, 3 bottom, 4 discard).
- A cut key (how one hand cut the deck among groups of cards: the seats, the boards)
  holds each group's count of cards in 7 bits, group g at bit 7 * g (no group holds 128
  cards, and nine groups fit in a signed 64-bit word).
- A player's cards and row values are stored packed in 64-bit words (`packing.py`):
  `cards_item(word, i)` and `values_item(word, i)` read one back.
"""

from __future__ import annotations

from typing import Any

from pipeline.helpers.packing import CARDS, VALUES

RANKS = "23456789TJQKA"
SUITS = "cdhs"
N_RANKS, N_SUITS = len(RANKS), len(SUITS)
N_STANDARD = N_RANKS * N_SUITS
JOKER = N_STANDARD
CANONICAL: tuple[str, ...] = (*(r + s for r in RANKS for s in SUITS), "JK")

STREET_BASE, PART_BASE = 1000, 100
DEALT_PART = 0

GROUP_BITS = 7
GROUP_MASK = (1 << GROUP_BITS) - 1
GROUPS_PER_KEY = 63 // GROUP_BITS

# A number, or a numpy array of them: each function maps either.
N = Any


def card_code(rank: N, suit: N) -> N:
    """The code of a card of `rank` and `suit`.

    >>> card_code(12, 2)  # Ah
    50
    """
    return rank * N_SUITS + suit


def rank_of(card: N) -> N:
    return card // N_SUITS


def suit_of(card: N) -> N:
    return card % N_SUITS


def placement(street: N, part: N, card: N) -> N:
    """Where `card` went (`part`) on `street`.

    >>> placement(2, 3, 50)  # the Ah to the bottom on the second street
    2350
    """
    return street * STREET_BASE + part * PART_BASE + card


def street_of(placement: N) -> N:
    return placement // STREET_BASE


def part_of(placement: N) -> N:
    return placement // PART_BASE % (STREET_BASE // PART_BASE)


def placed_card(placement: N) -> N:
    return placement % PART_BASE


def cut_key(count: N, group: N) -> N:
    """`count` cards of `group`, as their share of a cut key.

    >>> cut_key(7, 1) + cut_key(10, 0)
    906
    """
    return count << (GROUP_BITS * group)


def group_count(key: N, group: N) -> N:
    """How many cards of `group` a cut key holds.

    >>> group_count(906, 1), group_count(906, 0), group_count(906, 2)
    (7, 10, 0)
    """
    return (key >> (GROUP_BITS * group)) & GROUP_MASK


def _text_list(texts: tuple[str, ...]) -> str:
    return "[" + ", ".join(f"'{t}'" for t in texts) + "]"


# The macros, as (name, parameters, body): the same arithmetic as the functions above.
MACROS = (
    ("card_code", "rank, suit", f"rank * {N_SUITS} + suit"),
    ("rank_of", "card", f"card // {N_SUITS}"),
    ("suit_of", "card", f"card % {N_SUITS}"),
    ("card_text", "card", f"{_text_list(CANONICAL)}[card + 1]"),
    # A card as the audit spells it (CANONICAL: "Ah", "Td", "JK"); NULL for other text.
    ("card_of_text", "text", f"list_position({_text_list(CANONICAL)}, text) - 1"),
    ("placement", "street, part, card", f"street * {STREET_BASE} + part * {PART_BASE} + card"),
    ("street_of", "placement", f"placement // {STREET_BASE}"),
    ("part_of", "placement", f"placement // {PART_BASE} % {STREET_BASE // PART_BASE}"),
    ("placed_card", "placement", f"placement % {PART_BASE}"),
    ("cut_key", "count, grp", f"count::BIGINT << ({GROUP_BITS} * grp)"),
    ("group_count", "key, grp", f"(key >> ({GROUP_BITS} * grp)) & {GROUP_MASK}"),
    CARDS.macro,
    VALUES.macro,
)


def macros_sql(temporary: bool = False) -> str:
    """The statements that create the macros (in the database, or for this connection)."""
    kind = "TEMP MACRO" if temporary else "MACRO"
    return "\n".join(
        f"CREATE OR REPLACE {kind} {name}({params}) AS ({body});" for name, params, body in MACROS
    )
