"""Who may be dealt in (rules.md section 7), hand by hand: cover and the largest group.

Both rules look at one hand alone (its dealt players, its point value and the players
sitting out short), so they run over a batch's columns with the other per-hand checks,
not over the stored history as the rules across hands do (`storage/table_rules.py`).
They hold for the games that play them (the Taiwanese pair), with the values of each
hand's profile (house-rules.md 2.1): what a pair can move, and the floor.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pyarrow.compute as pc

from pipeline.core.batch import HandBatch, places_in_runs
from pipeline.core.checks.findings import DivergenceCheck, Findings
from pipeline.core.games import TAIWANESE, VARIANTS, Family
from pipeline.core.money import money_text

Ints = npt.NDArray[np.int64]
Flags = npt.NDArray[np.bool_]

# The group sizes as Taiwanese Poker deals them, for every game that plays the rules.
GAME = TAIWANESE
_COVERED = np.array([v.family is Family.taiwanese for v in VARIANTS.values()])


def check_seating(batch: HandBatch, findings: Findings) -> None:
    """Add a divergence for each dealt player short of covering the others, and for
    each hand dealt to fewer players than the seated ones could have made."""
    hands, players = batch.hands, batch.players
    covered = _COVERED[hands.game]
    if not covered.any():
        return
    n_players = np.bincount(players.hand, minlength=len(hands)).astype(np.int64)
    _cover(batch, covered, n_players, findings)
    _largest_group(batch, covered, n_players, findings)


def _cover(batch: HandBatch, covered: Flags, n_players: Ints, findings: Findings) -> None:
    players = batch.players
    hand = players.hand
    cover = batch.rules.cover_points[batch.hands.profile]
    needed = cover[hand] * (n_players[hand] - 1) * batch.hands.point_value[hand]
    short = np.flatnonzero(covered[hand] & (players.stack_start < needed))
    if findings.mark(hand[short]):
        return
    for p in short:
        seat, stack = int(players.seat[p]), money_text(int(players.stack_start[p]))
        need = money_text(int(needed[p]))
        findings.add(
            int(hand[p]),
            DivergenceCheck.cover,
            f"seat {seat} ({players.player_id[int(p)].as_py()}) started with {stack}, short "
            f"of the {need} needed to cover {cover[hand[p]]} points against each of "
            f"{int(n_players[hand[p]]) - 1} opponents",
            seat=seat,
            expected=need,
            recorded=stack,
        )


def _largest_group(batch: HandBatch, covered: Flags, n_players: Ints, findings: Findings) -> None:
    """A group of k can play when the k-th largest stack among the dealt players and the
    short ones at or above the floor covers k - 1 others. A group larger than the one
    dealt needs a short player able to cover the dealt ones at least, so only hands
    with one are ranked."""
    hands, players, sitting = batch.hands, batch.players, batch.sitting_out
    value = hands.point_value
    cover = batch.rules.cover_points[hands.profile]
    floor = batch.rules.floor_points[hands.profile]
    is_short = pc.fill_null(pc.equal(sitting.reason, "short"), False).to_numpy(zero_copy_only=False)
    short, short_stack = sitting.hand[is_short], sitting.stack[is_short]
    able = short_stack >= cover[short] * n_players[short] * value[short]
    ranked = np.zeros(len(hands), dtype=bool)
    ranked[short[able]] = True
    ranked &= covered
    if not ranked.any():
        return
    at_floor = ranked[short] & (short_stack >= floor[short] * value[short])
    dealt = ranked[players.hand]
    hand = np.concatenate([players.hand[dealt], short[at_floor]])
    stack = np.concatenate([players.stack_start[dealt], short_stack[at_floor]])
    order = np.lexsort((-stack, hand))
    hand, stack = hand[order], stack[order]
    k = places_in_runs(hand) + 1
    can = (k >= GAME.min_players) & (k <= GAME.max_players)
    can &= stack >= cover[hand] * (k - 1) * value[hand]
    largest = np.zeros(len(hands), dtype=np.int64)
    np.maximum.at(largest, hand[can], k[can])
    if findings.mark(np.flatnonzero(largest > n_players)):
        return
    for h in np.flatnonzero(largest > n_players):
        dealt_in, group = int(n_players[h]), int(largest[h])
        findings.add(
            int(h),
            DivergenceCheck.largest_group,
            f"{dealt_in} players were dealt, but {group} of the seated players (short ones "
            f"at or above the {floor[h]}-point floor included) could cover a hand "
            f"of {group}",
            expected=group,
            recorded=dealt_in,
        )
