"""The `joker_as` check: a recorded joker substitute must be allowed and reach the best value.

rules.md section 4: a substitute may not be a card of its own row or of the board
it plays on, two jokers of a row become two different cards, and any substitute
that reaches the row's best value on that board is right.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.core.batch import HandBatch
from pipeline.core.cards import INVALID, JOKER, format_cards, try_parse
from pipeline.core.checks.findings import DivergenceCheck, Findings
from pipeline.core.evaluator import evaluate, read_boards, value_text
from pipeline.core.games import ROW_NAMES, Row, Variant
from pipeline.core.showdown import Showdown
from pipeline.helpers.columns import children, lengths

Ints = npt.NDArray[np.int64]
Codes = npt.NDArray[np.int8]


@dataclass(frozen=True)
class _Recorded:
    """The recorded rows that name substitutes: where they are and what they name."""

    texts: pa.Array  # list<string> per row, as recorded
    count: Ints  # how many substitutes each names
    codes: Codes  # (rows, 2): the first two as codes, INVALID where fewer or unreadable
    unreadable: npt.NDArray[np.bool_]  # a named card that cannot be read
    player: Ints
    board: Ints
    row: Ints

    @classmethod
    def read(cls, batch: HandBatch, given: Ints) -> _Recorded:
        texts = batch.rows.joker_as.take(pa.array(given))
        values, parent = children(texts)
        codes = try_parse(values)
        padded = np.full((len(given), 2), INVALID, dtype=np.int8)
        slot = np.arange(len(parent)) - np.searchsorted(parent, parent, side="left")
        fits = slot < 2
        padded[parent[fits], slot[fits]] = codes[fits]
        unreadable = np.zeros(len(given), dtype=bool)
        unreadable[parent[codes == INVALID]] = True
        rows = batch.rows
        return cls(
            texts,
            lengths(texts),
            padded,
            unreadable,
            rows.player[given],
            rows.board[given],
            rows.row[given],
        )


def check_joker_substitutes(
    variant: Variant, batch: HandBatch, shown: Showdown, findings: Findings
) -> None:
    """Add a `joker_as` divergence for every recorded substitute that is wrong."""
    given = np.flatnonzero(~pc.is_null(batch.rows.joker_as).to_numpy(zero_copy_only=False))
    if given.size == 0:
        return
    recorded = _Recorded.read(batch, given)
    problems: dict[int, str] = {}
    for kind, row in enumerate(variant.rows):
        at = np.flatnonzero(recorded.row == kind)
        if at.size:
            problems.update(_problems(row, kind, at, recorded, batch, shown))
    for where, problem in sorted(problems.items()):
        _add(where, problem, recorded, batch, shown, findings)


def _problems(
    row: Row, kind: int, at: Ints, recorded: _Recorded, batch: HandBatch, shown: Showdown
) -> dict[int, str]:
    """What is wrong with the recorded substitutes `at` of rows of one kind, by position."""
    player, board = recorded.player[at], recorded.board[at]
    cards = batch.players.setting[row.name][player]
    board_cards = batch.boards[batch.players.hand[player], board]
    jokers = (cards == JOKER).sum(axis=1)
    subs, n, unreadable = recorded.codes[at], recorded.count[at], recorded.unreadable[at]
    used = np.arange(2)[None, :] < jokers[:, None]
    in_row = ((subs[:, :, None] == cards[:, None, :]).any(axis=2) & used).any(axis=1)
    on_board = ((subs[:, :, None] == board_cards[:, None, :]).any(axis=2) & used).any(axis=1)
    judged = (n == jokers) & (jokers > 0) & ~unreadable
    found: dict[int, str] = {}
    for i in np.flatnonzero(unreadable).tolist():
        found[i] = "names a card that cannot be read"
    for i in np.flatnonzero((n != jokers) & ~unreadable).tolist():
        found[i] = f"names {n[i]} substitute(s) for a row holding {jokers[i]} joker(s)"
    for i in np.flatnonzero(judged & in_row).tolist():
        found[i] = "names a card already in the row"
    for i in np.flatnonzero(judged & on_board).tolist():
        found.setdefault(i, f"names a card on board {board[i] + 1}")
    for i in np.flatnonzero(judged & (jokers == 2) & (subs[:, 0] == subs[:, 1])).tolist():
        found.setdefault(i, "names the same card for both jokers")
    reach = np.flatnonzero(judged)
    if reach.size:
        value = _value_with(cards[reach], subs[reach], jokers[reach], board_cards[reach], row)
        best = shown.value[player[reach], board[reach], kind]
        for i in np.flatnonzero(value != best).tolist():
            found.setdefault(
                int(reach[i]),
                f"makes {value_text([value[i]])[0]}, short of the best {value_text([best[i]])[0]}",
            )
    return {int(at[i]): problem for i, problem in found.items()}


def _value_with(
    cards: Codes, subs: Codes, jokers: Ints, board_cards: Codes, row: Row
) -> npt.NDArray[np.int16]:
    """The value of each row with its jokers replaced by the recorded substitutes."""
    trial = cards.copy()
    for k in range(2):
        place = np.argmax(trial == JOKER, axis=1)
        has = (trial == JOKER).any(axis=1) & (k < jokers)
        trial[np.flatnonzero(has), place[has]] = subs[has, k]
    return evaluate(trial, read_boards(board_cards), plays=row.plays).value


def _add(
    at: int,
    problem: str,
    recorded: _Recorded,
    batch: HandBatch,
    shown: Showdown,
    findings: Findings,
) -> None:
    players = batch.players
    p, board, row = int(recorded.player[at]), int(recorded.board[at]), int(recorded.row[at])
    name = ROW_NAMES[row]
    named = ",".join(c or "?" for c in recorded.texts[at].as_py() or [])
    expected = ",".join(c for c in format_cards(shown.joker_as[p, board, row]) if c)
    findings.add(
        int(players.hand[p]),
        DivergenceCheck.joker_as,
        f"seat {players.seat[p]} {name} row on board {board + 1}: the recorded "
        f"joker substitute {named} {problem}",
        seat=int(players.seat[p]),
        board=board + 1,
        row=name,
        expected=expected or None,
        recorded=named,
    )
