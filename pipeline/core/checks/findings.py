"""Divergences as rows of a frame (check, where, expected, recorded, message), collected lazily."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np
import numpy.typing as npt
import pyarrow as pa


class DivergenceCheck(StrEnum):
    """Divergence checks of audit-output.md."""

    row_value = "row_value"
    joker_as = "joker_as"
    pair_points = "pair_points"
    home_run = "home_run"
    pair_amount = "pair_amount"
    points = "points"
    won = "won"
    rake = "rake"
    rake_total = "rake_total"
    net = "net"
    stack_end = "stack_end"
    zero_sum = "zero_sum"
    cover = "cover"
    largest_group = "largest_group"
    floor_60 = "floor_60"
    timeout_sit_out = "timeout_sit_out"
    continuity = "continuity"
    hand_no = "hand_no"
    foul = "foul"
    royalty = "royalty"
    natural = "natural"
    surrender = "surrender"  # a surrender at a table whose house rules allow none
    placement = "placement"
    fantasyland = "fantasyland"


SCHEMA = pa.schema(
    [
        ("hand_id", pa.string()),
        ("table_id", pa.string()),
        ("check", pa.string()),
        ("seat", pa.int64()),
        ("opponent", pa.int64()),
        ("board", pa.int64()),
        ("row", pa.string()),
        ("expected", pa.string()),
        ("recorded", pa.string()),
        ("message", pa.string()),
    ]
)


@dataclass
class Findings:
    """Divergences of one batch; `hand` indexes the batch's hands."""

    hand: list[int] = field(default_factory=list)
    check: list[str] = field(default_factory=list)
    seat: list[int | None] = field(default_factory=list)
    opponent: list[int | None] = field(default_factory=list)
    board: list[int | None] = field(default_factory=list)
    row: list[str | None] = field(default_factory=list)
    expected: list[str | None] = field(default_factory=list)
    recorded: list[str | None] = field(default_factory=list)
    message: list[str] = field(default_factory=list)
    # Marks only: the hands that diverge are noted, no divergence is written out (a
    # candidate's score in `rules infer`, where a wrong one diverges everywhere).
    marks_only: bool = False
    marked: list[npt.NDArray[np.int64]] = field(default_factory=list)

    def mark(self, hands: npt.NDArray[np.int64]) -> bool:
        """In marks-only mode, note `hands` (those of the divergences about to be added)
        and say so, so that the caller writes none; else False."""
        if self.marks_only:
            self.marked.append(np.asarray(hands, dtype=np.int64))
        return self.marks_only

    def counts(self, n: int) -> npt.NDArray[np.int64]:
        """Per hand of the batch (`n` hands): how many divergences were found in it (in
        marks-only mode, a pair's differing fields count once)."""
        return np.bincount(np.concatenate([self.hands(), *self.marked]), minlength=n)

    def add(
        self,
        hand: int,
        check: DivergenceCheck,
        message: str,
        *,
        seat: int | None = None,
        opponent: int | None = None,
        board: int | None = None,
        row: str | None = None,
        expected: object = None,
        recorded: object = None,
    ) -> None:
        self.hand.append(hand)
        self.check.append(check.value)
        self.seat.append(seat)
        self.opponent.append(opponent)
        self.board.append(board)
        self.row.append(row)
        self.expected.append(None if expected is None else str(expected))
        self.recorded.append(None if recorded is None else str(recorded))
        self.message.append(message)

    def __len__(self) -> int:
        return len(self.hand)

    def hands(self) -> npt.NDArray[np.int64]:
        return np.array(self.hand, dtype=np.int64)

    def table(self, hand_id: pa.Array, table_id: pa.Array) -> pa.Table:
        """The findings in hand order (a check's order within a hand kept), so a batch's
        divergences do not depend on which other hands share the batch."""
        index = pa.array(self.hand, type=pa.int64())
        table = pa.table(
            {
                "hand_id": hand_id.take(index),
                "table_id": table_id.take(index),
                "check": pa.array(self.check, pa.string()),
                "seat": pa.array(self.seat, pa.int64()),
                "opponent": pa.array(self.opponent, pa.int64()),
                "board": pa.array(self.board, pa.int64()),
                "row": pa.array(self.row, pa.string()),
                "expected": pa.array(self.expected, pa.string()),
                "recorded": pa.array(self.recorded, pa.string()),
                "message": pa.array(self.message, pa.string()),
            },
            schema=SCHEMA,
        )
        return table.take(pa.array(np.argsort(self.hands(), kind="stable")))
