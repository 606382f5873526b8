"""One batch of validated hands in, its audit out: a pure function from columns to tables.

evaluate -> score -> money -> outcome checks, then the result tables of
audit-output.md (money as DECIMAL(18, 2)). The table rules, which need the hands
before and after, run on the stored results (`checks/table.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from pipeline.batch import HandBatch
from pipeline.cards import card_texts, format_cards
from pipeline.checks.findings import Findings
from pipeline.checks.outcome import check_outcomes
from pipeline.columns import decimals
from pipeline.games import HOME_RUN_NAMES, TAIWANESE_JOKERS, Variant
from pipeline.money import Settlement, settle
from pipeline.scoring import Pairs, player_points, score_pairs, sum_by
from pipeline.showdown import Showdown, showdown
from pipeline.stages import NO_STAGES, Stages


@dataclass(frozen=True)
class BatchAudit:
    hands: pa.Table
    players: pa.Table
    row_values: pa.Table
    settlements: pa.Table
    sitting_out: pa.Table
    divergences: pa.Table


AUDIT_TABLES = ("hands", "players", "row_values", "settlements", "sitting_out", "divergences")


def audit_batch(
    batch: HandBatch, variant: Variant = TAIWANESE_JOKERS, stages: Stages = NO_STAGES
) -> BatchAudit:
    """Re-evaluate, re-score and re-settle every hand of `batch` and compare with the record.

    Plain Taiwanese and Taiwanese Jokers share their rows; a plain hand simply
    holds no joker (ingest quarantines one that does).
    """
    players = batch.players
    with stages.stage("evaluation"):
        shown = showdown(variant, batch.boards, players.setting, players.hand)
    with stages.stage("scoring and money"):
        pairs = score_pairs(variant, shown.value, players.hand, players.seat)
        points = player_points(pairs, len(players))
        money = _settle(batch, pairs)
    findings = Findings()
    with stages.stage("checks"):
        check_outcomes(variant, batch, shown, pairs, points, money, findings)
    with stages.stage("result tables"):
        return _tables(variant, batch, shown, pairs, points, money, findings)


def _settle(batch: HandBatch, pairs: Pairs) -> Settlement:
    players = batch.players
    hands = batch.hands
    return settle(
        pairs,
        players.hand,
        players.seat,
        players.stack_start,
        hands.point_value,
        hands.rake_rate,
        hands.rake_cap,
    )


def _tables(
    variant: Variant,
    batch: HandBatch,
    shown: Showdown,
    pairs: Pairs,
    points: np.ndarray,
    money: Settlement,
    findings: Findings,
) -> BatchAudit:
    hand_id = batch.hands.hand_id
    sitting = batch.sitting_out
    return BatchAudit(
        hands=_hands_table(batch, money, findings),
        players=_players_table(batch, points, money),
        row_values=_rows_table(variant, batch, shown.value, shown.joker_as),
        settlements=pa.table(
            {
                "hand_id": _spread(hand_id, pairs.hand),
                "seat": batch.players.seat[pairs.a],
                "opponent": batch.players.seat[pairs.b],
                "points": pairs.points,
                "home_run": pa.array(
                    np.array(HOME_RUN_NAMES, dtype=object)[pairs.home_run], pa.string()
                ),
                "amount": decimals(money.amount),
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
    )


def _hands_table(batch: HandBatch, money: Settlement, findings: Findings) -> pa.Table:
    hands = batch.hands
    n_hands = len(hands)
    diverged = np.zeros(n_hands, dtype=bool)
    diverged[findings.hands()] = True
    players = batch.players
    boards = {
        f"board_{b + 1}": card_texts(batch.boards[:, b]) for b in range(batch.boards.shape[1])
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
            "rake_total": decimals(sum_by(players.hand, money.rake, n_hands)),
            "recorded_rake_total": decimals(hands.rake_total, valid=hands.has_rake_total),
            **boards,
            "status": pa.array(np.where(diverged, "diverged", "ok")),
            "source": hands.source,
        }
    )


def _players_table(batch: HandBatch, points: np.ndarray, money: Settlement) -> pa.Table:
    players = batch.players
    return pa.table(
        {
            "hand_id": _spread(batch.hands.hand_id, players.hand),
            "seat": players.seat,
            "player_id": players.player_id,
            "stack_start": decimals(players.stack_start),
            "add_on": decimals(players.add_on),
            "timed_out": players.timed_out,
            "points": points,
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
    )


def _spread(values: pa.Array, index: np.ndarray) -> pa.Array:
    """values[index] as a dictionary column: the strings are not copied row by row."""
    return pa.DictionaryArray.from_arrays(pa.array(index, pa.int32()), values)


def _substitute_lists(joker_as: np.ndarray) -> pa.Array:
    """list<string> per row: the joker substitutes, null for rows without a joker."""
    held = (joker_as >= 0).sum(axis=1)
    offsets = np.r_[0, np.cumsum(held)].astype(np.int32)
    values = pa.array(format_cards(joker_as[joker_as >= 0]), pa.string())
    return pa.ListArray.from_arrays(pa.array(offsets), values, mask=pa.array(held == 0))


def _rows_table(
    variant: Variant, batch: HandBatch, value: np.ndarray, joker_as: np.ndarray
) -> pa.Table:
    """One row per player: the codes of the setting's cards (rows in order), and the value
    of each (board, row) in board-major order, with the joker substitutes (null for a
    player without a joker).

    Six times fewer rows to store than one per (board, row), and small integers rather
    than texts; the `rows` view of the store spreads them out and spells them again.
    """
    players = batch.players
    setting = players.setting
    cards = np.concatenate([setting[row.name] for row in variant.rows], axis=1)
    n_players = value.shape[0]
    per_player = value.reshape(n_players, -1)
    substitutes = joker_as.reshape(n_players, per_player.shape[1], -1)
    holds_joker = (substitutes >= 0).any(axis=(1, 2))
    held = substitutes[holds_joker]
    offsets = np.r_[0, np.cumsum(np.where(holds_joker, per_player.shape[1], 0))].astype(np.int32)
    return pa.table(
        {
            "hand_id": _spread(batch.hands.hand_id, players.hand),
            "seat": players.seat,
            "cards": pa.FixedSizeListArray.from_arrays(
                pa.array(cards.reshape(-1).astype(np.uint8), pa.uint8()), cards.shape[1]
            ),
            "value_ids": pa.FixedSizeListArray.from_arrays(
                pa.array(per_player.reshape(-1), pa.int16()), per_player.shape[1]
            ),
            "joker_as": pa.ListArray.from_arrays(
                pa.array(offsets),
                _substitute_lists(held.reshape(-1, held.shape[-1])),
                mask=pa.array(~holds_joker),
            ),
        }
    )
