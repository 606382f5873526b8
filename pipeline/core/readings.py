"""Tables a profile may replace, read from what the hands recorded (`rules infer`).

A royalty table is read from each row's recorded `royalty` beside its recorded value;
a natural's points from the pairs in which one player declared it and the other did
not. Each reading is the most frequent recorded value of its entry, kept when most of
the entry's records agree (a faulty record is outvoted); an entry no hand shows keeps
the value of the profile read onto, and is counted as not seen.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.core.evaluator import Category
from pipeline.core.games import chinese
from pipeline.core.games.chinese import NATURALS
from pipeline.core.games.open_face import contract_rules as open_face_contract
from pipeline.core.rules import RANKS, Profile

Ints = npt.NDArray[np.int64]
Flags = npt.NDArray[np.bool_]

ROWS = ("top", "middle", "bottom")
NEVER_CATEGORY = 99  # a row no stay rule lists


def agreed(n: int, total: int) -> bool:
    """Most of an entry's `total` records, more than half, give its value: `n` of them
    (one faulty record against one true one decides nothing)."""
    return 2 * n > total


@dataclass(frozen=True)
class Reading:
    """A table read: its entries as a profile gives them, and how many were not seen."""

    table: dict[str, Any]
    unseen: int
    seen: frozenset[str] = frozenset()  # Fantasyland's: the parts the records show


def royalty_keys(value: pa.Array, row: Ints, open_face: Flags) -> pa.Array:
    """Each recorded row's royalty entry, `table:name`: `top:three_of_a_kind`,
    `bottom:royal_flush` (an ace-high straight flush), and in the open-face top
    `top_pair:QQ` or `top_trips:777`; null where the value names no category."""
    parts = pc.split_pattern(plain_text(value), ":", max_splits=1)
    category = pc.list_element(parts, 0)
    cards = pc.list_element(parts, 1)
    royal = pc.and_(pc.equal(category, "straight_flush"), pc.starts_with(cards, "AKQJT"))
    category = pc.if_else(royal, "royal_flush", category)
    row_name = pa.array(np.array(ROWS, dtype=object)[row], pa.string())
    key = pc.binary_join_element_wise(row_name, category, ":")
    top = pa.array((row == 0) & open_face)
    pair = pc.and_(top, pc.equal(category, "pair"))
    trips = pc.and_(top, pc.equal(category, "three_of_a_kind"))
    key = pc.if_else(
        pair,
        pc.binary_join_element_wise("top_pair", pc.utf8_slice_codeunits(cards, 0, 2), ":"),
        key,
    )
    return pc.if_else(
        trips,
        pc.binary_join_element_wise("top_trips", pc.utf8_slice_codeunits(cards, 0, 3), ":"),
        key,
    )


def plain_text(value: pa.Array) -> pa.Array:
    """Text as plain strings (Parquet's are often dictionary-encoded)."""
    if pa.types.is_dictionary(value.type):
        value = value.dictionary_decode()
    return value.cast(pa.string())


def read_royalties(codes: Ints, names: list[str], royalty: Ints, base: Profile) -> Reading | None:
    """The royalty table the recorded rows give, onto `base`'s: each row's entry as its
    index in `names` (-1: none) beside its recorded `royalty`."""
    if not len(royalty):
        return None
    counts: dict[str, Counter[int]] = defaultdict(Counter)
    named = codes >= 0
    low = int(royalty.min())
    span = int(royalty.max()) - low + 1
    pairs, n = np.unique(codes[named] * span + (royalty[named] - low), return_counts=True)
    for pair, count in zip(pairs.tolist(), n.tolist(), strict=True):
        counts[names[pair // span]][pair % span + low] += count
    table = royalty_table(base)
    seen = 0
    for key, votes in counts.items():
        (points, n), total = votes.most_common(1)[0], sum(votes.values())
        part, name = key.split(":", 1)
        if part not in table or not agreed(n, total):
            continue
        seen += 1
        if points or name == "royal_flush":  # a row without it pays a royal flush as a
            table[part][name] = points  # straight flush: one that pays none says 0
        else:
            table[part].pop(name, None)
    for entries in table.values():  # a royal flush that pays as a straight flush is not one
        if entries.get("royal_flush", -1) == entries.get("straight_flush", 0):
            del entries["royal_flush"]
    return Reading(table, sum(len(entries) for entries in table.values()) - seen)


def read_naturals(
    declared: Ints, opponent_declared: Ints, points: Ints, base: Profile
) -> Reading | None:
    """The naturals table of the pairs in which one side declared a natural (its code:
    1 + index in NATURALS, 0 for none) and the other did not; `points` are the
    declaring side's recorded points."""
    alone = (declared > 0) & (opponent_declared == 0)
    if not alone.any():
        return None
    table = dict(natural_table(base))
    seen = 0
    for code in np.unique(declared[alone]):
        votes = Counter(points[alone & (declared == code)].tolist())
        (value, n), total = votes.most_common(1)[0], sum(votes.values())
        name = NATURALS[int(code) - 1]
        if agreed(n, total) and value > 0:
            table[name] = value
        else:
            table.pop(name, None)  # settled as played: the table does not pay it
        seen += 1
    return Reading(table, len(NATURALS) - seen)


def royalty_table(profile: Profile) -> dict[str, dict[str, int]]:
    """`profile`'s royalty tables as a rules file gives them (its own, else the
    contract's), a fresh copy."""
    given = profile.values.get("royalties")
    if given is not None:
        return {part: dict(entries) for part, entries in given.items()}
    if profile.variant.open_face:
        rules = open_face_contract(profile.variant)
        return {
            "top_pair": _by_rank(rules.top_pair[0], 2),
            "top_trips": _by_rank(rules.top_trips[0], 3),
            "middle": _by_category(rules.middle[0]),
            "bottom": _by_category(rules.bottom[0]),
        }
    table = chinese.contract_rules().royalties[0]
    return {row: _by_category(table[r]) for r, row in enumerate(ROWS)}


def natural_table(profile: Profile) -> dict[str, int]:
    given = profile.values.get("naturals")
    if given is not None:
        return dict(given)
    points = chinese.NATURAL_POINTS[1:]
    return {name: int(p) for name, p in zip(NATURALS, points, strict=True) if p >= 0}


def _by_rank(points: Ints, size: int) -> dict[str, int]:
    return {RANKS[r] * size: int(p) for r, p in enumerate(points) if p}


def _by_category(points: Ints) -> dict[str, int]:
    out = {c.name: int(points[c]) for c in Category if points[c]}
    royal = int(points[-1])
    if royal != out.get("straight_flush", 0):
        out["royal_flush"] = royal
    return out


def read_surrender_points(points: Ints) -> int | None:
    """The surrender points of a table: what a surrendered player paid a playing one
    (`points`, the surrendered side's), when most such pairs agree."""
    if not len(points):
        return None
    ((value, n),) = Counter((-points).tolist()).most_common(1)
    return int(value) if agreed(n, len(points)) and value >= 0 else None


@dataclass(frozen=True)
class Tops:
    """Open-face players not fouled whose next hand's Fantasyland is recorded: in it now,
    the category of each row (players, 3) and the top's rank (its pair's or trips'),
    earned (recorded), and the cards Fantasyland dealt them in their next hand at the
    table (0: they were not in it there; -1: no next hand)."""

    in_fantasyland: Flags
    category: Ints
    top_rank: Ints
    earned: Flags
    next_cards: Ints


# The contract's Fantasyland (house-rules.md 2.5), by game.
CONTRACT_STAY = ["top:three_of_a_kind", "middle:full_house", "bottom:four_of_a_kind"]


def fantasyland(profile: Profile) -> dict[str, Any]:
    """`profile`'s Fantasyland values, every key given (its own, else the contract's)."""
    given = dict(profile.values.get("fantasyland", {}))
    progressive = profile.variant.streets is not None and profile.variant.streets.progressive
    contract: dict[str, Any] = {
        "entry": "QQ",
        "entry_cards": {"QQ": 14, "KK": 15, "AA": 16, "trips": 17} if progressive else 13,
        "stay": CONTRACT_STAY,
        "stay_cards": 14 if progressive else 13,
    }
    return contract | given


def read_fantasyland(tops: Tops, base: Profile) -> Reading | None:
    """The Fantasyland a table's records give, onto `base`'s: the lowest top pair that
    earned an entry, the rows that kept a player in, and the cards each dealt."""
    if not len(tops.earned):
        return None
    land = fantasyland(base)
    out = dict(land)
    seen: set[str] = set()
    entering = ~tops.in_fantasyland & (tops.category[:, 0] == Category.pair)
    if (entering & tops.earned).any():
        entry, told = _entry(tops.top_rank[entering], tops.earned[entering])
        out["entry"] = RANKS[entry] * 2
        if told:
            seen.add("entry")
    staying = tops.in_fantasyland
    if staying.any():
        stay = _stay(tops.category[staying], tops.earned[staying], land["stay"])
        out["stay"] = stay
        seen |= {f"stay.{row}" for row in _stay_told(tops.category[staying],
                                                      tops.earned[staying], stay)}  # fmt: skip
    cards, shown = _cards(tops, out)
    out |= cards
    seen |= shown
    rows_told = sum(s.startswith("stay.") for s in seen)
    whole = {s.split(".")[0] for s in seen} - ({"stay"} if rows_told < len(ROWS) else set())
    return Reading(out, 4 - len(whole), frozenset(seen))


def _entry(rank: Ints, earned: Flags) -> tuple[int, bool]:
    """The lowest top pair that enters, of the top pairs `rank` that did (`earned`) or
    did not: the rank that the fewest of them contradict (a pair below it that entered,
    one at or above it that did not: a fault either way, outvoted), the highest of
    equals (the lowest pair seen entering), and whether no other is as good (the pair
    below it seen missing)."""
    ranks = np.arange(len(RANKS))[:, None]
    wrong = np.where(earned, rank < ranks, rank >= ranks).sum(axis=1)
    best = np.flatnonzero(wrong == wrong.min())
    return int(best[-1]), len(best) == 1


# The categories a row can make, lowest first: a three-card top makes no more than trips.
ROW_CATEGORIES = (
    (Category.high_card, Category.pair, Category.three_of_a_kind),
    tuple(Category),
    tuple(Category),
)


def _stay(category: Ints, stayed: Flags, base: list[str]) -> list[str]:
    """The stay rule the fewest players in Fantasyland contradict (one who stayed whom
    it lets go, one who left whom it keeps in: a fault either way, outvoted): `base`'s
    when it is one of them, else the one with the lowest category of the top, then of
    the middle, then of the bottom (without faults: of each row, the lowest category
    no player who left reached there)."""
    made, of = np.unique(category, axis=0, return_inverse=True)  # (players alike, once)
    kept_in = np.bincount(of.ravel(), stayed, len(made))
    let_go = np.bincount(of.ravel(), ~stayed, len(made))
    options = [(*row, NEVER_CATEGORY) for row in ROW_CATEGORIES]
    each = [made[:, r][None, :] >= np.array(o)[:, None] for r, o in enumerate(options)]
    staying = each[0][:, None, None] | each[1][None, :, None] | each[2][None, None, :]
    wrong = np.where(staying, let_go, kept_in).sum(axis=-1)  # per rule: a category (or none)
    listed = stay_categories(base)
    if int(((category >= listed).any(axis=1) != stayed).sum()) == wrong.min():
        return base
    best = np.unravel_index(int(wrong.argmin()), wrong.shape)  # (the first: the lowest)
    return [
        f"{row}:{Category(options[r][int(at)]).name}"
        for r, (row, at) in enumerate(zip(ROWS, best, strict=True))
        if options[r][int(at)] != NEVER_CATEGORY
    ]


def stay_categories(rule: list[str]) -> Ints:
    """Per row, the lowest category by which a stay `rule` keeps a player in
    (NEVER_CATEGORY: none)."""
    listed = np.full(len(ROWS), NEVER_CATEGORY)
    for item in rule:
        row, name = item.split(":")
        listed[ROWS.index(row)] = min(listed[ROWS.index(row)], Category[name])
    return listed


def _stay_told(category: Ints, stayed: Flags, rule: list[str]) -> list[str]:
    """The rows whose part of the stay `rule` the records bound from both sides. A row
    the rule lists at a category: a player stayed by that row alone, at that category,
    and a player left with the category below it there (alone: each other row no
    better than some player who left made there, so that it kept nobody in, whatever
    the house's rule says of it). A row it does not list: a player left with the best
    that row can make."""
    listed = {row: Category[name] for row, name in (item.split(":") for item in rule)}
    if stayed.all():
        return []
    most_left = category[~stayed].max(axis=0)
    told = []
    for r, row in enumerate(ROWS):
        made = ROW_CATEGORIES[r]
        left = category[~stayed, r]
        if row not in listed:
            if (left >= made[-1]).any():
                told.append(row)
            continue
        at = listed[row]
        others = np.ones(len(category), dtype=bool)
        for other in range(len(ROWS)):
            if other != r:
                others &= category[:, other] <= most_left[other]
        alone = stayed & others & (category[:, r] == at)
        below = [c for c in made if c < at]
        if alone.any() and (not below or (left == below[-1]).any()):
            told.append(row)
    return told


def _cards(tops: Tops, land: dict[str, Any]) -> tuple[dict[str, Any], set[str]]:
    """The cards an entry and a stay deal, from the next hands of those who earned one;
    and the parts seen (`stay_cards`, `entry_cards.KK`, or `entry_cards` where one count
    is dealt for every entry)."""
    dealt = tops.earned & (tops.next_cards > 0)  # 0: not in Fantasyland, a fault
    out: dict[str, Any] = {}
    seen: set[str] = set()
    stay = dealt & tops.in_fantasyland
    if stay.any():
        ((value, n),) = Counter(tops.next_cards[stay].tolist()).most_common(1)
        if agreed(n, int(stay.sum())):
            out["stay_cards"] = int(value)
            seen.add("stay_cards")
    # Only a top pair or trips earns an entry: any other top recorded as earning one is a
    # fault, and what its next hand dealt says nothing of the entry's cards.
    made = np.isin(tops.category[:, 0], [Category.pair, Category.three_of_a_kind])
    entry = dealt & ~tops.in_fantasyland & made
    if entry.any():
        entry_rank = RANKS.index(land["entry"][0])
        table = _entry_table(land["entry_cards"], entry_rank)
        trips = tops.category[:, 0] == Category.three_of_a_kind
        keys = np.where(trips, -1, tops.top_rank)
        for key in np.unique(keys[entry]):
            votes = Counter(tops.next_cards[entry & (keys == key)].tolist())
            ((value, n),) = votes.most_common(1)
            name = "trips" if key < 0 else RANKS[int(key)] * 2
            if name in table and agreed(n, sum(votes.values())):
                table[name] = int(value)
                seen.add(f"entry_cards.{name}")
        values = set(table.values())
        out["entry_cards"] = next(iter(values)) if len(values) == 1 else table
        ranks = {f"entry_cards.{k}" for k in table}
        if len(values) == 1 and ranks <= seen:  # one count for every entry, each seen
            seen = (seen - ranks) | {"entry_cards"}
    return out, seen


def _entry_table(cards: int | dict[str, int], entry: int) -> dict[str, int]:
    """Entry cards as a table with a key for every pair from `entry` to AA and trips."""
    keys = [r * 2 for r in RANKS[entry:]] + ["trips"]
    if isinstance(cards, int):
        return dict.fromkeys(keys, cards)
    lowest = min(cards.values())
    return {k: cards.get(k, lowest) for k in keys}


def entry_table(profile: Profile) -> dict[str, int]:
    """The cards an entry deals in `profile`, by each top that earns one."""
    land = fantasyland(profile)
    return _entry_table(land["entry_cards"], RANKS.index(land["entry"][0]))


def entry_cards_by_top(profile: Profile) -> Ints:
    """The cards an entry deals, by the top that earned it: 13 pair ranks, then trips
    (-1 for a pair below the entry)."""
    land = fantasyland(profile)
    entry = RANKS.index(land["entry"][0])
    table = _entry_table(land["entry_cards"], entry)
    out = np.full(14, -1, np.int64)
    for name, cards in table.items():
        out[13 if name == "trips" else RANKS.index(name[0])] = cards
    return out


def fantasyland_digest(profile: Profile) -> str:
    """What a profile's Fantasyland is, whatever else it sets."""
    return json.dumps([profile.game, fantasyland(profile)], sort_keys=True)
