"""Row values -> pair points and Home Runs, for every pair of dealt-in players of every hand.

Players arrive grouped by hand and ordered by seat; pairs are formed per hand size
(2 to 6 players: five shapes), never per hand in a Python loop.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from pipeline.batch import HandBatch
from pipeline.games import (
    HOME_RUN_NONE,
    HOME_RUN_OPPONENT,
    HOME_RUN_SEAT,
    Variant,
    chinese,
    per_game,
)
from pipeline.games import open_face as ofc
from pipeline.games.game import HOME_RUN, ROWS, Decision, row_masks

Ints = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Pairs:
    """Every pair (a, b) of players of a hand, a seated before b, with what a won from b."""

    hand: Ints
    a: Ints  # player index (into the batch's players)
    b: Ints
    points: Ints  # what a won from b (negative when a lost)
    home_run: Ints  # HOME_RUN_NONE, HOME_RUN_SEAT (a scored it) or HOME_RUN_OPPONENT
    decision: Decision | None = None  # how the points were decided (what money needs not)

    def __len__(self) -> int:
        return len(self.hand)


def pairs_of(hand: Ints, seat: Ints) -> tuple[Ints, Ints]:
    """Indices (a, b) of every pair of players in the same hand, a in a lower seat than b.

    `hand` must be sorted (players grouped by hand); within a hand any seat order.
    """
    n = len(hand)
    if n == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    starts = np.flatnonzero(np.r_[True, hand[1:] != hand[:-1]])
    sizes = np.diff(np.r_[starts, n])
    a_parts, b_parts = [], []
    for size in np.unique(sizes):
        local = np.array(list(itertools.combinations(range(size), 2)), dtype=np.int64)
        if local.size == 0:
            continue
        first = starts[sizes == size]
        a_parts.append((first[:, None] + local[None, :, 0]).ravel())
        b_parts.append((first[:, None] + local[None, :, 1]).ravel())
    a = np.concatenate(a_parts) if a_parts else np.empty(0, np.int64)
    b = np.concatenate(b_parts) if b_parts else np.empty(0, np.int64)
    swap = seat[a] > seat[b]
    a, b = np.where(swap, b, a), np.where(swap, a, b)
    order = np.lexsort((seat[b], seat[a], hand[a]))
    return a[order], b[order]


def score_pairs(variant: Variant, values: npt.NDArray[np.int16], hand: Ints, seat: Ints) -> Pairs:
    """Pair points from row values (players, boards, rows): 1/2/3 per row won, +8 for a sweep."""
    a, b = pairs_of(hand, seat)
    compare = np.sign(values[a].astype(np.int32) - values[b].astype(np.int32))  # (pairs, B, R)
    row_points = np.array([row.points for row in variant.rows], dtype=np.int64)
    points = (compare * row_points).sum(axis=(1, 2), dtype=np.int64)
    swept = compare.reshape(len(a), -1)
    a_sweeps = (swept == 1).all(axis=1)
    b_sweeps = (swept == -1).all(axis=1)
    bonus = variant.home_run_bonus * (a_sweeps.astype(np.int64) - b_sweeps)
    points += bonus
    home_run = np.select([a_sweeps, b_sweeps], [HOME_RUN_SEAT, HOME_RUN_OPPONENT], HOME_RUN_NONE)
    won, lost = row_masks(swept)
    zero = np.zeros(len(a), np.int64)
    decided = np.where(bonus != 0, HOME_RUN, ROWS).astype(np.int64)
    decision = Decision(decided, zero, won, lost, bonus, None, None)
    return Pairs(hand[a], a, b, points, home_run.astype(np.int64), decision)


def player_points(pairs: Pairs, n_players: int) -> Ints:
    """Each player's hand points: the sum over their opponents."""
    return sum_by(pairs.a, pairs.points, n_players) - sum_by(pairs.b, pairs.points, n_players)


def sum_by(index: Ints, values: Ints, n: int) -> Ints:
    """Integer sums of `values` grouped by `index` (0..n-1), exact (no float weights)."""
    out = np.zeros(n, dtype=np.int64)
    np.add.at(out, index, values)
    return out


@dataclass(frozen=True)
class ChineseScore:
    """What the Chinese family adds per player: the foul, each row's royalty as recorded
    (0 in a fouled setting), whether a declared natural is made by the cards, and the
    Fantasyland an open-face hand earns for the next (with the cards it deals then)."""

    fouled: npt.NDArray[np.bool_]
    royalty: Ints  # (players, rows)
    natural_made: npt.NDArray[np.bool_]  # true where no natural is declared
    fantasyland_next: npt.NDArray[np.bool_]
    fantasyland_cards: Ints  # 0 where none is earned


