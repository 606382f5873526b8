"""The fairness tests of whole deals, read hand by hand in each table's order: does the deal
remember the last hand (`between_tests`), does a deal ever repeat (`repeat_tests`), does a
place in the deal favour a card (`position_tests`)?

DuckDB gives each hand's place in its table's order, its boards' cards in order
(`sql/fairness/sequence.sql`) and each player's standard cards as a 52-bit mask
(`masks.sql`); numpy compares the masks of whole arrays of hands at once, and the
expectations are `core.between_hands`'.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
from scipy import stats

from pipeline.core import between_hands, fairness
from pipeline.core.cards import CANONICAL, N_STANDARD
from pipeline.core.fairness import Deals, Verdict
from pipeline.outputs.fairness_rows import CATEGORIES, FairnessTest, Kind

Masks = npt.NDArray[np.uint64]
Ints = npt.NDArray[np.int64]
BOARD_CARDS = 10
BOARD_PLACES = tuple(f"board {b} card {i}" for b in (1, 2) for i in range(1, 6))
SHOWN_REPEATS = 5  # repeats the detail names


@dataclass(frozen=True)
class Sequence:
    """The hands in scope, in each table's order: their table's number, id and game, their
    boards' cards in order (-1 without boards), and every group's standard cards as masks:
    column 0 board 1, column 1 board 2, column 1 + s seat s (0 where nobody sat)."""

    table: npt.NDArray[np.integer]
    hand_id: pa.Array
    variant: pa.Array
    boards: npt.NDArray[np.int8]  # (hands, 10)
    masks: Masks  # (hands, 2 + seats)

    @classmethod
    def read(cls, hands: pa.Table, masks: pa.Table) -> Sequence:
        """From sequence.sql's and masks.sql's rows."""
        n = hands.num_rows
        boards = np.full((n, BOARD_CARDS), -1, dtype=np.int8)
        seat = masks["seat"].to_numpy()
        width = 2 + (int(seat.max()) if len(seat) else 0)
        grid = np.zeros((n, width), dtype=np.uint64)
        grid[masks["nth"].to_numpy(), 1 + seat.astype(np.intp)] = (
            masks["mask"].to_numpy().view(np.uint64)
        )
        for i in range(BOARD_CARDS):  # column by column: few large temporaries
            card = pc.fill_null(hands[f"b{i}"], -1).to_numpy()
            boards[:, i] = card
            bit = np.left_shift(np.uint64(1), np.maximum(card, 0).astype(np.uint64))
            grid[:, i // 5] |= np.where(card >= 0, bit, np.uint64(0))
        return cls(
            hands["tbl"].to_numpy(),
            hands["hand_id"].combine_chunks(),
            hands["variant"].combine_chunks(),
            boards,
            grid,
        )

    def of_game(self, name: str) -> npt.NDArray[np.bool_]:
        """Which hands are of the game."""
        encoded = self.variant.dictionary_encode()
        names = encoded.dictionary.to_pylist()
        if name not in names:
            return np.zeros(len(self.variant), dtype=bool)
        return np.asarray(encoded.indices.to_numpy(zero_copy_only=False) == names.index(name))


def distinct_rows(counts: npt.NDArray[np.uint8]) -> tuple[npt.NDArray[np.float64], Ints]:
    """The distinct rows of small counts (each below 64, at most ten columns) and how many
    times each comes: one integer key a row, far faster than comparing rows."""
    _, first, times = np.unique(_shape_key(counts), return_index=True, return_counts=True)
    return counts[first].astype(np.float64), times


BLOCK = 1 << 15  # pairs of hands compared at once: few large temporaries
_PAIRS = np.array([n * (n - 1) // 2 for n in range(65)], dtype=np.int32)  # C(n, 2)


def between_tests(seq: Sequence, scope: str) -> Iterator[FairnessTest]:
    """Consecutive hands of a table, against independent fair shuffles: the cards the same
    seat (or board) holds in both, and the pairs of cards one player holds together in
    both (`core.between_hands`)."""
    first = np.flatnonzero(seq.table[:-1] == seq.table[1:])
    pairs = len(first)
    same, together = 0, 0
    for start in range(0, pairs, BLOCK):
        block = first[start : start + BLOCK]
        before, after = seq.masks[block], seq.masks[block + 1]
        same += int(np.bitwise_count(before & after).sum(dtype=np.int64))
        shared = np.bitwise_count(before[:, 2:, None] & after[:, None, 2:])
        together += int(_PAIRS[shared].sum(dtype=np.int64))
    r, c, times = _size_pairs(seq.masks, first)
    mean, variance = between_hands.same_group_moments(r, c)
    yield _normal_test(
        "between hands: same seat",
        scope,
        pairs,
        float(same),
        mean * times,
        variance * times,
        "cards held by the same seat or board in consecutive hands of a table",
    )
    mean, variance = between_hands.together_moments(r[:, 2:], c[:, 2:])
    yield _normal_test(
        "between hands: pairs held together",
        scope,
        pairs,
        float(together),
        mean * times,
        variance * times,
        "pairs of cards one player holds together in consecutive hands of a table",
    )


def _size_pairs(
    masks: Masks, first: Ints
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], Ints]:
    """The distinct pairs of the groups' sizes in hands `first` and the next, and how many
    pairs of hands have each: the moments depend on nothing else, and a table deals few
    shapes. Each hand's shape is one integer, so no pair of whole rows is gathered."""
    _, shape = np.unique(_shape_key(np.bitwise_count(masks)), return_inverse=True)
    shapes = int(shape.max()) + 1 if len(shape) else 1
    _, at, times = np.unique(
        shape[first] * shapes + shape[first + 1], return_index=True, return_counts=True
    )
    r = np.bitwise_count(masks[first[at]]).astype(np.float64)
    c = np.bitwise_count(masks[first[at] + 1]).astype(np.float64)
    return r, c, times


