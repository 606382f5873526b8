"""Open-Face Chinese and Pineapple tables simulated hand by hand (chinese-family.md 5 and 6).

Each player is dealt street by street (or, in Fantasyland, all at once), throws away
what Pineapple makes them throw (the lowest card of a street), sets the cards they keep
the way a closed Chinese player would, and places every card of every street in the row
that setting holds it in. Fantasyland is earned and played across hands, and nobody of a
hand that earned it leaves before the next.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from pipeline.core.cards import CANONICAL, format_cards
from pipeline.core.evaluator import value_text
from pipeline.core.games import ROW_NAMES, Streets, Variant
from pipeline.core.games import chinese as closed
from pipeline.core.games import open_face as rules
from pipeline.core.games.pairs import Pairs, pairs_of
from pipeline.core.money import money_text
from pipeline.generate.chinese import settings_of, values_of
from pipeline.generate.faults import FAMILY_FAULTS
from pipeline.generate.house import House
from pipeline.generate.records import Step, hand_head, result, seat_head, settled, settlements
from pipeline.generate.shuffle import FAVOURED_SEAT, Dealer
from pipeline.generate.tables import SEATS, Tables, seat_changes, seat_two
from pipeline.helpers.encoding import rank_of

Ints = npt.NDArray[np.int64]
Flags = npt.NDArray[np.bool_]
# The family's record faults an open-face hand can carry (it declares no natural).
FAULTS = (*(f for f in FAMILY_FAULTS if f != "natural"), "placement", "fantasyland")


@dataclass
class _Fantasyland:
    """Per table and seat: the cards a Fantasyland hand would deal next (0: none), and
    whether the seat must be dealt into the table's next hand."""

    cards: Ints
    must_play: Flags


@dataclass(frozen=True)
class _Hands(Step):
    """One step's open-face hands: streets, settings, fouls, royalties, Fantasyland."""

    streets: list[list[dict[str, list[str]]]]  # per player
    setting: dict[str, npt.NDArray[np.int8]]
    values: npt.NDArray[np.int16]
    fouled: Flags
    royalty: Ints
    landed: Flags
    earned: Flags
    earned_cards: Ints


def simulate_open_face(
    seed: int,
    n_tables: int,
    hands_per_table: int,
    fault_rate: float,
    game: Variant,
    dealer: Dealer | None = None,
    house: House | None = None,
) -> Iterator[tuple[dict[str, Any], str | None]]:
    """Hands in the order they are dealt (tables interleaved), each with the fault it
    carries; `house`: the rules they are dealt by (the contract by default)."""
    rng = np.random.default_rng(seed)
    dealer = dealer or Dealer()
    house = house or House.contract(game)
    # A deck holds 52 cards: with Fantasyland deals of more than 13, at most three play.
    most_cards = int(house.open_face.fantasyland_dealt[1][house.code])
    most = game.max_players if most_cards * game.max_players <= 52 else 52 // most_cards
    t = Tables.open(rng, n_tables, 0.0, game)
    plays_fantasyland = rng.random(n_tables) < 0.85
    state = _Fantasyland(np.zeros(t.stack.shape, np.int64), np.zeros(t.stack.shape, bool))
    while (t.hand_no < hands_per_table).any():
        kept = state.must_play.copy()
        # Nobody of a hand that earned Fantasyland leaves, busts or tops up before the next.
        before = [x.copy() for x in (t.occupied, t.stack, t.serial, t.pending_add_on)]
        seat_changes(rng, t)
        for now, then in zip(
            (t.occupied, t.stack, t.serial, t.pending_add_on), before, strict=True
        ):
            now[kept] = then[kept]
        dealt = _who_is_dealt(rng, t, hands_per_table, most, kept)
        # Fantasyland is the player's: a seat's new player, or an empty seat, has none.
        moved = (t.serial != before[2]) | ~t.occupied
        state.cards[moved] = 0
        state.must_play[moved] = False
        tables = np.flatnonzero(dealt.any(axis=1))
        drawn = rng.integers(0, len(FAULTS), n_tables)
        fault = np.where(rng.random(n_tables) < fault_rate, drawn, -1)
        if tables.size == 0:
            continue
        played = _play(rng, t, tables, dealt, game, state, dealer, house)
        for h, table in enumerate(tables.tolist()):
            t.hand_no[table] += 1
            t.clock[table] += int(rng.integers(30, 120))
            record = house.record() | _record(
                t, table, played, h, game, bool(plays_fantasyland[table])
            )
            yield record, (FAULTS[fault[table]] if fault[table] >= 0 else None)
        _after(t, played, state, plays_fantasyland)


