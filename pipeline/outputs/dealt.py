"""What each game's hands dealt each group of cards, decoded from the fairness counts: the
groups (each seat, or with --player the player and the other players; the boards) by
the numbers the views give them, how the hands cut the deck among them (their cut keys,
`helpers.encoding`), and each group's count of each card.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.core.cards import JOKER, N_STANDARD
from pipeline.core.fairness import Deals
from pipeline.core.games import VARIANTS, Variant
from pipeline.helpers.encoding import GROUPS_PER_KEY, group_count

# The groups' numbers in the views (fairness_views.py): the boards; with --player, the
# player and the others (else each seat is its number); the rest of the deck, last.
BOARDS_GROUP, PLAYER_GROUP, OTHERS_GROUP = 0, 1, 2
REST_GROUP = -1
REST = "rest"  # the cards no group was dealt
BOARDS = "boards"
PLAYER = "player"  # the group of the player chosen by --player


@dataclass(frozen=True)
class Dealt:
    """What one game's hands dealt each group, and how they cut the deck: the groups by
    their codes (the rest last), each distinct cut's keys (cuts.sql), and its hands."""

    game: Variant
    codes: list[int]
    labels: list[str]
    standard_keys: npt.NDArray[np.int64]
    dealt_keys: npt.NDArray[np.int64]
    cut_hands: npt.NDArray[np.int64]
    cards: npt.NDArray[np.float64]  # (groups, 53): each card, a joker last; the rest's row 0

    @property
    def hands(self) -> int:
        return int(self.cut_hands.sum())

    @property
    def standard(self) -> npt.NDArray[np.float64]:
        """(groups, 52): the standard cards, the rest's row what the others left."""
        standard = self.cards[:, :N_STANDARD].copy()
        standard[-1] = self.hands - standard[:-1].sum(axis=0)
        return standard

    def deals(self, deck: int = N_STANDARD, keep: list[int] | None = None) -> Deals:
        """How the hands cut a deck among the groups (`keep` of them, by index, and the
        rest): their standard cards, or with `keep`, all their cards."""
        chosen = list(range(len(self.codes) - 1)) if keep is None else keep
        keys = self.standard_keys if keep is None else self.dealt_keys
        groups = np.array([self.codes[i] for i in chosen], dtype=np.int64)
        patterns = group_count(keys[:, None], groups)
        patterns = np.concatenate([patterns, np.zeros((len(keys), 1), np.int64)], axis=1)
        labels = [self.labels[i] for i in chosen] + [self.labels[-1]]
        return Deals.from_patterns(deck, labels, patterns.astype(np.float64), self.cut_hands)


def dealt_by_game(cuts: pa.Table, cards: pa.Table, by_player: bool) -> Iterator[Dealt]:
    """Per game with hands: what they dealt, from the counts of cuts.sql and cards.sql."""
    for name, game in VARIANTS.items():
        mine = cuts.filter(pc.equal(cuts["variant"], name))
        if mine.num_rows == 0:
            continue
        standard, dealt, hands = (mine[c].to_numpy() for c in ("standard", "dealt", "hands"))
        present = np.bitwise_or.reduce(dealt)
        codes = [g for g in range(GROUPS_PER_KEY) if group_count(int(present), g)]
        codes = [*sorted(codes, key=lambda g: (g == BOARDS_GROUP, g)), REST_GROUP]
        labels = [label(g, by_player) for g in codes]
        row = {g: i for i, g in enumerate(codes)}
        counted = np.zeros((len(codes), JOKER + 1))
        for each in cards.filter(pc.equal(cards["variant"], name)).to_pylist():  # <= 53 a group
            counted[row[each["grp"]], each["card"]] = each["dealt"]
        yield Dealt(game, codes, labels, standard, dealt, hands, counted)


def label(code: int, by_player: bool) -> str:
    """A group's name in the report."""
    if code == REST_GROUP:
        return REST
    if code == BOARDS_GROUP:
        return BOARDS
    if by_player:
        return PLAYER if code == PLAYER_GROUP else "other players"
    return f"seat {code}"
