"""Lookup tables of the evaluator, built once per process from the hand classes.

Every five-card value splits into a rank part and a flush part:

* the rank part depends only on the multiset of ranks. A multiset is hashed by the
  sum of per-rank keys (unique within each multiset size), so the best rank-only
  value of a row against a board is one lookup in a table indexed by
  (row multiset, board multiset);
* a flush needs three or more board cards of one suit, so at most one suit can
  make a flush against a board and the flush part is one lookup by 13-bit masks of
  the ranks held in that suit.

The best value is the larger of the two parts. Jokers get tables of their own:
the best over every rank (or pair of ranks) a joker may become, with the first
such rank kept as the argument from which `jokers.py` derives `joker_as`.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from pipeline.core.evaluator import memo
from pipeline.core.evaluator.values import NO_VALUE, classify, strength_of

N_RANKS = 13
FULL_MASK = 1 << N_RANKS
# Per-rank keys whose sums are distinct for every multiset of up to five ranks
# (at most four of a rank), found by a greedy search; index 13 is the joker's 0.
RANK_KEY = np.array(
    [0, 1, 5, 22, 94, 312, 992, 2422, 5624, 12522, 19998, 43258, 79415, 0], dtype=np.int32
)
_SUM_RANGE = 5 * int(RANK_KEY[12]) + 1

Values = npt.NDArray[np.int16]
Index = npt.NDArray[np.int32]


@dataclass(frozen=True)
class Multisets:
    """All multisets of `size` ranks (at most four of a rank), lexicographic."""

    size: int
    ranks: npt.NDArray[np.int8]  # (n, size)
    counts: npt.NDArray[np.int8]  # (n, 13)
    index_of_sum: Index  # key sum -> index; n (the sentinel) for no multiset

    @property
    def n(self) -> int:
        return len(self.ranks)


@memo.table
def multisets(size: int) -> Multisets:
    combos = [
        c
        for c in itertools.combinations_with_replacement(range(N_RANKS), size)
        if not c or max(c.count(r) for r in c) <= 4
    ]
    ranks = np.array(combos, dtype=np.int8).reshape(len(combos), size)
    counts = np.zeros((len(ranks), N_RANKS), dtype=np.int8)
    for col in range(size):
        np.add.at(counts, (np.arange(len(ranks)), ranks[:, col]), 1)
    sums = RANK_KEY[ranks].sum(axis=1, dtype=np.int32)
    if len(np.unique(sums)) != len(sums):
        raise AssertionError(f"rank keys collide on multisets of {size}")
    index_of_sum = np.full(_SUM_RANGE, len(ranks), dtype=np.int32)
    index_of_sum[sums] = np.arange(len(ranks), dtype=np.int32)
    return Multisets(size, ranks, counts, index_of_sum)


def _with_sentinel(values: npt.NDArray[np.integer], axis: int = -1) -> Values:
    """Append a NO_VALUE slot along `axis`, for sentinel indexes."""
    shape = list(values.shape)
    shape[axis] = 1
    return np.concatenate([values, np.full(shape, NO_VALUE)], axis=axis).astype(np.int16)


@memo.table
def rank5() -> Values:
    """Rank-only value of every 5-rank multiset (as if no flush), plus the sentinel."""
    strength = strength_of()
    five = multisets(5)
    return _with_sentinel(
        np.array([strength[classify(tuple(int(x) for x in r), suited=False)] for r in five.ranks])
    )


@memo.table
def flush_best() -> Values:
    """Best flush (or straight flush) among any five of the ranks in a 13-bit mask."""
    strength = strength_of()
    best = np.full(FULL_MASK, NO_VALUE, dtype=np.int16)
    for combo in itertools.combinations(range(N_RANKS), 5):
        best[sum(1 << r for r in combo)] = strength[classify(combo, suited=True)]
    masks = np.arange(FULL_MASK)
    popcount = np.bitwise_count(masks)
    for pc in range(6, N_RANKS + 1):
        layer = masks[popcount == pc]
        for r in range(N_RANKS):
            np.maximum.at(best, layer, best[layer & ~(1 << r)])
    return best


@dataclass(frozen=True)
class RankTables:
    """Rank-only values of one row shape against every board multiset.

    `value[j]` is indexed by (real-card multiset index * board_stride + board index)
    for rows holding j jokers; `arg[j]` is the first rank (j=1) or rank pair index
    (j=2, into `multisets(2)`) the jokers become to reach it.
    """

    value: tuple[Values, ...]
    arg: tuple[npt.NDArray[np.int8] | None, ...]


def board_stride() -> int:
    return multisets(5).n + 1


def _board_subset_sums(size: int) -> Index:
    """Key sums of every `size`-subset of each board multiset, shape (boards, subsets)."""
    board = multisets(5).ranks
    subsets = list(itertools.combinations(range(5), size))
    keys = RANK_KEY[board]
    return np.stack([keys[:, list(s)].sum(axis=1) for s in subsets], axis=1).astype(np.int32)


def _best_with(extra_sums: Index, subset_sums: Index) -> Values:
    """Best rank-only value of `extra` ranks plus any subset: shape (extras, boards)."""
    r5 = rank5()
    lookup = multisets(5).index_of_sum
    out = np.full((len(extra_sums), subset_sums.shape[0]), NO_VALUE, dtype=np.int16)
    for col in range(subset_sums.shape[1]):
        np.maximum(out, r5[lookup[extra_sums[:, None] + subset_sums[None, :, col]]], out=out)
    return out


@memo.table
def board_parts() -> tuple[Values, Values, Values]:
    """Per board multiset: the board alone, one row rank + 4 board, two row ranks + 3 board."""
    alone = rank5()[:-1]
    one = _best_with(RANK_KEY[:N_RANKS], _board_subset_sums(4))
    two = _best_with(
        RANK_KEY[multisets(2).ranks].sum(axis=1).astype(np.int32), _board_subset_sums(3)
    )
    return alone, one, two


def _add_rank_index(base: Multisets, grown: Multisets, extra: npt.NDArray[np.int8]) -> Index:
    """Index in `grown` of each multiset of `base` plus the ranks `extra` (candidates, k)."""
    sums = RANK_KEY[base.ranks].sum(axis=1)[:, None] + RANK_KEY[extra].sum(axis=1)[None, :]
    return grown.index_of_sum[np.minimum(sums, _SUM_RANGE - 1)]


def _joker_table(base_value: Values, size: int, jokers: int) -> tuple[Values, npt.NDArray[np.int8]]:
    """Best over the ranks `jokers` jokers may become, for rows of `size` cards.

    A joker may become any rank of which a card is left once the row's own cards and
    the board are taken out (two jokers of one rank need two such cards).
    """
    real = multisets(size - jokers)
    full = multisets(size)
    board = multisets(5)
    candidates = np.arange(N_RANKS, dtype=np.int8)[:, None] if jokers == 1 else multisets(2).ranks
    target = _add_rank_index(real, full, candidates)  # (real, candidates)
    stride = board_stride()
    best = np.full((real.n, stride), NO_VALUE, dtype=np.int16)
    arg = np.zeros((real.n, stride), dtype=np.int8)
    board_counts = np.vstack([board.counts, np.full((1, N_RANKS), 9, dtype=np.int8)])
    for c, ranks in enumerate(candidates):
        feasible = np.ones((real.n, stride), dtype=bool)
        for r in set(ranks.tolist()):
            need = int(np.count_nonzero(ranks == r))
            feasible &= real.counts[:, r, None] + board_counts[None, :, r] + need <= 4
        value = np.where(feasible, base_value[target[:, c]], NO_VALUE)
        better = value > best
        best[better] = value[better]
        arg[better] = c
    return best, arg


def _stack_sentinel_row(table: Values) -> Values:
    """Add a sentinel row (the row index of a multiset that cannot occur)."""
    return np.vstack([table, np.full((1, table.shape[1]), NO_VALUE, dtype=np.int16)])


@memo.table
def holdem_rank_tables(size: int) -> RankTables:
    """Rows playing any number of their cards (top: 1 card, middle: 2)."""
    alone, one, two = board_parts()
    if size == 1:
        base = np.maximum(alone[None, :], one)
    elif size == 2:
        pairs = multisets(2).ranks
        base = np.maximum(
            np.maximum(alone[None, :], two), np.maximum(one[pairs[:, 0]], one[pairs[:, 1]])
        )
    else:
        raise ValueError(f"A row playing any of its cards holds 1 or 2 cards, not {size}.")
    return _rank_tables(_stack_sentinel_row(_with_sentinel(base)), size)


@memo.table
def omaha_rank_tables() -> RankTables:
    """Four-card rows playing exactly two of their cards with exactly three of the board."""
    _, _, two = board_parts()
    pair_index = {tuple(int(x) for x in p): i for i, p in enumerate(multisets(2).ranks)}
    four = multisets(4).ranks
    base = np.full((len(four), two.shape[1]), NO_VALUE, dtype=np.int16)
    for a, b in itertools.combinations(range(4), 2):
        idx = np.array([pair_index[(int(x), int(y))] for x, y in four[:, [a, b]]])
        np.maximum(base, two[idx], out=base)
    return _rank_tables(_stack_sentinel_row(_with_sentinel(base)), 4)


def _rank_tables(base: Values, size: int) -> RankTables:
    values: list[Values] = [base.ravel()]
    args: list[npt.NDArray[np.int8] | None] = [None]
    for jokers in range(1, min(size, 2) + 1):
        value, arg = _joker_table(base, size, jokers)
        values.append(_stack_sentinel_row(value).ravel())
        args.append(np.vstack([arg, np.zeros((1, arg.shape[1]), np.int8)]).ravel())
    return RankTables(tuple(values), tuple(args))


@memo.table
def holdem_flush_tables() -> tuple[Values, Values, Values]:
    """Best flush of a suit mask with 0, 1 or 2 jokers added as new ranks of that suit."""
    best = flush_best()
    masks = np.arange(FULL_MASK)
    bits = [1 << r for r in range(N_RANKS)]
    one = best.copy()
    for b in bits:
        np.maximum(one, best[masks | b], out=one)
    two = one.copy()
    for b in bits:
        np.maximum(two, one[masks | b], out=two)
    return best, one, two


@dataclass(frozen=True)
class OmahaFlushTables:
    """Omaha flushes: two hole cards of the suit with three of the board's.

    Indexed by (hole mask index * board_stride + board mask index); `two_jokers`
    is the best the two jokers make alone, by board mask index.
    """

    hole_index: Index  # 13-bit mask -> index (masks of at most 4 ranks)
    board_index: Index  # 13-bit mask -> index (masks of 3 to 5 ranks), else the sentinel
    board_stride: int
    plain: Values
    one_joker: Values
    two_jokers: Values


def _masks_with(popcounts: range) -> npt.NDArray[np.int64]:
    masks = np.arange(FULL_MASK, dtype=np.int64)
    return masks[np.isin(np.bitwise_count(masks), list(popcounts))]


def _index_of(masks: npt.NDArray[np.int64]) -> Index:
    index = np.full(FULL_MASK, len(masks), dtype=np.int32)
    index[masks] = np.arange(len(masks), dtype=np.int32)
    return index


def _subset_masks(masks: npt.NDArray[np.int64], size: int) -> npt.NDArray[np.int64]:
    """Every `size`-bit subset of each mask, padded with 0: shape (masks, C(max bits, size))."""
    width = max(1, len(list(itertools.combinations(range(5), size))))
    out = np.zeros((len(masks), width), dtype=np.int64)
    for i, m in enumerate(masks.tolist()):
        ranks = [r for r in range(N_RANKS) if m >> r & 1]
        subs = [sum(1 << r for r in c) for c in itertools.combinations(ranks, size)]
        out[i, : len(subs)] = subs
    return out


@memo.table
def omaha_flush_tables() -> OmahaFlushTables:
    best = flush_best()
    board_masks = _masks_with(range(3, 6))
    hole_masks = _masks_with(range(5))
    pair_masks = _masks_with(range(2, 3))
    triples = _subset_masks(board_masks, 3)  # (boards, 10)
    # pair x board: the best of the pair with any three of the board's ranks; a pair
    # sharing a rank with the board cannot be (those cards are on the board).
    pair_board = np.full((len(pair_masks) + 1, len(board_masks) + 1), NO_VALUE, dtype=np.int16)
    for col in range(triples.shape[1]):
        union = pair_masks[:, None] | triples[None, :, col]
        disjoint = (pair_masks[:, None] & board_masks[None, :]) == 0
        value = np.where(disjoint & (triples[None, :, col] != 0), best[union], NO_VALUE)
        np.maximum(pair_board[:-1, :-1], value, out=pair_board[:-1, :-1])
    pair_index = _index_of(pair_masks)
    hole_pairs = pair_index[_subset_masks(hole_masks, 2)]  # (holes, 6), sentinel where padded
    hole_pairs[_subset_masks(hole_masks, 2) == 0] = len(pair_masks)
    plain = pair_board[hole_pairs].max(axis=1)
    # One joker beside a real hole card h: the best over ranks r of the pair {h, r}.
    single = np.full((N_RANKS, pair_board.shape[1]), NO_VALUE, dtype=np.int16)
    for h in range(N_RANKS):
        for r in range(N_RANKS):
            if r != h:
                np.maximum(single[h], pair_board[pair_index[(1 << h) | (1 << r)]], out=single[h])
    one_joker = plain.copy()
    for h in range(N_RANKS):
        holds = (hole_masks >> h & 1).astype(bool)
        one_joker[holds] = np.maximum(one_joker[holds], single[h][None, :])
    two_jokers = pair_board.max(axis=0)
    return OmahaFlushTables(
        hole_index=_index_of(hole_masks),
        board_index=_index_of(board_masks),
        board_stride=len(board_masks) + 1,
        plain=np.vstack([plain, np.full((1, plain.shape[1]), NO_VALUE, np.int16)]).ravel(),
        one_joker=np.vstack([one_joker, np.full((1, plain.shape[1]), NO_VALUE, np.int16)]).ravel(),
        two_jokers=two_jokers,
    )
