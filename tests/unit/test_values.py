from collections import Counter

import numpy as np

from pipeline.core.evaluator.values import (
    Category,
    all_classes,
    category_of,
    first_rank_of,
    low_only_values,
    parse_value,
    ranks_of,
    three_ranks_of,
    value_label,
    value_text,
)


def test_there_are_7462_classes_with_the_known_counts() -> None:
    counts = Counter(c.name for c, _ in all_classes())
    assert len(all_classes()) == 7462
    assert counts == {
        "straight_flush": 10,
        "four_of_a_kind": 156,
        "full_house": 156,
        "flush": 1277,
        "straight": 10,
        "three_of_a_kind": 858,
        "two_pair": 858,
        "pair": 2860,
        "high_card": 1277,
    }


def test_texts_round_trip_and_categories_rise_with_strength() -> None:
    values = np.arange(7462)
    assert (parse_value(value_text(values)) == values).all()
    assert (np.diff(category_of(values)) >= 0).all()


def test_wheel_is_the_lowest_straight_and_texts_are_canonical() -> None:
    straights = [v for v in range(7462) if category_of([v])[0] == Category.straight]
    assert value_text([straights[0], straights[-1]]).tolist() == [
        "straight:5432A",
        "straight:AKQJT",
    ]
    assert parse_value(["pair:AATT9"]).tolist() == [-1]  # kickers out of order


def test_labels_read_like_the_game() -> None:
    texts = [
        "full_house:77755",
        "straight:5432A",
        "straight_flush:AKQJT",
        "pair:TTA93",
        "four_of_a_kind:99995",
        "two_pair:AA88Q",
        "three_of_a_kind:777K4",
        "high_card:KJ853",
        "flush:AJ972",
        "two_pair:KK22A",
    ]
    assert value_label(parse_value(texts)).tolist() == [
        "Full House, Sevens full of Fives",
        "Straight, Five high",
        "Royal Flush",
        "Pair of Tens, Ace-Nine-Three kickers",
        "Four of a Kind, Nines with a Five kicker",
        "Two Pair, Aces and Eights with a Queen kicker",
        "Three of a Kind, Sevens, King-Four kickers",
        "High Card, King-Jack-Eight-Five-Three",
        "Flush, Ace-Jack-Nine-Seven-Two",
        "Two Pair, Kings and Twos with an Ace kicker",
    ]


def test_a_value_s_first_rank_and_first_three_are_its_ranks_read_in_full() -> None:
    values = np.arange(-1, low_only_values()[1] + 1).reshape(-1, 1)  # (and no value)
    ranks = ranks_of(values).astype(np.int64)
    assert (first_rank_of(values) == ranks[..., 0]).all()
    assert (three_ranks_of(values) == (ranks[..., :3] * [169, 13, 1]).sum(axis=-1)).all()