def _shape_key(counts: npt.NDArray[np.uint8]) -> Ints:
    """One integer per row of small counts (each below 64, at most ten columns)."""
    key = np.zeros(len(counts), dtype=np.int64)
    for j in range(counts.shape[1]):
        key |= counts[:, j].astype(np.int64) << (6 * j)
    return key


def _normal_test(
    name: str,
    scope: str,
    pairs: int,
    observed: float,
    mean: npt.NDArray[np.float64],
    variance: npt.NDArray[np.float64],
    what: str,
) -> FairnessTest:
    """Observed against its exact mean and variance summed over pairs of hands: z squared,
    chi-square with 1 degree of freedom (two-sided)."""
    expected, spread = float(mean.sum()), float(variance.sum())
    if pairs < fairness.MIN_PAIRS or spread <= 0:
        verdict = Verdict(pairs, insufficient="insufficient data")
        detail = f"{pairs:,} pairs of consecutive hands; {fairness.MIN_PAIRS} needed"
    else:
        z = (observed - expected) / np.sqrt(spread)
        verdict = Verdict(pairs, float(z**2), 1, float(stats.chi2.sf(z**2, 1)))
        detail = f"{observed:,.0f} {what}, {expected:,.1f} expected ({z:+.1f} sd)"
    return FairnessTest(name, scope, pairs, None, verdict, detail, Kind.between)


def repeat_tests(seq: Sequence, scope: str) -> Iterator[FairnessTest]:
    """A deal dealt twice anywhere in scope: the same standard cards to the same seats and
    boards; and, where there are boards, the same two boards. The p-value is the exact
    chance of any repeat among that many fair deals (`between_hands.repeat_chance`)."""
    yield _repeats("repeated deal", scope, seq, seq.masks, "the same cards to the same seats")
    with_boards = seq.boards[:, 0] >= 0
    if with_boards.any():
        boards = np.where(with_boards[:, None], seq.masks[:, :2], 0)[with_boards]
        ids = seq.hand_id.filter(pa.array(with_boards))
        yield _repeats("repeated boards", scope, seq, boards, "the same two boards", ids)


