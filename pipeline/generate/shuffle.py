"""How the simulated tables shuffle: fairly, or with a deliberate bias (`generate --bias`)
that the fairness report should catch.

- `suit`: seat 1 is favoured with one suit (hearts): each card dealt to it that is not a
  heart is exchanged, with chance `strength`, for a heart from elsewhere in the deck.
- `naive`: the classic broken Fisher-Yates: every position swapped with any position
  (not only the ones after it), starting each hand from the deck in factory order
  (2c 2d 2h 2s 3c ... As, then the jokers). Its n^n equally likely swap sequences cannot
  fall evenly on the n! orders, and the deck's order leaks into the deal.
- `offbyone`: Fisher-Yates with the classic off-by-one (each position swapped with one
  strictly before it): Sattolo's algorithm, which deals only the orders of one cycle, so
  no card is ever dealt at its own place in the factory order.
- `riffle:K`: K riffle shuffles of the Gilbert-Shannon-Reeds model from the factory
  order (Bayer and Diaconis: 52 cards need about seven).
- `sticky`: the table's previous deck, in the order it was dealt, barely moved (a few
  neighbours exchanged): each deck is still uniform on its own, but consecutive hands of
  a table are dealt alike.

Each affects a `share` of hands, chosen at random. The bias draws from its own random
stream, so the tables, players and stakes of a seed stay those of its fair deal wherever
the cards do not change them; every hand is still dealt from one deck, so it stays
rules-true and is settled by the rules.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np
import numpy.typing as npt

from pipeline.core.cards import JOKER, N_STANDARD
from pipeline.helpers.encoding import suit_of

Cards = npt.NDArray[np.int8]
Flags = npt.NDArray[np.bool_]
Ints = npt.NDArray[np.int64]
HEARTS = 2  # the suit `suit` favours (suits: c d h s)
FAVOURED_SEAT = 0  # seat 1, by its index
STICKY_MOVES = 10  # neighbours a sticky shuffle exchanges in the previous deck
FACTORY = np.r_[np.arange(N_STANDARD), JOKER, JOKER].astype(np.int8)  # the deck as it comes


class Bias(StrEnum):
    fair = "fair"
    suit = "suit"
    naive = "naive"
    offbyone = "offbyone"
    riffle = "riffle"
    sticky = "sticky"


# The biases that shuffle a deck from the factory order (the others move a dealt deck).
FROM_FACTORY = (Bias.naive, Bias.offbyone, Bias.riffle)


def parse_bias(text: str) -> tuple[Bias, int]:
    """`--bias`'s value: a kind, and for `riffle:K` the number of riffles (K >= 1)."""
    kind, _, passes = text.partition(":")
    try:
        bias = Bias(kind)
    except ValueError:
        kinds = ", ".join("riffle:K" if b is Bias.riffle else b.value for b in Bias)
        raise ValueError(f"{text!r} is not one of {kinds}") from None
    if bias is not Bias.riffle:
        if ":" in text:
            raise ValueError(f"{kind} takes no number: {text!r} (only riffle:K does)")
        return bias, 0
    if not (passes.isascii() and passes.isdigit()) or not 1 <= int(passes) <= 16:
        raise ValueError(f"riffle:K takes K from 1 to 16 riffles, not {text!r}")
    return bias, int(passes)


