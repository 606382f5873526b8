"""The family's scoring of a batch: fouls, royalties, naturals and Fantasyland per player,
and each pair's points by its game's rule (closed Chinese or open-face). Taiwanese
pairs are scored by `games.taiwanese.pair_points`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields

import numpy as np
import numpy.typing as npt

from pipeline.core.batch import HandBatch
from pipeline.core.games import chinese
from pipeline.core.games import open_face as ofc
from pipeline.core.games.game import Decision
from pipeline.core.games.pairs import Ints, Pairs, pairs_of


@dataclass(frozen=True)
class ChineseScore:
    """What the Chinese family adds per player: the foul, each row's royalty as recorded
    (0 in a fouled setting), whether a declared natural is made by the cards, and the
    Fantasyland an open-face hand earns for the next (with the cards it deals then)."""

    fouled: npt.NDArray[np.bool_]
    royalty: Ints  # (players, rows)
    natural_made: npt.NDArray[np.bool_]  # true where no natural is declared
    natural_unpaid: npt.NDArray[np.bool_]  # a natural made that the hand's profile does not pay
    surrender_refused: npt.NDArray[np.bool_]  # a surrender where the profile allows none
    fantasyland_next: npt.NDArray[np.bool_]
    fantasyland_cards: Ints  # 0 where none is earned


def score_chinese(batch: HandBatch, values: npt.NDArray[np.int16]) -> tuple[Pairs, ChineseScore]:
    """Pair points and scoops of the family's hands (closed Chinese and open-face, which
    share their rows), from row values (players, 1, rows)."""
    players, hands = batch.players, batch.hands
    rows = values[:, 0, :]
    book, profile = batch.rules, hands.profile[players.hand]
    low = book.chinese.middle_low[profile]
    keys = chinese.strength(rows, book.chinese.wheel_second[profile], low)
    foul = chinese.fouled(rows, keys, low)
    open_face = hands.open_face()[players.hand]
    (royalty,) = _per_family(
        open_face,
        lambda: (ofc.royalties(rows, book.open_face, profile),),
        lambda: (chinese.royalties(rows, book.chinese, profile),),
    )
    royalty[:, 1] = np.where(low, 0, royalty[:, 1])  # a low middle earns none
    declared = _declarations(batch, profile)
    pairs = _family_pairs(batch, rows, keys, foul, royalty, open_face, declared[3:])
    plays = open_face & hands.fantasyland_rule[players.hand]
    earned, cards = np.zeros(len(players), dtype=bool), np.zeros(len(players), dtype=np.int64)
    if plays.any():  # (closed Chinese plays none)
        land = book.open_face
        earned, cards = ofc.fantasyland_next(rows, foul, players.fantasyland, land, profile)
    score = ChineseScore(
        foul,
        np.where(foul[:, None], 0, royalty),
        declared[0],
        declared[1],
        declared[2],
        earned & plays,
        np.where(plays, cards, 0),
    )
    return pairs, score


def low_middles(batch: HandBatch, values: npt.NDArray[np.int16]) -> npt.NDArray[np.int16]:
    """Row values (players, 1, rows) with the middles of hands played Low in the Middle
    valued so (house-rules.md 2.3): what the rows record, compare and store."""
    low = batch.rules.chinese.middle_low[batch.hands.profile[batch.players.hand]]
    if not low.any():
        return values
    return chinese.as_low_middle(values[:, 0, :], low)[:, None, :]


def _family_pairs(
    batch: HandBatch,
    rows: npt.NDArray[np.int16],
    keys: Ints,
    foul: npt.NDArray[np.bool_],
    royalty: Ints,
    open_face: npt.NDArray[np.bool_],
    declarations: tuple[Ints, ...],
) -> Pairs:
    """Every pair of players of each hand, with the points of its game's rule;
    `declarations`: each player's declaration as settled and natural's points."""
    players, hands = batch.players, batch.hands
    a, b = pairs_of(players.hand, players.seat)
    hand = players.hand[a]

    def opened() -> tuple[Ints, ...]:
        rules = batch.rules.open_face
        return _columns(ofc.pair_points(a, b, rows, foul, royalty, rules, hands.profile[hand]))

    def closed() -> tuple[Ints, ...]:
        settled, natural = declarations
        two_four, surrender = hands.two_four[hand], hands.surrender_points[hand]
        rules, profile = batch.rules.chinese, hands.profile[hand]
        return _columns(
            chinese.pair_points(
                a,
                b,
                keys,
                foul,
                royalty,
                settled,
                natural,
                two_four,
                surrender,
                rules.naturals_sum[profile],
                rules.home_run[profile],
            )
        )

    points, home_run, *decision = _per_family(open_face[a], opened, closed)
    return Pairs(hand, a, b, points, home_run, Decision(*decision))


def _columns(played: chinese.PairPoints) -> tuple[Ints, ...]:
    """A rule's pair points as columns, for `_per_family` to choose between."""
    decision = [getattr(played.decision, f.name) for f in fields(Decision)]
    return (played.points, played.home_run, *decision)


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


def _declarations(
    batch: HandBatch, profile: Ints
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_], npt.NDArray[np.bool_], Ints, Ints]:
    """Per player: whether a declared natural is made (true where none is declared),
    whether a made natural goes unpaid by the hand's profile, whether a surrender is one
    the profile does not allow, the declaration as settled (a natural the cards do not
    make, or the profile does not pay, and a surrender it does not allow, are played:
    the checks flag them), and the settled natural's base points (`profile` per player)."""
    players, rules = batch.players, batch.rules.chinese
    declared_natural = players.declared == chinese.NATURAL
    # Naturals are judged on the 13 cards of the players who declare one (few).
    who = np.flatnonzero(declared_natural)
    cards = np.concatenate([players.setting[row.name][who] for row in batch.game.rows], axis=1)
    made = np.ones(len(players), dtype=bool)
    made[who] = chinese.naturals_made(cards)[np.arange(len(who)), players.natural[who]]
    points = rules.natural_points[profile, players.natural]
    unpaid = declared_natural & made & (points < 0)
    refused = (players.declared == chinese.SURRENDER) & ~rules.surrender[profile]
    played = (declared_natural & (~made | unpaid)) | refused
    settled = np.where(played, chinese.PLAY, players.declared)
    return made, unpaid, refused, settled, np.where(settled == chinese.NATURAL, points, 0)