def _repeats(
    name: str, scope: str, seq: Sequence, masks: Masks, what: str, ids: pa.Array | None = None
) -> FairnessTest:
    ids = seq.hand_id if ids is None else ids
    shapes, hands = distinct_rows(np.bitwise_count(masks))
    log_m = between_hands.log_deals(shapes)
    chance = between_hands.repeat_chance(hands, log_m)
    expected, spread = between_hands.repeat_moments(hands, log_m)
    key = np.zeros(len(masks), dtype=np.uint64)
    drawn = np.random.default_rng(0).integers(1, 2**63, masks.shape[1], dtype=np.uint64)
    mix: Masks = np.asarray(drawn | np.uint64(1), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(masks.shape[1]):
            key = key * mix[j : j + 1] + masks[:, j]
    order = np.argsort(key, kind="stable")
    dup = np.flatnonzero(key[order][1:] == key[order][:-1])
    same = (masks[order[dup]] == masks[order[dup + 1]]).all(axis=1)
    found = sorted((int(order[i]), int(order[i + 1])) for i in dup[same])
    repeats = len(found)
    p = between_hands.repeats_p_value(repeats, chance, expected, spread)
    verdict = Verdict(len(masks), float(repeats), None, p)
    names = ", ".join(f"{ids[a].as_py()} and {ids[b].as_py()}" for a, b in found[:SHOWN_REPEATS])
    detail = (
        f"{repeats:,} dealt {what} as another: {names}"
        + (" ..." if repeats > SHOWN_REPEATS else "")
        + f"; among {len(masks):,} fair deals {expected:.3g} expected, any with chance "
        + f"{chance:.3g}"
        if repeats
        else f"none among {len(masks):,} deals; {expected:.3g} expected if fair"
    )
    return FairnessTest(name, scope, len(masks), None, verdict, detail, Kind.repeats)


def position_tests(
    seq: Sequence, game: str, scope: str, focused: Callable[..., Iterator[FairnessTest]]
) -> Iterator[FairnessTest]:
    """Where the order is recorded: each board place (board 1's five cards in order, then
    board 2's) by card and by rank, every hand's place dealt one standard card; and the
    last seat dealt (the highest seat in the hand) by card, against the other seats and
    the boards. Each an omnibus test and its most extreme cell (`focused`)."""
    mine = seq.of_game(game)
    boards = seq.boards[mine]
    boards = boards[boards[:, 0] >= 0]
    hands = len(boards)
    if hands:
        # A hand deals as many places as it has board cards (one board: five).
        dealt = boards >= 0
        places = np.zeros((BOARD_CARDS + 1, N_STANDARD))
        for i in range(BOARD_CARDS):
            places[i] = np.bincount(boards[dealt[:, i], i], minlength=N_STANDARD)
        places[-1] = hands - places[:-1].sum(axis=0)
        shapes, times = distinct_rows(dealt.astype(np.uint8))
        cut = np.concatenate([shapes, np.zeros((len(shapes), 1))], axis=1)
        deals = Deals.from_patterns(N_STANDARD, [*BOARD_PLACES, "rest"], cut, times)
        for category, member, labels in CATEGORIES[1:]:  # rank, card
            name = f"board place by {category}"
            yield from _omnibus_and_cell(
                name, scope, hands, deals, places @ member, member, labels, focused
            )
    masks = seq.masks[mine]
    seats = masks[:, 2:]
    if not len(masks) or not seats.shape[1]:
        return
    occupied = seats != 0
    last = seats.shape[1] - 1 - np.argmax(occupied[:, ::-1], axis=1)
    rows = np.arange(len(masks))
    last_mask = seats[rows, last]
    others = np.bitwise_or.reduce(
        np.where(np.arange(seats.shape[1]) == last[:, None], 0, seats), axis=1
    )
    board = masks[:, 0] | masks[:, 1]
    groups = np.stack([last_mask, others, board], axis=1).astype(np.uint64)
    labels_of = ["last seat dealt", "other seats", "boards", "rest"]
    if not board.any():  # a game without boards
        groups, labels_of = groups[:, :2], [*labels_of[:2], labels_of[-1]]
    observed = np.stack([_card_counts(groups[:, g]) for g in range(groups.shape[1])])
    observed = np.vstack([observed, len(masks) - observed.sum(axis=0)])
    shapes, hands_of = distinct_rows(np.bitwise_count(groups))
    cut = np.concatenate([shapes, np.zeros((len(shapes), 1))], axis=1)
    deals = Deals.from_patterns(N_STANDARD, labels_of, cut, hands_of)
    member = np.eye(N_STANDARD)
    yield from _omnibus_and_cell(
        "last seat dealt by card", scope, len(masks), deals, observed, member,
        CANONICAL[:N_STANDARD], focused,
    )  # fmt: skip


SLOT_BITS = 5  # place_cuts.sql: each player's cards dealt, 5 bits a slot


def dealt_place_tests(
    places: pa.Table,
    cuts: pa.Table,
    game: str,
    scope: str,
    focused: Callable[..., Iterator[FairnessTest]],
) -> Iterator[FairnessTest]:
    """Where an open-face deal's order is recorded: the k-th card dealt (street by street)
    to the n-th player of the hand in seat order, by card, every (player, place) a group
    of one card a hand, as the board places are (`places.sql`, `place_cuts.sql`). A
    shuffle that ties cards to the places of the deck, as the off-by-one does, shows here
    when the game has no boards."""
    mine = places.filter(pc.equal(places["variant"], game))
    shapes = cuts.filter(pc.equal(cuts["variant"], game))
    if mine.num_rows == 0:
        return
    seat, place, card, dealt = (
        mine[c].to_numpy().astype(np.int64) for c in ("slot", "place", "card", "dealt")
    )
    groups = sorted(set(zip(seat.tolist(), place.tolist(), strict=True)))
    at = {g: i for i, g in enumerate(groups)}
    observed = np.zeros((len(groups) + 1, N_STANDARD))
    rows = np.array([at[g] for g in zip(seat.tolist(), place.tolist(), strict=True)])
    np.add.at(observed, (rows, card), dealt)
    shape, times = (shapes[c].to_numpy().astype(np.int64) for c in ("shape", "hands"))
    counts = (shape[:, None] >> (SLOT_BITS * np.array([s for s, _ in groups]))) & 31
    cut = (np.array([p for _, p in groups]) < counts).astype(np.float64)
    cut = np.concatenate([cut, np.zeros((len(cut), 1))], axis=1)
    hands = int(times.sum())
    observed[-1] = hands - observed[:-1].sum(axis=0)
    labels = [f"player {s} card {p + 1}" for s, p in groups]
    deals = Deals.from_patterns(N_STANDARD, [*labels, "rest"], cut, times)
    member, names = CATEGORIES[2][1:]
    yield from _omnibus_and_cell(
        "dealt place by card", scope, hands, deals, observed, member, names, focused
    )


def _card_counts(masks: Masks) -> npt.NDArray[np.float64]:
    """How many of the masks hold each standard card."""
    bits = np.unpackbits(
        masks.astype("<u8").view(np.uint8).reshape(-1, 8), axis=1, bitorder="little"
    )
    return bits[:, :N_STANDARD].sum(axis=0, dtype=np.int64).astype(np.float64)


def _omnibus_and_cell(
    name: str,
    scope: str,
    hands: int,
    deals: Deals,
    observed: npt.NDArray[np.float64],
    member: npt.NDArray[np.float64],
    labels: tuple[str, ...],
    focused: Callable[..., Iterator[FairnessTest]],
) -> Iterator[FairnessTest]:
    in_deck = member.sum(axis=0)
    verdict = fairness.partition_test(deals, observed, in_deck)
    cards = int(observed[:-1].sum())
    if verdict.insufficient:
        fewest = fairness.expected(deals, in_deck)[:-1].min()
        detail = f"{fewest:,.1f} expected in the smallest cell; {fairness.MIN_EXPECTED:g} needed"
    else:
        few = len(deals.groups) < 6
        groups = ", ".join(deals.groups[:-1]) if few else f"{len(deals.groups) - 1} places"
        kind = name.rsplit(" ", 1)[-1]
        detail = f"{groups} by {len(labels)} {kind}s (its most extreme cell: its own row)"
    yield FairnessTest(name, scope, hands, cards, verdict, detail, Kind.positions)
    yield from focused(name, scope, hands, deals, observed, in_deck, labels, kind=Kind.positions)
