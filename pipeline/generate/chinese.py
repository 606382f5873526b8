"""Closed Chinese tables simulated hand by hand: 13 cards to each of 2 to 4 players, settings
that foul now and then, surrenders, naturals declared when dealt, settled by the project's
own engine (table stakes included).

Every table steps together, as arrays over tables and seats; only writing the records
is per hand.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from pipeline.core.cards import format_cards
from pipeline.core.evaluator import Category, value_text
from pipeline.core.evaluator.values import three_card_classes
from pipeline.core.games import CHINESE
from pipeline.core.games import chinese as rules
from pipeline.core.games.pairs import Pairs, pairs_of
from pipeline.core.money import money_text
from pipeline.core.showdown import showdown
from pipeline.generate.faults import FAMILY_FAULTS
from pipeline.generate.house import House
from pipeline.generate.records import Step, hand_head, result, seat_head, settled, settlements
from pipeline.generate.shuffle import FAVOURED_SEAT, Dealer
from pipeline.generate.tables import SEATS, Tables, seat_changes, seat_two
from pipeline.helpers.encoding import rank_of, suit_of

Ints = npt.NDArray[np.int64]
Flags = npt.NDArray[np.bool_]
# Record faults a Chinese hand can carry (chinese-family.md's checks among them).
FAULTS = FAMILY_FAULTS


@dataclass(frozen=True)
class _Hands(Step):
    """One step's closed Chinese hands: settings, fouls, royalties, declarations."""

    dealt: Flags  # (tables, seats)
    setting: dict[str, npt.NDArray[np.int8]]
    values: npt.NDArray[np.int16]  # (players, rows)
    fouled: Flags
    royalty: Ints  # as recorded: 0 in a fouled setting
    declared: Ints
    natural: Ints  # code, 0 for none


def simulate_chinese(
    seed: int,
    n_tables: int,
    hands_per_table: int,
    fault_rate: float,
    scoring: str,
    dealer: Dealer | None = None,
    house: House | None = None,
) -> Iterator[tuple[dict[str, Any], str | None]]:
    """Hands in the order they are dealt (tables interleaved), each with the fault it
    carries. `house`: the rules they are dealt by; a file's profile gives the method and
    the surrender's points, which its hands then leave out (the contract: `scoring`, and
    2 to 4 points a surrender, written in every hand)."""
    rng = np.random.default_rng(seed)
    dealer = dealer or Dealer()
    house = house or House.contract(CHINESE)
    t = Tables.open(rng, n_tables, 0.0, CHINESE)
    surrender_points = rng.integers(2, 5, n_tables)
    if house.named:
        rules_of = house.chinese
        scoring = "2-4" if rules_of.two_four[house.code] else "1-6"
        surrender_points[:] = rules_of.surrender_points[house.code]
    faults = FAULTS if _surrender_allowed(house) else (*FAULTS, "surrender")
    while (t.hand_no < hands_per_table).any():
        seat_changes(rng, t)
        dealt = _who_is_dealt(rng, t, hands_per_table)
        tables = np.flatnonzero(dealt.any(axis=1))
        fault = np.where(
            rng.random(n_tables) < fault_rate, rng.integers(0, len(faults), n_tables), -1
        )
        if tables.size == 0:
            continue
        played = _play(rng, t, tables, dealt, scoring == "2-4", surrender_points, dealer, house)
        for h, table in enumerate(tables.tolist()):
            t.hand_no[table] += 1
            t.clock[table] += int(rng.integers(30, 120))
            record = _record(t, table, played, h, scoring, int(surrender_points[table]))
            if house.named:  # the profile's method and surrender points, left out
                record = house.record() | record
                del record["scoring"], record["surrender_points"]
            yield record, (faults[fault[table]] if fault[table] >= 0 else None)
        t.stack[played.table_of, played.seat] = played.money.stack_end
        t.pending_add_on[played.table_of, played.seat] = 0
        t.timed_out[tables] = False
        t.timed_out[played.table_of, played.seat] = played.timed_out