def _streets(game: Variant) -> Streets:
    if game.streets is None:
        raise ValueError(f"{game.name} is not an open-face game")
    return game.streets


def _who_is_dealt(
    rng: np.random.Generator, t: Tables, hands_per_table: int, most: int, kept: Flags
) -> Flags:
    """Who must play (the players of a hand that earned Fantasyland) and the other seated
    players with chips, up to the game's most; a table deals when two can play."""
    seated = t.occupied & ~t.timed_out & (t.stack > 0)
    able = kept | (seated & (rng.random(t.stack.shape) > 0.03))
    priority = np.where(kept, 0, SEATS) + np.arange(SEATS)  # the kept first, then by seat
    first = np.argsort(np.where(able, priority, 2 * SEATS), axis=1)[:, :most]
    chosen = np.zeros_like(able)
    np.put_along_axis(chosen, first, True, axis=1)
    chosen &= able
    playing = (chosen.sum(axis=1) >= 2) & (t.hand_no < hands_per_table)
    idle = ~playing & (t.hand_no < hands_per_table)
    seat_two(t, idle)
    return chosen & playing[:, None]


def _deal(
    rng: np.random.Generator, tables: Ints, hand_of: Ints, count: Ints, seat: Ints, dealer: Dealer
) -> list[npt.NDArray[np.int8]]:
    """Each player's cards, in the order dealt, from their table's shuffled deck."""
    n_tables = len(tables)
    deck = dealer.decks(rng, tables)
    first = np.r_[0, np.cumsum(count)[:-1]]
    first -= first[np.searchsorted(hand_of, hand_of)]  # each table's deck starts at 0
    # Seat 1, when dealt in, is the first player: the deck's first cards.
    seat_one = np.zeros(deck.shape, dtype=bool)
    ones = seat == FAVOURED_SEAT
    seat_one[hand_of[ones]] = np.arange(deck.shape[1]) < count[ones][:, None]
    dealer.favour(deck, seat_one, dealer.biased(n_tables))
    return [deck[h, f : f + c] for h, f, c in zip(hand_of, first, count, strict=True)]


def _streets_of(
    cards: npt.NDArray[np.int8], rule: Streets, landed: bool
) -> list[npt.NDArray[np.int8]]:
    if landed:
        return [cards]
    sizes = [rule.first] + [rule.later_dealt] * rule.later
    return np.split(cards, np.cumsum(sizes)[:-1])


def _thrown(street: npt.NDArray[np.int8], keep: int) -> npt.NDArray[np.int8]:
    """The cards a player throws from a street, keeping `keep`: the lowest ranks."""
    return street[np.argsort(rank_of(street), kind="stable")[: len(street) - keep]]


