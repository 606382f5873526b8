"""What the records tell of a table's Fantasyland (`read_fantasyland`): a stay rule is told
row by row, only where players bound it from both sides; a top that cannot earn an entry
says nothing of the entry's cards; and a player's next hand outside Fantasyland says
nothing of the cards Fantasyland deals."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from pipeline.core.evaluator import Category
from pipeline.core.inference import candidate
from pipeline.core.readings import Tops, read_fantasyland
from pipeline.core.rules import GAMES, RANKS
from pipeline.engine.infer import infer_tables, untold_in
from pipeline.engine.pool import read_pool
from tests.cli.test_rules_infer import _dealt

PINEAPPLE = next(i for i, v in enumerate(GAMES) if v.name == "pineapple_ofc")
OFC = next(i for i, v in enumerate(GAMES) if v.name == "ofc")
C = Category


def tops(*players: tuple[bool, tuple[Category, Category, Category], str, bool, int]) -> Tops:
    """Players as (in Fantasyland, rows' categories, top's rank, earned, next cards)."""
    return Tops(
        in_fantasyland=np.array([p[0] for p in players], dtype=bool),
        category=np.array([[int(c) for c in p[1]] for p in players], dtype=np.int64),
        top_rank=np.array([RANKS.index(p[2]) for p in players], dtype=np.int64),
        earned=np.array([p[3] for p in players], dtype=bool),
        next_cards=np.array([p[4] for p in players], dtype=np.int64),
    )


def test_a_stay_row_is_told_only_where_a_stay_and_a_leave_bound_it() -> None:
    base = candidate(PINEAPPLE, {})  # the contract: top trips, middle full house, bottom quads
    stayed_by_top = (True, (C.three_of_a_kind, C.pair, C.straight), "7", True, 14)
    stayed_by_middle = (True, (C.high_card, C.full_house, C.flush), "A", True, 14)
    left_with_a_pair = (True, (C.pair, C.two_pair, C.straight), "K", False, 0)
    reading = read_fantasyland(tops(stayed_by_top, stayed_by_middle, left_with_a_pair), base)
    assert reading is not None
    assert reading.table["stay"] == base_stay()
    # The top: stayed by trips alone, left with a pair. The middle: nobody left with a
    # flush there, so a flush might have kept a player in. The bottom: nobody stayed by
    # quads alone, so a straight flush might be what it takes.
    assert {s for s in reading.seen if s.startswith("stay.")} == {"stay.top"}
    left_with_a_flush = (True, (C.high_card, C.flush, C.flush), "K", False, 0)
    reading = read_fantasyland(
        tops(stayed_by_top, stayed_by_middle, left_with_a_pair, left_with_a_flush), base
    )
    assert reading is not None
    assert {s for s in reading.seen if s.startswith("stay.")} == {"stay.top", "stay.middle"}
    # A player who stayed with a middle full house and a bottom full house, where nobody
    # left with a bottom full house: the bottom may be what kept them in, so the middle
    # is not bound by them, whatever the rule read says of the bottom.
    both = (True, (C.high_card, C.full_house, C.full_house), "A", True, 14)
    reading = read_fantasyland(tops(stayed_by_top, both, left_with_a_pair, left_with_a_flush), base)
    assert reading is not None
    assert "stay.middle" not in reading.seen


def test_an_entry_is_the_pair_the_fewest_tops_contradict() -> None:
    # Jacks and better entered; one pair of queens did not, one pair of nines did (two
    # faults). Read as "the lowest pair that entered, none above it missing", the entry
    # was the base's; the tops vote for jacks, 2 against 5.
    base = candidate(OFC, {})  # the contract: queens

    def top(
        rank: str, earned: bool
    ) -> tuple[bool, tuple[Category, Category, Category], str, bool, int]:
        return (False, (C.pair, C.pair, C.flush), rank, earned, 13 if earned else 0)

    made = [top("J", True), top("J", True), top("K", True), top("A", True), top("Q", False),
            top("9", True), top("T", False), top("T", False), top("8", False)]  # fmt: skip
    reading = read_fantasyland(tops(*made), base)
    assert reading is not None
    assert reading.table["entry"] == "JJ"
    assert "entry" in reading.seen  # tens missed it: no other pair is as good
    # Without the tens and the nines' fault, nines, tens and jacks are as good (the
    # queens' fault against each): the highest of equals is read, not told.
    reading = read_fantasyland(tops(*made[:5], made[8]), base)
    assert reading is not None
    assert reading.table["entry"] == "JJ"
    assert "entry" not in reading.seen


def test_a_stay_rule_is_the_one_the_fewest_players_contradict() -> None:
    # Top trips or a bottom full house kept a player in; one who made a bottom full house
    # was let go (a fault). Read as "of each row, the lowest category nobody who left
    # reached", the bottom was quads, which the three who stayed by a full house
    # contradict: no rule explained everyone, and the base's (the contract's) was kept.
    base = candidate(PINEAPPLE, {})

    def player(
        rows: tuple[Category, Category, Category], stayed: bool
    ) -> tuple[bool, tuple[Category, Category, Category], str, bool, int]:
        return (True, rows, "A", stayed, 15 if stayed else 0)

    made = [player((C.three_of_a_kind, C.pair, C.straight), True)] * 2
    made += [player((C.high_card, C.pair, C.full_house), True)] * 3
    made += [player((C.pair, C.two_pair, C.four_of_a_kind), True)]
    made += [player((C.pair, C.two_pair, C.flush), False)] * 2
    made += [player((C.high_card, C.straight, C.straight), False)]
    fault = player((C.high_card, C.pair, C.full_house), False)
    reading = read_fantasyland(tops(*made, fault), base)
    assert reading is not None
    # The middle: nobody left with more than a straight there (a flush is the lowest
    # that may have kept one in; nobody tells it).
    assert reading.table["stay"] == ["top:three_of_a_kind", "middle:flush", "bottom:full_house"]
    assert {"stay.top", "stay.bottom"} <= reading.seen and "stay.middle" not in reading.seen
    # Where the base's rule is as good as any (here: nobody contradicts it), it is kept.
    left_with_a_pair = player((C.pair, C.pair, C.flush), False)
    reading = read_fantasyland(tops(made[0], made[5], left_with_a_pair), base)
    assert reading is not None
    assert reading.table["stay"] == base_stay()


def base_stay() -> list[str]:
    return ["top:three_of_a_kind", "middle:full_house", "bottom:four_of_a_kind"]


def test_a_top_that_cannot_earn_an_entry_says_nothing_of_its_cards() -> None:
    # Kings earned 14 cards; a king-high top recorded as earning an entry (a fault) was
    # dealt 15. The fault is no vote on what kings deal.
    base = candidate(PINEAPPLE, {"fantasyland": {"entry": "KK"}})
    kings = (False, (C.pair, C.pair, C.flush), "K", True, 14)
    king_high = (False, (C.high_card, C.pair, C.flush), "K", True, 15)
    queens_missed = (False, (C.pair, C.pair, C.flush), "Q", False, 0)
    reading = read_fantasyland(tops(kings, king_high, queens_missed), base)
    assert reading is not None
    assert reading.table["entry"] == "KK"
    assert reading.table["entry_cards"]["KK"] == 14
    assert "entry_cards.KK" in reading.seen


def test_a_next_hand_outside_fantasyland_says_nothing_of_the_cards_it_deals(
    tmp_path: Path,
) -> None:
    # Kings enter; trips deal 16 cards. Every hand in which a player sat in Fantasyland by trips
    # is removed: the player's next hand in the history is an ordinary one, dealt 17 cards
    # over the streets, as many as the contract's trips deal in Fantasyland at once. What
    # trips deal is then not read, and is undetermined.
    _, history = _dealt(
        tmp_path,
        'game = "pineapple_ofc"\n[profiles.deal.fantasyland]\nentry = "KK"\n'
        "entry_cards = { KK = 15, AA = 15, trips = 16 }\n",
        *("--tables", "3", "--hands", "150", "--seed", "11"),
    )
    hands = [json.loads(line) for line in history.read_text().splitlines()]
    earned: set[str] = set()  # players who earned it by trips, till they play it
    by_trips: set[str] = set()
    for hand in hands:
        for p in hand["players"]:
            if p["fantasyland"] and p["player_id"] in earned:
                by_trips.add(hand["hand_id"])
                earned.discard(p["player_id"])
            trips = p["rows"][0]["value"].startswith("three_of_a_kind")
            if trips and p.get("fantasyland_next") and not p["fantasyland"]:
                earned.add(p["player_id"])
    assert by_trips  # the deal made some
    kept = [h for h in hands if h["hand_id"] not in by_trips]
    history.write_text("".join(json.dumps(h) + "\n" for h in kept))
    for s in infer_tables(read_pool([history])).segments:
        assert untold_in(s, "fantasyland.entry_cards.trips"), (s.table_id, s.fit.entries)
        # Where kings are told to be the entry, what queens would deal is no question.
        if "fantasyland.entry" not in s.fit.entries:
            assert "fantasyland.entry_cards.QQ" not in s.fit.entries, s.table_id


def test_a_stay_dealt_after_a_quarantined_fantasyland_says_nothing_of_the_entry(
    tmp_path: Path,
) -> None:
    # Queens earn 14 cards, and almost every player in Fantasyland stays, for 17. Where
    # the hand a player played their entry in is quarantined (a four-card top), their
    # next hand kept deals the stay's 17: no vote for what queens deal. (A hand not
    # there at all, or cut short, leaves no player to see: histories skip hand numbers.)
    _, history = _dealt(
        tmp_path,
        'game = "pineapple_ofc"\n[profiles.deal.fantasyland]\nentry = "QQ"\n'
        'entry_cards = 14\nstay = ["bottom:high_card"]\nstay_cards = 17\n',
        *("--tables", "3", "--hands", "150", "--seed", "8"),
    )
    hands = [json.loads(line) for line in history.read_text().splitlines()]
    entered: set[str] = set()
    spoilt = 0
    for hand in hands:
        for p in hand["players"]:
            if p["fantasyland"] and p["player_id"] in entered:
                p["top"] = [*p["top"], p["middle"].pop()]  # quarantined: `setting`
                spoilt += 1
            entered.discard(p["player_id"])
            if p.get("fantasyland_next") and not p["fantasyland"]:
                entered.add(p["player_id"])
    assert spoilt > 5
    history.write_text("".join(json.dumps(h) + "\n" for h in hands))
    for s in infer_tables(read_pool([history])).segments:
        for top in ("QQ", "KK", "AA"):
            assert untold_in(s, f"fantasyland.entry_cards.{top}"), (s.table_id, s.fit.entries)


def test_one_count_read_for_some_entries_leaves_the_others_untold() -> None:
    # Queens, kings and aces were each dealt 13, as the contract deals every entry; no
    # trips earned one: what trips deal is not read, though one count fits the rest.
    base = candidate(OFC, {})
    players = [(False, (C.pair, C.two_pair, C.flush), rank, True, 13) for rank in "QKA"]
    reading = read_fantasyland(tops(*players), base)
    assert reading is not None
    assert {"entry_cards.QQ", "entry_cards.KK", "entry_cards.AA"} <= reading.seen
    assert not {"entry_cards", "entry_cards.trips"} & reading.seen
