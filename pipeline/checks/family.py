"""Checks the Chinese family adds: the recorded foul, each row's royalty, declared naturals.

Detection over whole columns; only the divergences found become sentences.
"""

from __future__ import annotations

import numpy as np

from pipeline.batch import HandBatch
from pipeline.checks.findings import DivergenceCheck, Findings
from pipeline.checks.outcome import row_place
from pipeline.games import ROW_NAMES
from pipeline.games.chinese import NATURAL, NATURALS
from pipeline.scoring import ChineseScore


def check_chinese(batch: HandBatch, scored: ChineseScore, findings: Findings) -> None:
    """Add a divergence for every recorded foul and royalty that differs, and for every
    declared natural the cards do not make."""
    players, rows = batch.players, batch.rows
    seat, hand = players.seat, players.hand
    for p in np.flatnonzero(players.has_fouled & (players.fouled != scored.fouled)).tolist():
        fouls = bool(scored.fouled[p])
        findings.add(
            int(hand[p]),
            DivergenceCheck.foul,
            f"seat {seat[p]}'s setting {'fouls' if fouls else 'does not foul'}, recorded as "
            f"{'not fouled' if fouls else 'fouled'}",
            seat=int(seat[p]),
            expected=str(fouls).lower(),
            recorded=str(not fouls).lower(),
        )
    ours = scored.royalty[rows.player, rows.row]
    for i in np.flatnonzero(rows.has_royalty & (ours != rows.royalty)).tolist():
        p, row = int(rows.player[i]), int(rows.row[i])
        findings.add(
            int(hand[p]),
            DivergenceCheck.royalty,
            f"{row_place(batch, p, row, 0)} earns a royalty of {ours[i]}, recorded as "
            f"{rows.royalty[i]}",
            seat=int(seat[p]),
            row=ROW_NAMES[row],
            expected=str(ours[i]),
            recorded=str(rows.royalty[i]),
        )
    for p in np.flatnonzero((players.declared == NATURAL) & ~scored.natural_made).tolist():
        name = NATURALS[players.natural[p] - 1]
        findings.add(
            int(hand[p]),
            DivergenceCheck.natural,
            f"seat {seat[p]} declares {name}, which their 13 cards do not make; "
            "the hand is settled as played",
            seat=int(seat[p]),
            expected="play",
            recorded=name,
        )
