"""Hand values: the 7,462 classes of five-card poker hands, best last, then the 455 of
three-card tops (chinese-family.md section 2).

A value is a small integer. A five-card value is the class's strength (0 = 7-5-4-3-2
high, 7461 = the royal flush): comparing values compares hands, and equal values are
ties. Three-card values follow (7462 = 4-3-2 high, 7916 = three aces), ordered among
themselves the same way; a three-card top is compared with a five-card row only by
category and ranks (the foul rule), never by value. Each value decodes to its
category, its ranks in order of significance (five, or three then -1 -1), the
canonical text and a label for people.
"""

from __future__ import annotations

import itertools
from enum import IntEnum

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.core.cards import RANKS
from pipeline.core.evaluator import memo

NO_VALUE = -1


class Category(IntEnum):
    """Hand categories, weakest first; the names are the canonical texts."""

    high_card = 0
    pair = 1
    two_pair = 2
    three_of_a_kind = 3
    straight = 4
    flush = 5
    full_house = 6
    four_of_a_kind = 7
    straight_flush = 8


RankTuple = tuple[int, int, int, int, int]
ClassKey = tuple[Category, RankTuple]

_WHEEL = (3, 2, 1, 0, 12)


def straight_top(distinct: tuple[int, ...]) -> int | None:
    """The top rank of the straight formed by five distinct ranks, if they form one."""
    s = sorted(distinct, reverse=True)
    if s == [12, 3, 2, 1, 0]:
        return 3
    if s[0] - s[4] == 4 and len(set(s)) == 5:
        return s[0]
    return None


def straight_ranks(top: int) -> RankTuple:
    """The five ranks of the straight topped by `top`, in significance order (wheel: 5432A)."""
    if top == 3:
        return _WHEEL
    return (top, top - 1, top - 2, top - 3, top - 4)


def classify(ranks: tuple[int, ...], suited: bool) -> ClassKey:
    """Category and significance-ordered ranks of five cards (`suited`: all one suit).

    Used to build the lookup tables once; the hot path never calls it.
    """
    counts = {r: ranks.count(r) for r in set(ranks)}
    # Significance: larger groups first, then higher ranks.
    order = sorted(counts, key=lambda r: (counts[r], r), reverse=True)
    expanded = tuple(r for r in order for _ in range(counts[r]))
    shape = sorted(counts.values(), reverse=True)
    if len(counts) == 5:
        top = straight_top(tuple(counts))
        if top is not None:
            cat = Category.straight_flush if suited else Category.straight
            return cat, straight_ranks(top)
        return (Category.flush if suited else Category.high_card), expanded  # type: ignore[return-value]
    by_shape = {
        (4, 1): Category.four_of_a_kind,
        (3, 2): Category.full_house,
        (3, 1, 1): Category.three_of_a_kind,
        (2, 2, 1): Category.two_pair,
        (2, 1, 1, 1): Category.pair,
    }
    return by_shape[tuple(shape)], expanded  # type: ignore[return-value]


@memo.table
def all_classes() -> tuple[ClassKey, ...]:
    """Every distinct five-card value, weakest first (index = strength)."""
    keys: set[ClassKey] = set()
    for combo in itertools.combinations_with_replacement(range(13), 5):
        if max(combo.count(r) for r in combo) <= 4:
            keys.add(classify(combo, suited=False))
    for combo in itertools.combinations(range(13), 5):
        keys.add(classify(combo, suited=True))
    return tuple(sorted(keys, key=lambda k: (int(k[0]), k[1])))


FIVE_CARD_VALUES = 7462
TopRanks = tuple[int, int, int]


def classify_three(ranks: tuple[int, ...]) -> tuple[Category, TopRanks]:
    """Category and significance-ordered ranks of a three-card top (no straights or
    flushes in three cards)."""
    counts = {r: ranks.count(r) for r in set(ranks)}
    order = sorted(counts, key=lambda r: (counts[r], r), reverse=True)
    expanded = tuple(r for r in order for _ in range(counts[r]))
    shape = max(counts.values())
    category = (Category.high_card, Category.pair, Category.three_of_a_kind)[shape - 1]
    return category, expanded  # type: ignore[return-value]