def _play(
    rng: np.random.Generator,
    t: Tables,
    tables: Ints,
    dealt: Flags,
    game: Variant,
    fl: _Fantasyland,
    dealer: Dealer,
    house: House,
) -> _Hands:
    rule = _streets(game)
    table_of, seat = np.nonzero(dealt)
    hand_of = np.searchsorted(tables, table_of)
    landed = fl.cards[table_of, seat] > 0
    count = np.where(landed, fl.cards[table_of, seat], rule.first + rule.later * rule.later_dealt)
    cards = _deal(rng, tables, hand_of, count, seat, dealer)
    streets, thrown = [], []
    for held, is_landed in zip(cards, landed, strict=True):
        parts = _streets_of(held, rule, bool(is_landed))
        keep = [13] if is_landed else [rule.first] + [rule.later_placed] * rule.later
        streets.append(parts)
        thrown.append([_thrown(part, k) for part, k in zip(parts, keep, strict=True)])
    kept = np.stack(
        [np.setdiff1d(held, np.concatenate(out)) for held, out in zip(cards, thrown, strict=True)]
    ).astype(np.int8)
    setting = settings_of(rng, kept, fantasyland=True)
    values = values_of(setting)
    fouled = closed.fouled(values)
    contract, profile = house.open_face, house.profile(len(seat))
    royalty = rules.royalties(values, contract, profile)
    a, b = pairs_of(hand_of, seat + 1)
    scored = rules.pair_points(a, b, values, fouled, royalty, contract, profile[a])
    pairs = Pairs(hand_of[a], a, b, scored.points, scored.home_run, scored.decision)
    earned, earned_cards = rules.fantasyland_next(values, fouled, landed, contract, profile)
    return _Hands(
        **settled(rng, t, tables, hand_of, seat, pairs),
        streets=[
            _placed(parts, out, setting, i)
            for i, (parts, out) in enumerate(zip(streets, thrown, strict=True))
        ],
        setting=setting,
        values=values,
        fouled=fouled,
        royalty=np.where(fouled[:, None], 0, royalty),
        landed=landed,
        earned=earned,
        earned_cards=earned_cards,
    )


def _placed(
    parts: list[npt.NDArray[np.int8]],
    thrown: list[npt.NDArray[np.int8]],
    setting: dict[str, npt.NDArray[np.int8]],
    i: int,
) -> list[dict[str, list[str]]]:
    """A player's streets as recorded: each card placed in the row its final setting holds
    it in, or discarded."""
    text = {int(c): CANONICAL[c] for name in ROW_NAMES for c in setting[name][i]}
    row_of = {int(c): name for name in ROW_NAMES for c in setting[name][i]}
    out = []
    for part, discard in zip(parts, thrown, strict=True):
        cards = part.tolist()
        street = {"dealt": [CANONICAL[c] for c in cards]}
        for name in ROW_NAMES:
            street[name] = [text[c] for c in cards if row_of.get(c) == name]
        street["discard"] = [CANONICAL[c] for c in discard.tolist()]
        out.append(street)
    return out


def _after(t: Tables, played: _Hands, state: _Fantasyland, plays: Flags) -> None:
    """Stacks, timeouts and the Fantasyland each seat carries into the table's next hand."""
    where = (played.table_of, played.seat)
    t.stack[where] = played.money.stack_end
    t.pending_add_on[where] = 0
    t.timed_out[played.tables] = False
    t.timed_out[where] = played.timed_out
    state.must_play[played.tables] = False
    earned = played.earned & plays[played.table_of]
    state.cards[where] = np.where(earned, played.earned_cards, 0)
    earning_hand = np.bincount(played.hand_of, weights=earned, minlength=len(played.tables)) > 0
    state.must_play[where] = earning_hand[played.hand_of] & ~played.timed_out


def _record(
    t: Tables, table: int, played: _Hands, h: int, game: Variant, plays_fantasyland: bool
) -> dict[str, Any]:
    players = played.players(h)
    record = hand_head(t, table, game.name)
    if not plays_fantasyland:
        record["fantasyland_rule"] = False
    record["players"] = [_player(t, table, played, i, plays_fantasyland) for i in players]
    record["settlements"] = settlements(played.pairs, played.seat, played.money, h)
    record["rake_total"] = money_text(int(played.money.rake[players.start : players.stop].sum()))
    return record


def _player(t: Tables, table: int, played: _Hands, i: int, plays: bool) -> dict[str, Any]:
    money = played.money
    player = seat_head(t, table, int(played.seat[i]), int(money.stack_end[i] - money.net[i]))
    setting = {name: format_cards(cards[i]).tolist() for name, cards in played.setting.items()}
    rows = [
        {
            "row": name,
            "value": str(value_text([played.values[i, r]])[0]),
            "royalty": int(played.royalty[i, r]),
        }
        for r, name in enumerate(ROW_NAMES)
    ]
    player |= {"fantasyland": bool(played.landed[i]), "streets": played.streets[i], **setting}
    player |= {"fouled": bool(played.fouled[i]), "rows": rows}
    player |= {"fantasyland_next": bool(played.earned[i]) and plays}
    player |= result(played.points, money, i)
    if played.timed_out[i]:
        player["timed_out"] = True
    return player
