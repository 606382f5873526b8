"""A table simulation that follows rules.md section 7, stepping every table one hand at a time.

All tables advance together: each step is array work over tables and seats
(arrivals, add-ons, the largest group that can cover, the deal, settings, the
settlement by the project's own engine), never a Python loop over players.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from pipeline.core.cards import JOKER
from pipeline.core.games import Variant
from pipeline.core.games.pairs import Pairs
from pipeline.core.money import Settlement, settle
from pipeline.generate.shuffle import FACTORY, Dealer

SEATS = 6
POINT_VALUES = np.array([10, 25, 50, 100, 200, 500])  # cents per point
RAKE_RATES = np.array([30_000_000, 50_000_000, 100_000_000])  # billionths
Ints = npt.NDArray[np.int64]
Flags = npt.NDArray[np.bool_]


# Where a game has no floor, the generated players still top up or leave below this.
SHORT_POINTS = 60


@dataclass
class Tables:
    """The state of every table between hands."""

    table_id: list[str]
    point_value: Ints
    rake_rate: Ints
    rake_cap: Ints
    jokers: Flags
    occupied: npt.NDArray[np.bool_]  # (tables, seats)
    serial: Ints  # (tables, seats): how many players have sat in the seat
    stack: Ints  # (tables, seats) cents
    pending_add_on: Ints  # (tables, seats) cents added since the player's last hand
    timed_out: npt.NDArray[np.bool_]  # (tables, seats) in the table's last hand
    hand_no: Ints
    clock: Ints  # seconds since the epoch
    floor_points: int  # below it a player is short: the table's floor, else SHORT_POINTS
    cover_points: int  # what a dealt player covers per opponent
    dealt_floor: int  # below it a player may not be dealt in: the table's floor (0: none)

    @classmethod
    def open(
        cls,
        rng: np.random.Generator,
        n: int,
        joker_share: float,
        game: Variant,
        floor_points: int | None = None,
        cover_points: int | None = None,
    ) -> Tables:
        """`n` tables of `game`, at its floor and cover unless house rules say otherwise
        (in a game without a floor, players still feel short under SHORT_POINTS, and top
        up or leave, but may be dealt in)."""
        dealt_floor = game.floor_points if floor_points is None else floor_points
        floor_points = dealt_floor or SHORT_POINTS
        cover_points = game.cover_points if cover_points is None else cover_points
        point_value = rng.choice(POINT_VALUES, n)
        occupied = rng.random((n, SEATS)) < 0.8
        occupied[:, :2] = True
        return cls(
            table_id=[f"{game.table_prefix}{1 + i:05d}" for i in range(n)],
            point_value=point_value,
            rake_rate=rng.choice(RAKE_RATES, n),
            rake_cap=point_value * rng.choice(np.array([2, 4, 6, 10]), n),
            jokers=rng.random(n) < joker_share,
            occupied=occupied,
            serial=np.zeros((n, SEATS), np.int64),
            stack=np.where(occupied, buy_in(rng, point_value, (n, SEATS), floor_points), 0),
            pending_add_on=np.zeros((n, SEATS), np.int64),
            timed_out=np.zeros((n, SEATS), bool),
            hand_no=np.zeros(n, np.int64),
            clock=1_795_000_000 + rng.integers(0, 30 * 86400, n),
            floor_points=floor_points,
            cover_points=cover_points,
            dealt_floor=dealt_floor,
        )

    def settle(
        self, tables: Ints, pairs: Pairs, hand_of: Ints, seat: Ints, table_stakes: bool = False
    ) -> tuple[Ints, Settlement]:
        """The stacks the dealt players (0-based `seat`) start with, and the step's money by
        the project's own engine, at each table's stakes."""
        stack_start = self.stack[tables[hand_of], seat]
        money = settle(
            pairs,
            hand_of,
            seat + 1,
            stack_start,
            self.point_value[tables],
            self.rake_rate[tables],
            self.rake_cap[tables],
            table_stakes=table_stakes,
        )
        return stack_start, money

    def player_id(self, table: int, seat: int) -> str:
        serial = int(self.serial[table, seat])
        base = f"{self.table_id[table]}-p{seat + 1}"
        return base if serial == 0 else f"{base}-{serial}"


def buy_in(
    rng: np.random.Generator, point_value: Ints, shape: tuple[int, ...], floor_points: int
) -> Ints:
    """A buy-in of the floor (60 points) to 300 points (or 200 over a higher floor), in
    whole cents."""
    pv = np.broadcast_to(point_value[:, None] if len(shape) == 2 else point_value, shape)
    return (rng.integers(floor_points, max(300, floor_points + 200), shape) * pv).astype(np.int64)


def seat_changes(rng: np.random.Generator, t: Tables) -> None:
    """Players leave (busted players more often), new ones sit down, short ones top up."""
    floor = t.floor_points * t.point_value[:, None]
    below = t.occupied & (t.stack < floor)
    leave = t.occupied & (
        (rng.random(t.stack.shape) < 0.02) | (below & (rng.random(t.stack.shape) < 0.3))
    )
    t.occupied &= ~leave
    t.stack[leave] = 0
    t.pending_add_on[leave] = 0
    t.timed_out[leave] = False
    arrive = ~t.occupied & (rng.random(t.stack.shape) < 0.25)
    t.serial[arrive] += 1
    t.occupied |= arrive
    t.stack = np.where(arrive, buy_in(rng, t.point_value, t.stack.shape, t.floor_points), t.stack)
    # Short players top up to between the floor (60) and 200 points (or 100 over a
    # higher floor) now and then.
    below = t.occupied & (t.stack < floor)
    top_up = below & (rng.random(t.stack.shape) < 0.5)
    high = max(200, t.floor_points + 100)
    target = rng.integers(t.floor_points, high, t.stack.shape) * t.point_value[:, None]
    add = np.where(top_up, target - t.stack, 0)
    t.stack += add
    t.pending_add_on += add


def seat_two(t: Tables, idle: Flags) -> None:
    """At the tables of `idle`, where nobody can play, the first two seats filled with
    players of at least 100 points (the floor, if higher): a new player (a new id, a
    buy-in) where a seat is empty, a top-up recorded as an add-on where its player is
    short."""
    want = max(100, t.floor_points) * t.point_value
    for seat in (0, 1):
        new = idle & ~t.occupied[:, seat]
        t.serial[new, seat] += 1
        t.occupied[new, seat] = True
        t.stack[new, seat] = want[new]
        t.pending_add_on[new, seat] = 0
        t.timed_out[new, seat] = False
        short = idle & ~new & (t.stack[:, seat] < want)
        add = np.where(short, want - t.stack[:, seat], 0)
        t.stack[:, seat] += add
        t.pending_add_on[:, seat] += add


def largest_group(
    game: Variant,
    stack: Ints,
    candidate: npt.NDArray[np.bool_],
    point_value: Ints,
    cover_points: int,
) -> Ints:
    """Per table, the largest k (at most the game's seats) such that k candidates can
    cover k players."""
    k_best = np.zeros(len(stack), np.int64)
    for k in range(game.min_players, game.max_players + 1):
        need = cover_points * (k - 1) * point_value[:, None]
        able = (candidate & (stack >= need)).sum(axis=1)
        k_best = np.where(able >= k, k, k_best)
    return k_best


def choose_dealt(stack: Ints, candidate: npt.NDArray[np.bool_], k: Ints) -> npt.NDArray[np.bool_]:
    """The k candidates with the largest stacks (ties: lower seat)."""
    key = np.where(candidate, stack, -1).astype(np.float64) - np.arange(SEATS) * 1e-3
    rank = np.argsort(np.argsort(-key, axis=1), axis=1)
    return candidate & (rank < k[:, None])


def deal(
    rng: np.random.Generator, jokers: Flags, dealer: Dealer | None = None
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.int8]]:
    """Boards (tables, 2, 5) from the standard cards, and 7 cards for each of the six seats;
    `dealer` may bias some tables' deal (`shuffle.py`).

    A table with jokers deals its 54 cards players first, and its boards from the standard
    cards left (jokers go to players only): a player's card is any of the 54 alike, as in
    the examples (a seat holds 0.26 jokers a hand there, 14/54; boards first would give
    14/44). Without jokers the boards come first; the order does not matter then.
    """
    n = len(jokers)
    draws = rng.random((n, 52))
    order = np.argsort(draws, axis=1).astype(np.int8)
    rest = np.concatenate([order[:, 10:], np.full((n, 2), JOKER, np.int8)], axis=1)
    # Without jokers the two extra slots sort last and are never dealt (42 cards are).
    weight = rng.random(rest.shape)
    weight[~jokers, 42:] = 2.0
    deck = np.concatenate(
        [order[:, :10], np.take_along_axis(rest, np.argsort(weight, axis=1), axis=1)], axis=1
    )
    if jokers.any():  # the same draws, two more for the jokers: one shuffle of all 54
        shuffled = np.argsort(np.concatenate([draws, weight[:, :2]], axis=1)[jokers], axis=1)
        deck[jokers] = _players_first(FACTORY[shuffled])
    if dealer is not None and not dealer.fair:
        biased = dealer.biased(n)
        if dealer.shuffles:
            sizes = np.where(jokers, 54, 52)
            # Jokers go to players only: no sticky move crosses from the boards to the seats.
            deck = dealer.reshuffled(deck, sizes, np.arange(n), biased, _players_first, 10)
        seat_one = np.zeros(deck.shape[1], dtype=bool)
        seat_one[10:17] = True
        dealer.favour(deck, np.broadcast_to(seat_one, deck.shape), biased)
    return deck[:, :10].reshape(n, 2, 5), deck[:, 10:52].reshape(n, SEATS, 7)


def _players_first(cards: npt.NDArray[np.int8]) -> npt.NDArray[np.int8]:
    """Decks of 54 in the order dealt (a deck without jokers keeps them last), as the deal
    lays them out: the boards (the first ten standard cards after the seats'), the six
    seats' 42 cards, and the two left."""
    seats, left = cards[:, :42], cards[:, 42:]
    standard = left != JOKER
    board = standard & (np.cumsum(standard, axis=1) <= 10)
    left = np.take_along_axis(left, np.argsort(~board, axis=1, kind="stable"), axis=1)
    return np.concatenate([left[:, :10], seats, left[:, 10:]], axis=1)


def settings_for(
    rng: np.random.Generator, cards: npt.NDArray[np.int8]
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.int8], npt.NDArray[np.int8]]:
    """Settings players might make: cards by strength, then one of three habits.

    Most put the best card on top and the next two in the middle; some keep the
    strongest four for the Omaha bottom and play their two lowest in the middle;
    a few split at random.
    """
    shape = cards.shape[:-1]
    strength = np.where(cards == JOKER, 99, cards)  # by rank, then suit
    noise = rng.random(cards.shape) * 0.5
    habit = rng.random(shape)
    key = np.where((habit > 0.9)[..., None], rng.random(cards.shape), -strength - noise)
    ordered = np.take_along_axis(cards, np.argsort(key, axis=-1), axis=-1)
    bottom_heavy = (habit > 0.65) & (habit <= 0.9)
    top = ordered[..., :1]
    middle = np.where(bottom_heavy[..., None], ordered[..., 5:7], ordered[..., 1:3])
    bottom = np.where(bottom_heavy[..., None], ordered[..., 1:5], ordered[..., 3:7])
    return top, middle, bottom