@memo.table
def three_card_classes() -> tuple[tuple[Category, TopRanks], ...]:
    """Every distinct three-card value, weakest first (value = FIVE_CARD_VALUES + index)."""
    keys = {classify_three(c) for c in itertools.combinations_with_replacement(range(13), 3)}
    return tuple(sorted(keys, key=lambda k: (int(k[0]), k[1])))


# Values only Low in the Middle gives (house-rules.md 2.3), after the three-card ones: a
# 5432A that is no straight there, as a high card or a flush.
LOW_ONLY: tuple[ClassKey, ...] = (
    (Category.high_card, (12, 3, 2, 1, 0)),
    (Category.flush, (12, 3, 2, 1, 0)),
)


def low_only_values() -> tuple[int, int]:
    """The values of high_card:A5432 and flush:A5432 (Low in the Middle alone)."""
    first = FIVE_CARD_VALUES + len(three_card_classes())
    return first, first + 1


@memo.table
def strength_of() -> dict[ClassKey, int]:
    """Map a class key to its strength."""
    return {key: i for i, key in enumerate(all_classes())}


_NAMES = (
    "Two",
    "Three",
    "Four",
    "Five",
    "Six",
    "Seven",
    "Eight",
    "Nine",
    "Ten",
    "Jack",
    "Queen",
    "King",
    "Ace",
)
_PLURALS = (
    "Twos",
    "Threes",
    "Fours",
    "Fives",
    "Sixes",
    "Sevens",
    "Eights",
    "Nines",
    "Tens",
    "Jacks",
    "Queens",
    "Kings",
    "Aces",
)


def _label(cat: Category, r: RankTuple) -> str:
    """Human text of a value, e.g. 'Full House, Sevens full of Queens'."""
    name, plural = _NAMES, _PLURALS
    kickers = "-".join(name[x] for x in r)

    def a(rank: int) -> str:
        return ("an " if name[rank][0] in "AE" else "a ") + name[rank]

    match cat:
        case Category.straight_flush:
            return "Royal Flush" if r[0] == 12 else f"Straight Flush, {name[r[0]]} high"
        case Category.four_of_a_kind:
            return f"Four of a Kind, {plural[r[0]]} with {a(r[4])} kicker"
        case Category.full_house:
            return f"Full House, {plural[r[0]]} full of {plural[r[3]]}"
        case Category.flush:
            return f"Flush, {kickers}"
        case Category.straight:
            return f"Straight, {name[r[0]]} high"
        case Category.three_of_a_kind:
            return f"Three of a Kind, {plural[r[0]]}, {name[r[3]]}-{name[r[4]]} kickers"
        case Category.two_pair:
            return f"Two Pair, {plural[r[0]]} and {plural[r[2]]} with {a(r[4])} kicker"
        case Category.pair:
            rest = "-".join(name[x] for x in r[2:])
            return f"Pair of {plural[r[0]]}, {rest} kickers"
        case _:
            return f"High Card, {kickers}"


def _top_label(cat: Category, r: TopRanks) -> str:
    """Human text of a three-card top, e.g. 'Pair of Eights, King kicker'."""
    name, plural = _NAMES, _PLURALS
    if cat is Category.three_of_a_kind:
        return f"Three of a Kind, {plural[r[0]]}"
    if cat is Category.pair:
        return f"Pair of {plural[r[0]]}, {name[r[2]]} kicker"
    return "High Card, " + "-".join(name[x] for x in r)


@memo.table
def _decoded() -> tuple[
    npt.NDArray[np.int8],
    npt.NDArray[np.int8],
    npt.NDArray[np.object_],
    npt.NDArray[np.object_],
    npt.NDArray[np.int8],
    npt.NDArray[np.int64],
]:
    five, three = all_classes(), three_card_classes()
    classes = [*five, *((c, (*r, NO_VALUE, NO_VALUE)) for c, r in three), *LOW_ONLY]
    category = np.array([int(c) for c, _ in classes] + [NO_VALUE], dtype=np.int8)
    ranks = np.array([r for _, r in classes] + [(NO_VALUE,) * 5], dtype=np.int8)
    text = np.array(
        [f"{c.name}:" + "".join(RANKS[x] for x in r if x >= 0) for c, r in classes] + [None],
        dtype=np.object_,
    )
    labels = [_label(c, r) for c, r in five] + [_top_label(c, r) for c, r in three]
    labels += [_label(c, r) for c, r in LOW_ONLY]
    label = np.array([*labels, None], dtype=np.object_)
    first = np.ascontiguousarray(ranks[:, 0])
    three = ranks[:, :3].astype(np.int64) @ np.array([169, 13, 1])
    return category, ranks, text, label, first, three


