"""One batch of validated hands in, its audit out: a pure function from columns to tables.

evaluate -> score -> money -> outcome checks and the rules of one hand's seating
(cover, largest group), then the result tables of audit-output.md (money as
DECIMAL(18, 2)). The table rules, which need the hands before and after, run on the
stored results (`storage/table_rules.py`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.core.batch import HandBatch
from pipeline.core.cards import card_texts, format_cards
from pipeline.core.checks.family import (
    Placements,
    check_chinese,
    no_streets,
    placements,
    streets_dealt,
)
from pipeline.core.checks.findings import Findings
from pipeline.core.checks.outcome import check_outcomes, check_rows, self_contradicting
from pipeline.core.checks.seating import check_seating
from pipeline.core.games import HOME_RUN_NAMES, Layout
from pipeline.core.games.chinese import DECLARATIONS, NATURALS, SCORING
from pipeline.core.games.game import BY_NAMES, DECIDED, Decision
from pipeline.core.games.pairs import Ints, Pairs, player_points, sum_by
from pipeline.core.games.taiwanese import HandRules, pair_points
from pipeline.core.money import Settlement, settle
from pipeline.core.scoring import ChineseScore, low_middles, score_chinese
from pipeline.core.showdown import Showdown, showdown
from pipeline.helpers.columns import decimals
from pipeline.helpers.encoding import placement
from pipeline.helpers.packing import CARDS, NO_VALUE, VALUES
from pipeline.helpers.stages import NO_STAGES, Stages


@dataclass(frozen=True)
class BatchAudit:
    hands: pa.Table
    players: pa.Table
    row_values: pa.Table  # in the table of its layout: ROW_TABLES
    settlements: pa.Table
    sitting_out: pa.Table
    divergences: pa.Table
    layout: Layout  # whose rows these are
    streets: pa.Table | None = None  # open-face: one row per street of a player

    def tables(self) -> dict[str, pa.Table]:
        """Each result table by the name it is stored under."""
        return {
            "hands": self.hands,
            "players": self.players,
            ROW_TABLES[self.layout]: self.row_values,
            "settlements": self.settlements,
            "sitting_out": self.sitting_out,
            "divergences": self.divergences,
        } | ({"player_streets": self.streets} if self.streets is not None else {})


# Where each layout's row values are stored, one row per player.
ROW_TABLES = {Layout.taiwanese: "row_values", Layout.chinese: "family_row_values"}


@dataclass(frozen=True)
class Scored:
    """A batch scored and settled: its pairs, each player's points, the money, and what
    the Chinese family adds (None for Taiwanese hands)."""

    pairs: Pairs
    points: Ints
    money: Settlement
    chinese: ChineseScore | None


def audit_batch(batch: HandBatch, stages: Stages = NO_STAGES) -> BatchAudit:
    """Re-evaluate, re-score and re-settle every hand of `batch` and compare with the record.

    The hands of a batch share a layout (`batch.game`): plain Taiwanese and Taiwanese
    Jokers share their rows (a plain hand simply holds no joker), closed Chinese has its own.
    """
    with stages.stage("evaluation"):
        shown = evaluated(batch)
        if batch.game.layout is Layout.chinese:
            shown = replace(shown, value=low_middles(batch, shown.value))
    with stages.stage("scoring and money"):
        scored = score(batch, shown)
    findings = Findings()
    with stages.stage("checks"):
        check_outcomes(batch, shown, scored.pairs, scored.points, scored.money, findings)
        check_seating(batch, findings)
        if scored.chinese is not None:
            check_chinese(batch, scored.chinese, findings)
    with stages.stage("result tables"):
        return _tables(batch, shown, scored, findings)


def evaluated(batch: HandBatch) -> Showdown:
    """The rows of every player of `batch` on each board, as the cards make them: what
    does not depend on the hands' profiles (but a closed middle's, `low_middles`)."""
    return showdown(batch.game, batch.boards, batch.players.setting, batch.players.hand)


@dataclass(frozen=True)
class Unruled:
    """What a batch's audit finds that no profile changes, found once for every profile
    its hands are put under (`divergent_hands`)."""

    # Per hand: how many recorded row values and jokers diverge (Taiwanese; none for the
    # family, whose middle a profile may turn low).
    rows: npt.NDArray[np.int64]
    # Per player: what their streets show under any profile (`placements`).
    misplaced: npt.NDArray[np.bool_]
    dealt: npt.NDArray[np.int64]  # (players, 2)
    cards: npt.NDArray[np.int64]

    @property
    def placed(self) -> Placements:
        return Placements(self.misplaced, self.dealt, self.cards)

    def per_player(self) -> tuple[npt.NDArray[Any], ...]:
        """Its columns per player, in order (to take some players' beside their hands)."""
        return self.misplaced, self.dealt, self.cards


def unruled(batch: HandBatch, shown: Showdown) -> Unruled:
    """What the audit of `batch` (`evaluated` as `shown`) finds under any profile."""
    findings = Findings(marks_only=True)
    family = batch.game.layout is Layout.chinese
    if not family:
        check_rows(batch, shown, findings)
    placed = placements(batch) if family else no_streets(len(batch.players))
    return Unruled(findings.counts(len(batch)), placed.misplaced, placed.dealt, placed.cards)


def never_exact(batch: HandBatch, unruled: Unruled) -> npt.NDArray[np.bool_]:
    """Per hand of `batch`: whether no profile makes it exact, its record contradicting
    itself (`self_contradicting`) or diverging where no profile changes (`unruled`)."""
    never = self_contradicting(batch) | (unruled.rows > 0)
    never[batch.players.hand[unruled.misplaced]] = True
    return never


def divergent_hands(batch: HandBatch, shown: Showdown, unruled: Unruled) -> npt.NDArray[np.int64]:
    """Per hand of `batch`: how many divergences its audit finds, without writing one.
    `shown`: the batch `evaluated`, and `unruled` what no profile changes, both found
    once for any profiles its hands are put under."""
    family = batch.game.layout is Layout.chinese
    if family:
        shown = replace(shown, value=low_middles(batch, shown.value))
    scored = score(batch, shown)
    findings = Findings(marks_only=True)
    check_outcomes(batch, shown, scored.pairs, scored.points, scored.money, findings, family)
    check_seating(batch, findings)
    if scored.chinese is not None:
        check_chinese(batch, scored.chinese, findings, unruled.placed)
    return findings.counts(len(batch)) + unruled.rows


def score(batch: HandBatch, shown: Showdown) -> Scored:
    players, hands = batch.players, batch.hands
    chinese = None
    if batch.game.layout is Layout.chinese:
        pairs, chinese = score_chinese(batch, shown.value)
    else:
        book, profile = batch.rules, hands.profile
        rules = HandRules(
            book.boards[profile], book.row_points[profile], book.home_run_bonus[profile]
        )
        pairs = pair_points(shown.value, players.hand, players.seat, rules)
    money = settle(
        pairs,
        players.hand,
        players.seat,
        players.stack_start,
        hands.point_value,
        hands.rake_rate,
        hands.rake_cap,
        table_stakes=chinese is not None,
    )
    return Scored(pairs, player_points(pairs, len(players)), money, chinese)


def _tables(batch: HandBatch, shown: Showdown, scored: Scored, findings: Findings) -> BatchAudit:
    hand_id = batch.hands.hand_id
    sitting = batch.sitting_out
    pairs = scored.pairs
    return BatchAudit(
        hands=_hands_table(batch, scored, findings),
        players=_players_table(batch, scored),
        row_values=_rows_table(batch, shown, scored.chinese),
        settlements=pa.table(
            {
                "hand_id": _spread(hand_id, pairs.hand),
                "seat": batch.players.seat[pairs.a],
                "opponent": batch.players.seat[pairs.b],
                "points": pairs.points,
                "home_run": pa.array(
                    np.array(HOME_RUN_NAMES, dtype=object)[pairs.home_run], pa.string()
                ),
                "amount": decimals(scored.money.amount),
                **_decision_columns(pairs.decision, len(pairs)),
            }
        ),
        sitting_out=pa.table(
            {
                "hand_id": _spread(hand_id, sitting.hand),
                "seat": sitting.seat,
                "player_id": sitting.player_id,
                "stack": decimals(sitting.stack),
                "reason": sitting.reason,
            }
        ),
        divergences=findings.table(hand_id, batch.hands.table_id),
        layout=batch.game.layout,
        streets=_streets_table(batch) if batch.game.layout is Layout.chinese else None,
    )


def _streets_table(batch: HandBatch) -> pa.Table:
    """One row per open-face player: how many streets, and every card of every part of
    them (dealt, each row, discard) as placement codes (helpers.encoding), part by part
    and street by street. The store's `streets` view spells them out, a row per street."""
    players, streets = batch.players, batch.players.streets
    first = streets.firsts()
    owner = streets.player[first]
    parts = list(streets.parts.values())
    street = np.concatenate([s for _, s in parts])
    part = np.repeat(np.arange(len(parts), dtype=np.uint32), [len(s) for _, s in parts])
    numbers = streets.numbers().astype(np.uint32)[street] + 1
    placements = placement(numbers, part, np.concatenate([c for c, _ in parts]).astype(np.uint32))
    player = streets.player[street]
    # Each part's cards come player by player: a stable sort merges the five runs.
    order = np.argsort(player, kind="stable")
    per_player = np.bincount(player, minlength=len(players))[owner]
    return pa.table(
        {
            "hand_id": _spread(batch.hands.hand_id, players.hand[owner]),
            "seat": players.seat[owner],
            "streets": np.diff(np.r_[first, len(streets)]).astype(np.int32),
            "placements": pa.ListArray.from_arrays(
                pa.array(np.r_[0, np.cumsum(per_player)].astype(np.int32)),
                pa.array(placements[order], pa.uint32()),
            ),
        }
    )


def _hands_table(batch: HandBatch, scored: Scored, findings: Findings) -> pa.Table:
    hands = batch.hands
    n_hands = len(hands)
    diverged = np.zeros(n_hands, dtype=bool)
    diverged[findings.hands()] = True
    players = batch.players
    dealt = batch.rules.boards[hands.profile]  # a board the hand's profile lacks is null
    boards = {
        f"board_{b + 1}": _unless(card_texts(batch.boards[:, b]), dealt <= b)
        for b in range(batch.boards.shape[1])
    }
    return pa.table(
        {
            "hand_id": hands.hand_id,
            "table_id": hands.table_id,
            "hand_no": hands.hand_no,
            "started_at": pa.array(hands.started_at, pa.timestamp("us", tz="UTC")),
            "day": pa.array((hands.started_at // 86_400_000_000).astype(np.int32), pa.date32()),
            "variant": hands.variant,
            "currency": hands.currency,
            "point_value": decimals(hands.point_value),
            "rake_rate": decimals(hands.rake_rate, scale=9),
            "rake_cap": decimals(hands.rake_cap),
            "n_players": np.bincount(players.hand, minlength=n_hands).astype(np.int64),
            "rake_total": decimals(sum_by(players.hand, scored.money.rake, n_hands)),
            "recorded_rake_total": decimals(hands.rake_total, valid=hands.has_rake_total),
            **boards,
            "status": pa.array(np.where(diverged, "diverged", "ok")),
            "source": hands.source,
            "record_digest": hands.digest,
            **(_chinese_hands(batch) if scored.chinese is not None else {}),
            "rules": pa.DictionaryArray.from_arrays(
                pa.array(hands.profile, pa.int32()), pa.array(batch.rules.names)
            ),
        }
    )


def _unless(column: pa.Array, absent: np.ndarray) -> pa.Array:
    """`column`, null where `absent`."""
    if not absent.any():
        return column
    return pc.if_else(pa.array(absent), pa.scalar(None, column.type), column)


def _chinese_hands(batch: HandBatch) -> dict[str, pa.Array]:
    """The table settings of the family's hands: the method and the surrender's points
    (closed Chinese), whether the table plays Fantasyland (open-face)."""
    hands = batch.hands
    open_face = batch.hands.open_face()
    method = np.array(SCORING, dtype=object)[hands.two_four.astype(np.int64)]
    return {
        "scoring": pa.array(method, pa.string()),
        "surrender_points": pa.array(hands.surrender_points, pa.int64(), mask=open_face),
        "fantasyland_rule": pa.array(hands.fantasyland_rule, mask=~open_face),
    }


def _players_table(batch: HandBatch, scored: Scored) -> pa.Table:
    players, money = batch.players, scored.money
    columns = {
        "hand_id": _spread(batch.hands.hand_id, players.hand),
        "seat": players.seat,
        "player_id": players.player_id,
        "stack_start": decimals(players.stack_start),
        "add_on": decimals(players.add_on),
        "timed_out": players.timed_out,
        "points": scored.points,
        "won": decimals(money.won),
        "rake": decimals(money.rake),
        "net": decimals(money.net),
        "stack_end": decimals(money.stack_end),
        "recorded_points": players.points,
        "recorded_won": decimals(players.won),
        "recorded_rake": decimals(players.rake),
        "recorded_net": decimals(players.net),
        "recorded_stack_end": decimals(players.stack_end),
    }
    if scored.chinese is not None:
        columns |= _family_players(batch, scored.chinese)
    return pa.table(columns)


def _family_players(batch: HandBatch, scored: ChineseScore) -> dict[str, pa.Array]:
    """The family's player columns: the foul, the declaration (closed Chinese) and
    Fantasyland (open-face); null where a game has no such thing."""
    players = batch.players
    open_face = batch.hands.open_face()[players.hand]
    natural = np.array([None, *NATURALS], dtype=object)[players.natural]
    declare = np.array(DECLARATIONS, dtype=object)[players.declared]
    return {
        "fouled": scored.fouled,
        "recorded_fouled": pa.array(players.fouled, mask=~players.has_fouled),
        "declare": pa.array(declare, pa.string(), mask=open_face),
        "natural": pa.array(natural, pa.string()),
        "fantasyland": pa.array(players.fantasyland, mask=~open_face),
        "fantasyland_next": pa.array(scored.fantasyland_next, mask=~open_face),
        "recorded_fantasyland_next": pa.array(
            players.fantasyland_next, mask=~(open_face & players.has_fantasyland_next)
        ),
        "fantasyland_cards": pa.array(scored.fantasyland_cards, pa.int64(), mask=~open_face),
        "cards_dealt": pa.array(streets_dealt(batch), pa.int64(), mask=~open_face),
    }


def _named(names: tuple[str | None, ...], codes: Ints) -> pa.Array:
    """names[codes] as text, taken by Arrow (no Python string object per row)."""
    return pc.take(pa.array(names, pa.string()), pa.array(codes, pa.int64()))


def _decision_columns(decision: Decision | None, n: int) -> dict[str, pa.Array]:
    """How each pair was decided, as the settlements table stores it."""
    if decision is None:
        raise ValueError(f"{n} pairs scored without saying how they were decided")

    def royalties(per_row: Ints | None) -> pa.Array:
        if per_row is None:
            return pa.nulls(len(decision.decided), pa.list_(pa.int32()))
        flat = pa.array(per_row.astype(np.int32).ravel())
        return pa.FixedSizeListArray.from_arrays(flat, per_row.shape[1]).cast(pa.list_(pa.int32()))

    return {
        "decided": _named(DECIDED, decision.decided),
        "decided_by": _named(BY_NAMES, decision.by),
        "rows_won": pa.array(decision.rows_won.astype(np.int16)),
        "rows_lost": pa.array(decision.rows_lost.astype(np.int16)),
        "bonus": pa.array(decision.bonus),
        "royalties": royalties(decision.royalties),
        "opponent_royalties": royalties(decision.opponent_royalties),
    }


def _spread(values: pa.Array, index: np.ndarray) -> pa.Array:
    """values[index] as a dictionary column: the strings are not copied row by row (text
    read as a dictionary already, as Parquet's may be, keeps its own)."""
    if pa.types.is_dictionary(values.type):
        indices = values.indices.take(pa.array(index)).cast(pa.int32())
        return pa.DictionaryArray.from_arrays(indices, values.dictionary)
    return pa.DictionaryArray.from_arrays(pa.array(index, pa.int32()), values)


def _substitute_lists(joker_as: np.ndarray) -> pa.Array:
    """list<string> per row: the joker substitutes, null for rows without a joker."""
    held = (joker_as >= 0).sum(axis=1)
    offsets = np.r_[0, np.cumsum(held)].astype(np.int32)
    values = pa.array(format_cards(joker_as[joker_as >= 0]), pa.string())
    return pa.ListArray.from_arrays(pa.array(offsets), values, mask=pa.array(held == 0))


def _rows_table(batch: HandBatch, shown: Showdown, chinese: ChineseScore | None) -> pa.Table:
    """One row per player: the codes of the setting's cards (rows in order), and the value
    of each (board, row) in board-major order, packed into words (`packing.py`), with the
    joker substitutes (null for a player without a joker) or, in the Chinese family, each
    row's royalty.

    Six times fewer rows to store than one per (board, row), and a few integers rather
    than texts; the `rows` view of the store spreads them out and spells them again.
    """
    players = batch.players
    cards = np.concatenate([players.setting[row.name] for row in batch.game.rows], axis=1)
    n_players = len(players)
    per_player = shown.value.reshape(n_players, -1)
    boards = batch.rules.boards[batch.hands.profile][players.hand]
    if batch.game.boards and (boards < batch.game.boards).any():  # a board its profile lacks
        undealt = np.arange(batch.game.boards) >= boards[:, None]
        per_player = np.where(
            np.repeat(undealt, len(batch.game.rows), axis=1), NO_VALUE, per_player
        )
    words = CARDS.pack(cards) | VALUES.pack(per_player)
    table = {
        "hand_id": _spread(batch.hands.hand_id, players.hand),
        "seat": players.seat,
        **{name: pa.array(word) for name, word in words.items()},
    }
    if chinese is not None:
        royalty = pa.array(chinese.royalty.reshape(-1).astype(np.int8), pa.int8())
        return pa.table(table | {"royalties": pa.FixedSizeListArray.from_arrays(royalty, 3)})
    substitutes = shown.joker_as.reshape(n_players, per_player.shape[1], -1)
    holds_joker = (substitutes >= 0).any(axis=(1, 2))
    held = substitutes[holds_joker]
    offsets = np.r_[0, np.cumsum(np.where(holds_joker, per_player.shape[1], 0))].astype(np.int32)
    joker_as = pa.ListArray.from_arrays(
        pa.array(offsets),
        _substitute_lists(held.reshape(-1, held.shape[-1])),
        mask=pa.array(~holds_joker),
    )
    return pa.table(table | {"joker_as": joker_as})
