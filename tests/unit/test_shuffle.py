"""The simulator's shuffles: fair decks stay as they were, biased ones are biased as said,
and every deck is still a deck (each card once)."""

from __future__ import annotations

import json
from math import comb
from pathlib import Path

import numpy as np
import pytest

from pipeline.generate.run import generate
from pipeline.generate.shuffle import (
    HEARTS,
    STICKY_MOVES,
    Bias,
    Dealer,
    barely_moved,
    naive_shuffle,
    parse_bias,
    riffles,
    sattolo_shuffle,
)


def test_the_naive_shuffle_deals_every_card_once_and_leaks_the_factory_order() -> None:
    rng = np.random.default_rng(2)
    decks = naive_shuffle(rng, np.full(20_000, 52), 52)
    assert (np.sort(decks, axis=1) == np.arange(52)).all()
    # The classic flaw: a card from the middle of the deck stays in its place with chance
    # about 0.86/52, not 1/52 (0.01 the estimate's standard error here).
    stays = (decks == np.arange(52)).mean(axis=0) * 52
    assert stays[15:36].mean() < 0.92
    smaller = naive_shuffle(rng, np.array([52, 54]), 54)
    assert smaller[0, 52:].tolist() == [52, 53] and sorted(smaller[1]) == list(range(54))


def test_a_fair_dealer_draws_nothing_of_its_own() -> None:
    fair, suit = Dealer(Bias.fair), Dealer(Bias.suit, share=0.0)
    assert fair.fair and suit.fair and not fair.biased(10).any()
    a, b = np.random.default_rng(5), np.random.default_rng(5)
    assert (fair.decks(a, np.arange(4)) == np.argsort(b.random((4, 52)), axis=1)).all()


def test_seat_one_favoured_in_full_holds_only_hearts(tmp_path: Path) -> None:
    """Closed Chinese deals seat 1 thirteen cards: exchanged every time, all are hearts."""
    out = tmp_path / "h.jsonl"
    dealer = Dealer(Bias.suit, share=1.0, strength=1.0, seed=3)
    generate(out, tables=3, hands=20, seed=3, variant="chinese", dealer=dealer)
    hands = [json.loads(line) for line in out.read_text().splitlines()]
    seat_one = [p for h in hands for p in h["players"] if p["seat"] == 1]
    assert seat_one
    for player in seat_one:
        assert len(player["cards"]) == 13
        assert all(card[-1] == "cdhs"[HEARTS] for card in player["cards"])
    others = [p for h in hands for p in h["players"] if p["seat"] != 1]
    assert any(card[-1] != "h" for p in others for card in p["cards"])


def test_the_off_by_one_deals_one_cycle_so_no_card_keeps_its_place() -> None:
    rng = np.random.default_rng(4)
    decks = sattolo_shuffle(rng, np.array([52] * 2_000 + [54] * 2_000), 54)
    assert (np.sort(decks, axis=1) == np.arange(54)).all()
    assert (decks[:2_000, 52:] == [52, 53]).all()  # a smaller deck's last places kept
    assert not (decks[:, :52] == np.arange(52)).any()  # never a card in its own place
    # One cycle: following a card from place to place visits all of the deck's places.
    place, seen = np.zeros(len(decks), dtype=np.int64), np.zeros(len(decks), dtype=np.int64)
    sizes = np.array([52] * 2_000 + [54] * 2_000)
    for _ in range(54):
        place = decks[np.arange(len(decks)), place]
        seen += place == 0
    assert (seen == 54 // sizes).all()


def test_k_riffles_deal_each_order_as_bayer_and_diaconis_count() -> None:
    """A 2^K-shuffle of n cards deals an order of r rising sequences with chance
    C(2^K + n - r, n) / 2^(K n): every order of four cards, two riffles."""
    n, passes, draws = 4, 2, 200_000
    rng = np.random.default_rng(8)
    decks = riffles(rng, np.full(draws, n), n, passes)
    keys, counts = np.unique(decks, axis=0, return_counts=True)
    for order, count in zip(keys, counts, strict=True):
        where = np.argsort(order)  # the place of each card
        rising = 1 + int((where[1:] < where[:-1]).sum())
        chance = comb(2**passes + n - rising, n) / 2 ** (passes * n)
        assert count / draws == pytest.approx(chance, abs=4 * np.sqrt(chance / draws))
    assert len(keys) == 24  # four cards, two riffles: every order is possible
    one = riffles(rng, np.full(1_000, 52), 54, 1)
    assert (one[:, 52:] == [52, 53]).all()
    # One riffle: the factory order is cut in two and interleaved, at most two rising runs.
    assert (np.diff(np.argsort(one[:, :52], axis=1), axis=1) < 0).sum(axis=1).max() <= 1


def test_a_sticky_deck_is_the_last_one_with_neighbours_exchanged() -> None:
    rng = np.random.default_rng(1)
    decks = np.tile(np.arange(54, dtype=np.int8), (500, 1))
    moved = barely_moved(rng, decks, np.full(500, 52), fixed=10)
    assert (np.sort(moved, axis=1) == np.arange(54)).all()
    assert (moved[:, 52:] == [52, 53]).all()
    assert (np.abs(moved.astype(int) - np.arange(54)) <= STICKY_MOVES).all()
    assert (moved[:, :10] < 10).all()  # no card crosses between places 9 and 10
    dealer = Dealer(Bias.sticky, share=1.0, seed=2)
    first = dealer.decks(np.random.default_rng(0), np.array([3, 7]))
    second = dealer.decks(np.random.default_rng(1), np.array([7, 3]))
    # Each table's deck follows its own last one, whatever order the tables come in.
    assert (np.abs(np.argsort(second[0]) - np.argsort(first[1])) <= STICKY_MOVES).all()
    assert (np.abs(np.argsort(second[1]) - np.argsort(first[0])) <= STICKY_MOVES).all()


@pytest.mark.parametrize(
    ("text", "parsed"),
    [("fair", (Bias.fair, 0)), ("riffle:7", (Bias.riffle, 7)), ("offbyone", (Bias.offbyone, 0))],
)
def test_a_bias_is_read_from_its_name(text: str, parsed: tuple[Bias, int]) -> None:
    assert parse_bias(text) == parsed


@pytest.mark.parametrize(
    "text",
    ["riffle", "riffle:0", "riffle:x", "riffle:17", "sticky:2", "no", "fair:", "riffle:\u0663"],
)
def test_a_bias_misnamed_is_refused_in_a_sentence(text: str) -> None:
    with pytest.raises(ValueError, match=r"riffle|is not one of"):
        parse_bias(text)