def _lookup(values: npt.ArrayLike, column: int) -> npt.NDArray[np.generic]:
    table = _decoded()[column]
    v = np.asarray(values)
    return table[np.where(v < 0, len(table) - 1, v)]


def category_of(values: npt.ArrayLike) -> npt.NDArray[np.int8]:
    """The Category code of each value (-1 where there is no value)."""
    return _lookup(values, 0)  # type: ignore[return-value]


def ranks_of(values: npt.ArrayLike) -> npt.NDArray[np.int8]:
    """The ranks of each value in significance order, shape (..., 5); a three-card
    value's last two are -1."""
    return _lookup(values, 1)  # type: ignore[return-value]


def first_rank_of(values: npt.ArrayLike) -> npt.NDArray[np.int8]:
    """The first rank of each value in significance order (-1 where there is no value):
    `ranks_of(values)[..., 0]`, without the other four."""
    return _lookup(values, 4)  # type: ignore[return-value]


def three_ranks_of(values: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """The first three ranks of each value in significance order as one number (169 x
    the first + 13 x the second + the third), which orders them as the ranks do: a top
    against a middle in the foul rule."""
    return _lookup(values, 5)  # type: ignore[return-value]


def value_text(values: npt.ArrayLike) -> npt.NDArray[np.object_]:
    """Canonical texts 'category:ranks' of rules.md section 3.

    >>> value_text([7461, 0]).tolist()
    ['straight_flush:AKQJT', 'high_card:75432']
    """
    return _lookup(values, 2)  # type: ignore[return-value]


def value_label(values: npt.ArrayLike) -> npt.NDArray[np.object_]:
    """Human labels.

    >>> value_label([7461]).tolist()
    ['Royal Flush']
    """
    return _lookup(values, 3)  # type: ignore[return-value]


def parse_value(texts: npt.ArrayLike | pa.Array) -> npt.NDArray[np.int16]:
    """Values of canonical texts; -1 for a text that is no hand value (e.g. 'pair:AAAAA').

    Matched column-wise by Arrow against the canonical texts of every value.

    >>> parse_value(["straight:5432A", "pair:TTA93", "flush:AAKQJ", "pair:88K"]).tolist()
    [5853, 3224, -1, 7830]
    """
    column = (
        texts
        if isinstance(texts, pa.Array | pa.ChunkedArray)
        else pa.array(np.asarray(texts, dtype=object).ravel(), pa.string())
    )
    if pa.types.is_dictionary(column.type):  # each distinct text looked up once
        column = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
        found = pc.index_in(column.dictionary, value_set=_arrow_columns()[0]).take(column.indices)
    else:
        found = pc.index_in(column, value_set=_arrow_columns()[0])
    shape = np.shape(texts) if not isinstance(texts, pa.Array | pa.ChunkedArray) else (len(texts),)
    return (
        pc.fill_null(found, NO_VALUE).to_numpy(zero_copy_only=False).astype(np.int16).reshape(shape)
    )


@memo.table
def _arrow_columns() -> tuple[pa.Array, pa.Array, pa.Array]:
    """Canonical text, label and category name of every value, as Arrow string columns."""
    _, _, text, label, _, _ = _decoded()
    names = [c.name for c in Category]
    categories = [names[c] for c, _ in (*all_classes(), *three_card_classes(), *LOW_ONLY)]
    return (
        pa.array(text[:-1].tolist(), pa.string()),
        pa.array(label[:-1].tolist(), pa.string()),
        pa.array(categories, pa.string()),
    )


def hand_values() -> pa.Table:
    """Every value with its canonical text, category and label: the `hand_values` table."""
    text, label, category = _arrow_columns()
    return pa.table(
        {
            "value_id": pa.array(np.arange(len(text)), pa.int16()),
            "value": text,
            "category": category,
            "label": label,
        }
    )