def _who_is_dealt(rng: np.random.Generator, t: Tables, hands_per_table: int) -> Flags:
    """The seated players with chips who did not time out, at most four a table (the lowest
    seats); a table deals when two can play."""
    able = t.occupied & ~t.timed_out & (t.stack > 0) & (rng.random(t.stack.shape) > 0.03)
    dealt = able & (np.cumsum(able, axis=1) <= CHINESE.max_players)
    playing = (dealt.sum(axis=1) >= CHINESE.min_players) & (t.hand_no < hands_per_table)
    idle = ~playing & (t.hand_no < hands_per_table)
    seat_two(t, idle)
    return dealt & playing[:, None]


# The index, among three-card values, of the weakest pair of queens (QQ2).
_QUEENS_UP = int(
    np.flatnonzero([c == Category.pair and r[0] == 10 for c, r in three_card_classes()])[0]
)


def values_of(setting: dict[str, npt.NDArray[np.int8]]) -> npt.NDArray[np.int16]:
    """Each player's row values, (players, rows)."""
    hands = np.zeros(len(setting["top"]), np.int64)  # no boards: the hand does not matter
    return showdown(CHINESE, np.zeros((1, 0, 0), np.int8), setting, hands).value[:, 0]


def _split(cards: npt.NDArray[np.int8], order: npt.NDArray[np.intp]) -> dict[str, Any]:
    ordered = np.take_along_axis(cards, order, axis=1)
    return {"bottom": ordered[:, :5], "middle": ordered[:, 5:10], "top": ordered[:, 10:]}


def settings_of(
    rng: np.random.Generator, cards: npt.NDArray[np.int8], fantasyland: bool = False
) -> dict[str, Any]:
    """Settings players might make from 13 cards: of a dozen candidates (cards grouped by
    rank, by suit, and shuffled), the strongest that does not foul; one player in twenty
    takes a candidate at random and fouls as often as not. With `fantasyland` (the
    open-face games), a pair of queens or better is also tried on top, and a setting
    that earns Fantasyland counts for more."""
    ranks = rank_of(cards)
    same_rank = (ranks[:, :, None] == ranks[:, None, :]).sum(axis=2)
    suits = suit_of(cards)
    same_suit = (suits[:, :, None] == suits[:, None, :]).sum(axis=2)
    keys = [-(same_rank * 16 + ranks), -(same_suit * 16 + ranks), -ranks]
    keys.append(np.where((same_rank >= 2) & (ranks >= 10), 100 + ranks, keys[0]))
    keys += [rng.random(cards.shape) for _ in range(8)]
    candidates = [_split(cards, np.argsort(key, axis=1, kind="stable")) for key in keys]
    scores = []
    for setting in candidates:
        values = values_of(setting)
        strength = values[:, 2] / 7462 + values[:, 1] / 7462 + (values[:, 0] - 7462) / 455
        if fantasyland:
            top = values[:, 0] - 7462  # three-card strength: a pair of queens is 115 and up
            strength = strength + (top >= _QUEENS_UP)
        scores.append(np.where(rules.fouled(values), -1.0, strength))
    best = np.argmax(np.stack(scores, axis=1), axis=1)
    careless = rng.random(len(cards)) < 0.05
    pick = np.where(careless, rng.integers(0, len(candidates), len(cards)), best)
    return {
        name: np.stack([c[name] for c in candidates], axis=1)[np.arange(len(cards)), pick]
        for name in ("top", "middle", "bottom")
    }


def _surrender_allowed(house: House) -> bool:
    return bool(house.chinese.surrender[house.code])


def _declarations(
    rng: np.random.Generator, cards: npt.NDArray[np.int8], house: House
) -> tuple[Ints, Ints]:
    """Naturals declared when the cards make one the house pays (the best paid of them),
    and a surrender now and then where the house allows it."""
    paid = house.chinese.natural_points[house.code, 1:]  # -1 where it pays none
    points = np.where(rules.naturals_made(cards)[:, 1:], paid, -1)
    best = np.where(points.max(axis=1) >= 0, np.argmax(points, axis=1) + 1, 0)
    surrender = (rng.random(len(cards)) < 0.04) & _surrender_allowed(house)
    declared = np.where(best > 0, rules.NATURAL, np.where(surrender, rules.SURRENDER, rules.PLAY))
    return declared.astype(np.int64), np.where(best > 0, best, 0).astype(np.int64)