@dataclass
class Dealer:
    """The shuffle of every hand a simulation deals."""

    bias: Bias = Bias.fair
    share: float = 1.0  # the share of hands dealt with the bias
    strength: float = 0.25  # `suit`: the chance each card of seat 1 not a heart is exchanged
    seed: int = 0
    passes: int = 7  # `riffle`: riffles a deck
    rng: np.random.Generator = field(init=False)
    last: dict[int, Cards] = field(init=False, default_factory=dict)  # `sticky`: by table

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

    def decks(self, rng: np.random.Generator, tables: Ints) -> Cards:
        """The 52-card decks of the hands the `tables` deal, in the order dealt, as the
        simulators have always drawn them from `rng`; the biased hands' decks come from
        the biased shuffle instead."""
        decks = np.argsort(rng.random((len(tables), N_STANDARD)), axis=1).astype(np.int8)
        if not self.shuffles:
            return decks
        sizes = np.full(len(tables), N_STANDARD)
        return self.reshuffled(decks, sizes, tables, self.biased(len(tables)))

    @property
    def shuffles(self) -> bool:
        """Whether the bias is in the shuffle (`suit` moves cards once they are dealt)."""
        return not self.fair and self.bias is not Bias.suit

    def reshuffled(
        self,
        decks: Cards,
        sizes: Ints,
        tables: Ints,
        biased: Flags,
        layout: Callable[[Cards], Cards] | None = None,
        fixed: int = 0,
    ) -> Cards:
        """`decks` (in the order dealt; a deck's first `sizes` places its cards) with the
        `biased` hands dealt from the bias's shuffle, and every deck remembered as its
        table's last. `layout` lays a factory-order shuffle out as the game deals it; a
        sticky move never exchanges the places `fixed - 1` and `fixed` (where the places
        jokers may not reach end)."""
        rows = np.flatnonzero(biased)
        out = decks.copy()
        if self.bias in FROM_FACTORY:
            width = decks.shape[1]
            order = FACTORY[:width][self._from_factory(sizes[rows], width)]
            out[rows] = order if layout is None else layout(order)
        else:
            known = np.array([int(t) in self.last for t in tables[rows]], dtype=bool)
            rows = rows[known]
            if len(rows):
                previous = np.stack([self.last[int(t)] for t in tables[rows]])
                out[rows] = barely_moved(self.rng, previous, sizes[rows], fixed)
        if self.bias is Bias.sticky:
            self.last.update(zip(tables.tolist(), out, strict=True))
        return out

    def _from_factory(self, sizes: Ints, width: int) -> Ints:
        if self.bias is Bias.naive:
            return naive_shuffle(self.rng, sizes, width).astype(np.int64)
        if self.bias is Bias.offbyone:
            return sattolo_shuffle(self.rng, sizes, width)
        return riffles(self.rng, sizes, width, self.passes)

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


def dealer_for(bias: str, share: float, strength: float, seed: int) -> Dealer:
    """The dealer the command line asks for (`--bias` as `parse_bias` reads it)."""
    kind, passes = parse_bias(bias)
    return Dealer(kind, share, strength, seed, passes or 7)


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


def sattolo_shuffle(rng: np.random.Generator, sizes: Ints, width: int) -> Ints:
    """Per deck, its `size` positions in factory order shuffled by Fisher-Yates with the
    off-by-one: from the last place down, each swapped with a place strictly before it
    (never itself). Every order dealt is one cycle: no card keeps its place."""
    n = len(sizes)
    order = np.tile(np.arange(width, dtype=np.int64), (n, 1))
    rows = np.arange(n)
    for i in range(width - 1, 0, -1):
        live = rows[i < sizes]
        j = (rng.random(len(live)) * i).astype(np.int64)
        order[live, i], order[live, j] = order[live, j], order[live, i].copy()
    return order


def riffles(rng: np.random.Generator, sizes: Ints, width: int, passes: int) -> Ints:
    """Per deck, `passes` Gilbert-Shannon-Reeds riffles of its `size` positions from the
    factory order. K riffles are one 2^K-shuffle, whose inverse gives each card a uniform
    digit below 2^K and sorts the cards by digit, stably (Bayer and Diaconis); the
    riffle's order is that sort's inverse. A smaller deck's last columns keep their places.
    """
    digits = rng.integers(0, 2**passes, (len(sizes), width))
    digits[np.arange(width) >= sizes[:, None]] = 2**passes  # sorted last, in place
    inverse = np.argsort(digits, axis=1, kind="stable")
    return np.argsort(inverse, axis=1).astype(np.int64)


def barely_moved(rng: np.random.Generator, decks: Cards, sizes: Ints, fixed: int = 0) -> Cards:
    """Each deck with STICKY_MOVES random pairs of neighbours among its first `size`
    places exchanged, in turn (never the places `fixed - 1` and `fixed` when `fixed`)."""
    out = decks.copy()
    rows = np.arange(len(decks))
    for _ in range(STICKY_MOVES):
        i = (rng.random(len(decks)) * (sizes - 1)).astype(np.int64)
        ok = (i != fixed - 1) if fixed else np.ones(len(decks), dtype=bool)
        r, j = rows[ok], i[ok]
        out[r, j], out[r, j + 1] = out[r, j + 1], out[r, j].copy()
    return out
