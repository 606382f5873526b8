"""The simulator's shuffles: fair decks stay as they were, biased ones are biased as said,
and every deck is still a deck (each card once)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from pipeline.generate.run import generate
from pipeline.generate.shuffle import HEARTS, Bias, Dealer, naive_shuffle


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
    assert (fair.decks(a, 4) == np.argsort(b.random((4, 52)), axis=1)).all()


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