def score_chinese(batch: HandBatch, values: npt.NDArray[np.int16]) -> tuple[Pairs, ChineseScore]:
    """Pair points and scoops of the family's hands (closed Chinese and open-face, which
    share their rows), from row values (players, 1, rows)."""
    players, hands = batch.players, batch.hands
    rows = values[:, 0, :]
    foul = chinese.fouled(rows)
    open_face = hands.open_face()[players.hand]
    (royalty,) = _per_family(
        open_face,
        lambda: (ofc.royalties(rows),),
        lambda: (chinese.royalties(rows, batch.game.rows),),
    )
    made, settled, natural = _naturals(batch)
    pairs = _family_pairs(batch, rows, foul, royalty, open_face, (settled, natural))
    progressive = per_game(lambda g: g.streets is not None and g.streets.progressive)
    earned, cards = ofc.fantasyland_next(
        rows, foul, players.fantasyland, progressive[hands.game][players.hand]
    )
    plays = open_face & hands.fantasyland_rule[players.hand]
    score = ChineseScore(
        foul,
        np.where(foul[:, None], 0, royalty),
        made,
        earned & plays,
        np.where(plays, cards, 0),
    )
    return pairs, score


def _family_pairs(
    batch: HandBatch,
    rows: npt.NDArray[np.int16],
    foul: npt.NDArray[np.bool_],
    royalty: Ints,
    open_face: npt.NDArray[np.bool_],
    declarations: tuple[Ints, Ints],
) -> Pairs:
    """Every pair of players of each hand, with the points of its game's rule;
    `declarations`: each player's declaration as settled and natural's points."""
    players, hands = batch.players, batch.hands
    a, b = pairs_of(players.hand, players.seat)
    hand = players.hand[a]

    def opened() -> tuple[Ints, ...]:
        return _columns(ofc.pair_points(a, b, rows, foul, royalty))

    def closed() -> tuple[Ints, ...]:
        settled, natural = declarations
        two_four, surrender = hands.two_four[hand], hands.surrender_points[hand]
        return _columns(
            chinese.pair_points(a, b, rows, foul, royalty, settled, natural, two_four, surrender)
        )

    points, home_run, *decision = _per_family(open_face[a], opened, closed)
    return Pairs(hand, a, b, points, home_run, Decision(*decision))


def _columns(played: chinese.PairPoints) -> tuple[Ints, ...]:
    """A rule's pair points as columns, for `_per_family` to choose between."""
    d = played.decision
    assert d.royalties is not None and d.opponent_royalties is not None
    return (
        played.points,
        played.home_run,
        d.decided,
        d.by,
        d.rows_won,
        d.rows_lost,
        d.bonus,
        d.royalties,
        d.opponent_royalties,
    )


def _per_family(
    open_face: npt.NDArray[np.bool_],
    opened: Callable[[], tuple[Ints, ...]],
    closed: Callable[[], tuple[Ints, ...]],
) -> tuple[Ints, ...]:
    """Columns by the open-face rule where `open_face` (per player or pair), by the closed
    Chinese one elsewhere; each rule is run only when the batch holds its games."""
    if open_face.all():
        return opened()
    if not open_face.any():
        return closed()
    return tuple(
        np.where(open_face.reshape(-1, *[1] * (o.ndim - 1)), o, c)
        for o, c in zip(opened(), closed(), strict=True)
    )


def _naturals(batch: HandBatch) -> tuple[npt.NDArray[np.bool_], Ints, Ints]:
    """Per player: whether a declared natural is made (true where none is declared), the
    declaration as settled (a natural the cards do not make is played, and flagged by the
    checks), and the settled natural's base points."""
    players = batch.players
    declared_natural = players.declared == chinese.NATURAL
    # Naturals are judged on the 13 cards of the players who declare one (few).
    who = np.flatnonzero(declared_natural)
    cards = np.concatenate([players.setting[row.name][who] for row in batch.game.rows], axis=1)
    made = np.ones(len(players), dtype=bool)
    made[who] = chinese.naturals_made(cards)[np.arange(len(who)), players.natural[who]]
    settled = np.where(declared_natural & ~made, chinese.PLAY, players.declared)
    points = np.where(settled == chinese.NATURAL, chinese.NATURAL_POINTS[players.natural], 0)
    return made, settled, points
