"""How the simulated tables shuffle: fairly, or with a deliberate bias (`generate --bias`)
that the fairness report should catch.

- `suit`: seat 1 is favoured with one suit (hearts): each card dealt to it that is not a
  heart is exchanged, with chance `strength`, for a heart from elsewhere in the deck.
- `naive`: the classic broken Fisher-Yates: every position swapped with any position
  (not only the ones after it), starting each hand from the deck in factory order
  (2c 2d 2h 2s 3c ... As, then the jokers). Its n^n equally likely swap sequences cannot
  fall evenly on the n! orders, and the deck's order leaks into the deal.

Either affects a `share` of hands, chosen at random. The bias draws from its own random
stream, so the tables, players and stakes of a seed stay those of its fair deal wherever
the cards do not change them; every hand is still dealt from one deck, so it stays
rules-true and is settled by the rules.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np
import numpy.typing as npt

from pipeline.core.cards import JOKER, N_STANDARD
from pipeline.helpers.encoding import suit_of

Cards = npt.NDArray[np.int8]
Flags = npt.NDArray[np.bool_]
HEARTS = 2  # the suit `suit` favours (suits: c d h s)
FAVOURED_SEAT = 0  # seat 1, by its index


class Bias(StrEnum):
    fair = "fair"
    suit = "suit"
    naive = "naive"


@dataclass
class Dealer:
    """The shuffle of every hand a simulation deals."""

    bias: Bias = Bias.fair
    share: float = 1.0  # the share of hands dealt with the bias
    strength: float = 0.25  # `suit`: the chance each card of seat 1 not a heart is exchanged
    seed: int = 0
    rng: np.random.Generator = field(init=False)

    def __post_init__(self) -> None:
        if not 0.0 <= self.share <= 1.0:
            raise ValueError(f"the share of biased hands is between 0 and 1, not {self.share}")
        if not 0.0 <= self.strength <= 1.0:
            raise ValueError(f"the bias strength is between 0 and 1, not {self.strength}")
        self.rng = np.random.default_rng([self.seed, 0xB1A5])

    @property
    def fair(self) -> bool:
        return self.bias is Bias.fair or self.share == 0.0

    def biased(self, n: int) -> Flags:
        """Which of n hands about to be dealt the bias touches."""
        if self.fair:
            return np.zeros(n, dtype=bool)
        return self.rng.random(n) < self.share

    def decks(self, rng: np.random.Generator, n: int) -> Cards:
        """n shuffled 52-card decks, as the simulators have always drawn them from `rng`;
        with `naive`, the biased hands' decks come from the broken shuffle instead."""
        decks = np.argsort(rng.random((n, N_STANDARD)), axis=1).astype(np.int8)
        if self.bias is Bias.naive:
            rows = self.biased(n)
            decks[rows] = naive_shuffle(self.rng, np.full(int(rows.sum()), N_STANDARD), N_STANDARD)
        return decks

    def favour(self, cards: Cards, favoured: Flags, rows: Flags) -> None:
        """`suit`: in the biased `rows` of `cards` (hands, positions: every card of the
        hand's deck, dealt or not), each card at a `favoured` position that is not a
        heart is exchanged, with chance `strength`, for a heart at a position not
        favoured. In place."""
        if self.bias is not Bias.suit:
            return
        n, width = cards.shape
        for p in np.flatnonzero(favoured.any(axis=0)):
            card = cards[:, p]
            hearts = (suit_of(cards) == HEARTS) & (cards != JOKER) & ~favoured
            act = rows & favoured[:, p] & (card != JOKER) & (suit_of(card) != HEARTS)
            act &= (self.rng.random(n) < self.strength) & hearts.any(axis=1)
            pick = np.argmax(np.where(hearts, self.rng.random((n, width)), -1.0), axis=1)
            r = np.flatnonzero(act)
            cards[r, p], cards[r, pick[r]] = cards[r, pick[r]], card[r].copy()


def dealer_for(bias: Bias, share: float, strength: float, seed: int) -> Dealer:
    """The dealer the command line asks for."""
    return Dealer(bias, share, strength, seed)


def naive_shuffle(rng: np.random.Generator, sizes: npt.NDArray[np.int64], width: int) -> Cards:
    """Per deck, its `size` positions in factory order shuffled by swapping each with any
    position (`width` columns; a smaller deck's last columns keep their places)."""
    n = len(sizes)
    order = np.tile(np.arange(width, dtype=np.int8), (n, 1))
    rows = np.arange(n)
    for i in range(width):
        j = (rng.random(n) * sizes).astype(np.int64)
        live = rows[i < sizes]
        order[live, i], order[live, j[live]] = order[live, j[live]], order[live, i].copy()
    return order
