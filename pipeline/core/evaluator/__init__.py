"""The vectorized hand evaluator: lookup tables built once, rows of 1, 2 or 4 cards, jokers."""

from pipeline.core.evaluator.boards import BoardFeatures, evaluate_boards, read_boards
from pipeline.core.evaluator.rows import Evaluation, Plays, evaluate
from pipeline.core.evaluator.values import (
    Category,
    category_of,
    first_rank_of,
    parse_value,
    ranks_of,
    three_ranks_of,
    value_label,
    value_text,
)

__all__ = [
    "BoardFeatures",
    "Category",
    "Evaluation",
    "Plays",
    "category_of",
    "evaluate",
    "evaluate_boards",
    "first_rank_of",
    "parse_value",
    "ranks_of",
    "read_boards",
    "three_ranks_of",
    "value_label",
    "value_text",
]