def _play(
    rng: np.random.Generator,
    t: Tables,
    tables: Ints,
    dealt: Flags,
    two_four: bool,
    surrender_points: Ints,
    dealer: Dealer,
    house: House,
) -> _Hands:
    table_of, seat = np.nonzero(dealt)
    hand_of = np.searchsorted(tables, table_of)
    deck = dealer.decks(rng, tables)
    # Seat 1, when dealt in, is the first player: the deck's first 13 cards.
    seat_one = np.zeros(deck.shape, dtype=bool)
    seat_one[:, :13] = dealt[tables, FAVOURED_SEAT][:, None]
    dealer.favour(deck, seat_one, dealer.biased(len(tables)))
    slot = np.cumsum(dealt[tables], axis=1)[hand_of, seat] - 1  # the player's place at the table
    cards = np.stack([deck[hand_of, slot * 13 + k] for k in range(13)], axis=1)
    setting = settings_of(rng, cards)
    house_rules, profile = house.chinese, house.profile(len(seat))
    low = house_rules.middle_low[profile]
    values = rules.as_low_middle(values_of(setting), low)
    keys = rules.strength(values, house_rules.wheel_second[profile], low)
    fouled = rules.fouled(values, keys, low)
    royalty = rules.royalties(values, house_rules, profile)
    royalty[:, 1] = np.where(low, 0, royalty[:, 1])
    cards = np.concatenate(list(setting.values()), axis=1)
    declared, natural = _declarations(rng, cards, house)
    a, b = pairs_of(hand_of, seat + 1)
    hand = hand_of[a]
    scored = rules.pair_points(
        a,
        b,
        keys,
        fouled,
        royalty,
        declared,
        np.where(declared == rules.NATURAL, house_rules.natural_points[profile, natural], 0),
        np.full(len(a), two_four),
        surrender_points[tables][hand],
        house_rules.naturals_sum[profile[a]],
        house_rules.home_run[profile[a]],
    )
    pairs = Pairs(hand, a, b, scored.points, scored.home_run, scored.decision)
    return _Hands(
        **settled(rng, t, tables, hand_of, seat, pairs),
        dealt=dealt,
        setting=setting,
        values=values,
        fouled=fouled,
        royalty=np.where(fouled[:, None], 0, royalty),
        declared=declared,
        natural=natural,
    )


def _record(
    t: Tables, table: int, played: _Hands, h: int, scoring: str, surrender_points: int
) -> dict[str, Any]:
    players = played.players(h)
    record = hand_head(t, table, "chinese") | {
        "scoring": scoring,
        "surrender_points": surrender_points,
        "players": [_player(t, table, played, i) for i in players],
    }
    record["settlements"] = settlements(played.pairs, played.seat, played.money, h)
    record["rake_total"] = money_text(int(played.money.rake[players.start : players.stop].sum()))
    return record


def _player(t: Tables, table: int, played: _Hands, i: int) -> dict[str, Any]:
    setting = {name: format_cards(cards[i]).tolist() for name, cards in played.setting.items()}
    money = played.money
    player = seat_head(t, table, int(played.seat[i]), int(money.stack_end[i] - money.net[i]))
    if played.declared[i] != rules.PLAY:
        player["declare"] = rules.DECLARATIONS[played.declared[i]]
    if played.declared[i] == rules.NATURAL:
        player["natural"] = rules.NATURALS[played.natural[i] - 1]
    rows = [
        {
            "row": row.name,
            "value": str(value_text([played.values[i, r]])[0]),
            "royalty": int(played.royalty[i, r]),
        }
        for r, row in enumerate(CHINESE.rows)
    ]
    player |= {"cards": [c for row in setting.values() for c in row], **setting}
    player |= {"fouled": bool(played.fouled[i]), "rows": rows} | result(played.points, money, i)
    if played.timed_out[i]:
        player["timed_out"] = True
    return player


assert CHINESE.max_players <= SEATS
