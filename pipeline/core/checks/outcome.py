"""Recorded outcomes against recomputed ones: rows, jokers, pairs, players, rake, zero sum.

Detection runs over whole columns; only the divergences found are turned into
messages one by one.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from pipeline.core.batch import HandBatch
from pipeline.core.checks.findings import DivergenceCheck, Findings
from pipeline.core.checks.jokers import check_joker_substitutes
from pipeline.core.evaluator import value_text
from pipeline.core.games import HOME_RUN_NAMES, ROW_NAMES
from pipeline.core.games.pairs import Pairs, sum_by
from pipeline.core.money import Settlement, money_text
from pipeline.core.showdown import Showdown

Ints = npt.NDArray[np.int64]
Flags = npt.NDArray[np.bool_]


def _home_run_text(code: int) -> str:
    return HOME_RUN_NAMES[code] or "none"


def check_outcomes(
    batch: HandBatch,
    shown: Showdown,
    pairs: Pairs,
    points: Ints,
    money: Settlement,
    findings: Findings,
    rows: bool = True,
) -> None:
    """Add a divergence for every recorded field that differs from its recomputed value
    (`rows`: the rows' values and jokers too; see `check_rows`)."""
    if rows:
        check_rows(batch, shown, findings)
    _pair_settlements(batch, pairs, money, findings)
    _player_results(batch, points, money, findings)
    _hand_totals(batch, money, findings)


def check_rows(batch: HandBatch, shown: Showdown, findings: Findings) -> None:
    """The recorded rows' values and jokers against the cards': in the Taiwanese games,
    the same under every profile."""
    _row_values(batch, shown, findings)
    check_joker_substitutes(batch.game, batch, shown, findings)


def row_place(batch: HandBatch, player: int, row: int, board: int) -> str:
    """'seat 3 top row on board 2', or 'seat 3 top row' in a game without boards."""
    where = f"seat {batch.players.seat[player]} {ROW_NAMES[row]} row"
    return f"{where} on board {board + 1}" if batch.game.boards else where


def _row_values(batch: HandBatch, shown: Showdown, findings: Findings) -> None:
    rows = batch.rows
    if len(rows.player) == 0:
        return
    ours = shown.value[rows.player, rows.board, rows.row]
    theirs = rows.parsed
    players = batch.players
    bad = np.flatnonzero(ours != theirs)
    if findings.mark(players.hand[rows.player[bad]]):
        return
    for i in bad:
        p, row, board = int(rows.player[i]), int(rows.row[i]), int(rows.board[i])
        expected = value_text([ours[i]])[0]
        recorded = rows.value[int(i)].as_py()
        findings.add(
            int(players.hand[p]),
            DivergenceCheck.row_value,
            f"{row_place(batch, p, row, board)} is {expected}, recorded as {recorded}",
            seat=int(players.seat[p]),
            board=board + 1 if batch.game.boards else None,
            row=ROW_NAMES[row],
            expected=expected,
            recorded=recorded,
        )


def _matched(batch: HandBatch, pairs: Pairs) -> tuple[Flags, Ints, Ints, Ints]:
    """The recorded settlements against our pairs: which records name a pair of ours
    (`found`), our pair `k` of each such record `r`, and our pairs no record names in
    hands that record settlements (`missing`)."""
    rec, seat = batch.settlements, batch.players.seat
    ours_key = pairs.hand * 64 + seat[pairs.a] * 8 + seat[pairs.b]
    theirs_key = rec.hand * 64 + rec.seat * 8 + rec.opponent
    order = np.argsort(ours_key)
    where = np.searchsorted(ours_key, theirs_key, sorter=order)
    where = order[np.minimum(where, len(order) - 1)] if len(order) else where
    found = (ours_key[where] == theirs_key) if len(order) else np.zeros(len(rec.hand), bool)
    k = where[found]
    recorded_pairs = np.zeros(len(pairs), dtype=bool)
    recorded_pairs[k] = True
    missing = np.flatnonzero(~recorded_pairs & batch.hands.has_settlements[pairs.hand])
    return found, k, np.flatnonzero(found), missing


def _pair_settlements(
    batch: HandBatch, pairs: Pairs, money: Settlement, findings: Findings
) -> None:
    rec = batch.settlements
    seat = batch.players.seat
    found, k, r, missing = _matched(batch, pairs)
    if findings.marks_only:
        differ = (
            (pairs.points[k] != rec.points[r])
            | (pairs.home_run[k] != rec.home_run[r])
            | (money.amount[k] != rec.amount[r])
        )
        findings.mark(
            np.concatenate([rec.hand[~found], pairs.hand[k[differ]], pairs.hand[missing]])
        )
        return
    for i in np.flatnonzero(~found):
        findings.add(
            int(rec.hand[i]),
            DivergenceCheck.pair_points,
            f"a settlement is recorded for seats {rec.seat[i]} and {rec.opponent[i]}, "
            "which are not a pair of dealt-in players (seat before opponent)",
            seat=int(rec.seat[i]),
            opponent=int(rec.opponent[i]),
            recorded=int(rec.points[i]),
        )
    for check, ours, theirs, show in (
        (DivergenceCheck.pair_points, pairs.points[k], rec.points[r], str),
        (DivergenceCheck.home_run, pairs.home_run[k], rec.home_run[r], _home_run_text),
        (DivergenceCheck.pair_amount, money.amount[k], rec.amount[r], money_text),
    ):
        for i in np.flatnonzero(ours != theirs):
            a, b = int(seat[pairs.a[k[i]]]), int(seat[pairs.b[k[i]]])
            what = {
                DivergenceCheck.pair_points: "points",
                DivergenceCheck.home_run: "Home Run",
                DivergenceCheck.pair_amount: "amount",
            }[check]
            findings.add(
                int(pairs.hand[k[i]]),
                check,
                f"seat {a} against seat {b}: {what} {show(int(ours[i]))}, recorded "
                f"{show(int(theirs[i]))}",
                seat=a,
                opponent=b,
                expected=show(int(ours[i])),
                recorded=show(int(theirs[i])),
            )
    for i in missing:
        a, b = int(seat[pairs.a[i]]), int(seat[pairs.b[i]])
        findings.add(
            int(pairs.hand[i]),
            DivergenceCheck.pair_points,
            f"seat {a} against seat {b}: {pairs.points[i]} points, but no settlement "
            "is recorded for the pair",
            seat=a,
            opponent=b,
            expected=int(pairs.points[i]),
        )


def _player_results(batch: HandBatch, points: Ints, money: Settlement, findings: Findings) -> None:
    players = batch.players
    for check, ours, theirs, show in (
        (DivergenceCheck.points, points, players.points, str),
        (DivergenceCheck.won, money.won, players.won, money_text),
        (DivergenceCheck.rake, money.rake, players.rake, money_text),
        (DivergenceCheck.net, money.net, players.net, money_text),
        (DivergenceCheck.stack_end, money.stack_end, players.stack_end, money_text),
    ):
        bad = np.flatnonzero(ours != theirs)
        if findings.mark(players.hand[bad]):
            continue
        for i in bad:
            findings.add(
                int(players.hand[i]),
                check,
                f"seat {players.seat[i]}: {check.value} {show(int(ours[i]))}, recorded "
                f"{show(int(theirs[i]))}",
                seat=int(players.seat[i]),
                expected=show(int(ours[i])),
                recorded=show(int(theirs[i])),
            )


def _hand_totals(batch: HandBatch, money: Settlement, findings: Findings) -> None:
    hands = batch.hands
    players = batch.players
    n = len(hands)
    rake_total = sum_by(players.hand, money.rake, n)
    recorded = hands.rake_total
    differs = hands.has_rake_total & (recorded != rake_total)
    over_cap = hands.has_rake_total & (recorded > hands.rake_cap)
    won_sum = sum_by(players.hand, players.won, n)
    rake_paid = np.where(hands.has_rake_total, recorded, sum_by(players.hand, players.rake, n))
    net_sum = sum_by(players.hand, players.net, n) + rake_paid
    unbalanced = np.flatnonzero((won_sum != 0) | (net_sum != 0))
    if findings.mark(np.concatenate([np.flatnonzero(differs | over_cap), unbalanced])):
        return
    for i in np.flatnonzero(differs | over_cap):
        why = (
            f"exceeds the cap of {money_text(int(hands.rake_cap[i]))}" if over_cap[i] else "differs"
        )
        findings.add(
            int(i),
            DivergenceCheck.rake_total,
            f"rake total {money_text(int(rake_total[i]))}, recorded "
            f"{money_text(int(recorded[i]))}, which {why}",
            expected=money_text(int(rake_total[i])),
            recorded=money_text(int(recorded[i])),
        )
    for i in unbalanced:
        what = (
            f"the recorded won sum to {money_text(int(won_sum[i]))}"
            if won_sum[i]
            else f"the recorded nets plus rake sum to {money_text(int(net_sum[i]))}"
        )
        findings.add(
            int(i),
            DivergenceCheck.zero_sum,
            f"{what}, not 0.00",
            expected="0.00",
            recorded=money_text(int(won_sum[i] or net_sum[i])),
        )


def self_contradicting(batch: HandBatch) -> Flags:
    """Per hand: whether its record breaks what every settlement keeps, whatever the
    rules: the won and the points sum to zero; a net is won less rake, and a stack ends
    at its start plus its net; a rake total is the rakes' sum, within the cap; and where
    pairs are recorded, each names two players of the hand, whose points and won are
    their pairs' sums. No profile makes such a hand exact (the recomputed values keep
    all of it, and an exact hand's records are its recomputed values)."""
    players, hands, pairs = batch.players, batch.hands, batch.settlements
    n = len(hands)
    broken = np.zeros(n, dtype=bool)
    own = (players.net != players.won - players.rake) | (
        players.stack_end != players.stack_start + players.net
    )
    broken[players.hand[own]] = True
    broken |= sum_by(players.hand, players.won, n) != 0
    broken |= sum_by(players.hand, players.points, n) != 0
    rakes = sum_by(players.hand, players.rake, n)
    broken |= hands.has_rake_total & (
        (hands.rake_total != rakes) | (hands.rake_total > hands.rake_cap)
    )
    if len(pairs.hand):
        seats = int(max(players.seat.max(initial=0), pairs.seat.max(), pairs.opponent.max())) + 1
        at = players.hand * seats + players.seat
        a, b = pairs.hand * seats + pairs.seat, pairs.hand * seats + pairs.opponent
        present = np.zeros(n * seats, dtype=bool)
        present[at] = True
        broken[pairs.hand[~present[a] | ~present[b]]] = True
        # A pair recorded twice alike settles as once (each copy meets the same pair):
        # the sums are not read in a hand that repeats one.
        entry = a * seats + pairs.opponent
        repeated = np.zeros(n, dtype=bool)
        _, copy, copies = np.unique(entry, return_inverse=True, return_counts=True)
        repeated[pairs.hand[copies[copy] > 1]] = True
        recorded = hands.has_settlements[players.hand] & ~repeated[players.hand]
        for theirs, per_pair in ((players.points, pairs.points), (players.won, pairs.amount)):
            summed = sum_by(a, per_pair, n * seats) - sum_by(b, per_pair, n * seats)
            broken[players.hand[recorded & (summed[at] != theirs)]] = True
    return broken
