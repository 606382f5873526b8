"""Checks the Chinese family adds: the recorded foul, each row's royalty, declared naturals.

Detection over whole columns; only the divergences found become sentences.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from pipeline.core.batch import HandBatch
from pipeline.core.checks.findings import DivergenceCheck, Findings
from pipeline.core.checks.outcome import row_place
from pipeline.core.games import ROW_NAMES, VARIANTS
from pipeline.core.games.chinese import NATURAL, NATURALS
from pipeline.core.scoring import ChineseScore

Ints = npt.NDArray[np.int64]
Codes = npt.NDArray[np.int8]
Flags = npt.NDArray[np.bool_]
Sums = npt.NDArray[np.uint64]


def check_chinese(
    batch: HandBatch, scored: ChineseScore, findings: Findings, placed: Placements | None = None
) -> None:
    """Add a divergence for every recorded foul and royalty that differs, and for every
    declared natural the cards do not make; `placed`: what `placements` found of the
    players' streets (marks only; the batch's streets are then not read)."""
    players, rows = batch.players, batch.rows
    seat, hand = players.seat, players.hand
    _recorded_flags(
        batch,
        findings,
        DivergenceCheck.foul,
        players.has_fouled & (players.fouled != scored.fouled),
        scored.fouled,
        lambda p, fouls: (
            f"seat {seat[p]}'s setting {'fouls' if fouls else 'does not foul'}, "
            f"recorded as {'not fouled' if fouls else 'fouled'}"
        ),
    )
    ours = scored.royalty[rows.player, rows.row]
    wrong = np.flatnonzero(rows.has_royalty & (ours != rows.royalty))
    for i in [] if findings.mark(hand[rows.player[wrong]]) else wrong.tolist():
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
    differs = players.has_fantasyland_next & (players.fantasyland_next != scored.fantasyland_next)
    _recorded_flags(
        batch,
        findings,
        DivergenceCheck.fantasyland,
        differs & batch.hands.open_face()[hand],
        scored.fantasyland_next,
        lambda p, earns: (
            f"seat {seat[p]} {'earns' if earns else 'does not earn'} Fantasyland "
            f"for the next hand, recorded as {'not earned' if earns else 'earned'}"
        ),
    )
    if placed is None:
        check_placements(batch, findings)
    else:  # a player's placements diverge once, whatever their reasons
        findings.mark(batch.players.hand[placed.misplaced | _dealt_beyond(batch, placed.dealt)])
    _declarations(batch, scored, findings)


def _declarations(batch: HandBatch, scored: ChineseScore, findings: Findings) -> None:
    """A declared natural the cards do not make or the table does not pay, and a surrender
    where the table allows none (house-rules.md 2.2): each settled as played."""
    players = batch.players
    seat, hand = players.seat, players.hand
    names = batch.rules.names

    def natural(p: int) -> str:
        return NATURALS[players.natural[p] - 1]

    def rules(p: int) -> str:
        return names[batch.hands.profile[hand[p]]]

    found: list[tuple[Flags, DivergenceCheck, Callable[[int], str], Callable[[int], str]]] = [
        (
            (players.declared == NATURAL) & ~scored.natural_made,
            DivergenceCheck.natural,
            natural,
            lambda p: f"declares {natural(p)}, which their 13 cards do not make",
        ),
        (
            scored.natural_unpaid,
            DivergenceCheck.natural,
            natural,
            lambda p: f"declares {natural(p)}, which the table's rules ({rules(p)}) do not pay",
        ),
        (
            scored.surrender_refused,
            DivergenceCheck.surrender,
            lambda p: "surrender",
            lambda p: f"surrenders, which the table's rules ({rules(p)}) do not allow",
        ),
    ]
    for declared, check, recorded, why in found:
        if findings.mark(hand[declared]):
            continue
        for p in np.flatnonzero(declared).tolist():
            findings.add(
                int(hand[p]),
                check,
                f"seat {seat[p]} {why(p)}; the hand is settled as played",
                seat=int(seat[p]),
                expected="play",
                recorded=recorded(p),
            )


def _recorded_flags(
    batch: HandBatch,
    findings: Findings,
    check: DivergenceCheck,
    wrong: Flags,
    ours: Flags,
    says: Callable[[int, bool], str],
) -> None:
    """A divergence for each player whose recorded yes or no (`wrong` where it differs)
    is not `ours`; `says(player, ours)` is its sentence."""
    players = batch.players
    if findings.mark(players.hand[wrong]):
        return
    for p in np.flatnonzero(wrong).tolist():
        truth = bool(ours[p])
        findings.add(
            int(players.hand[p]),
            check,
            says(p, truth),
            seat=int(players.seat[p]),
            expected=str(truth).lower(),
            recorded=str(not truth).lower(),
        )


def streets_dealt(batch: HandBatch) -> Ints:
    """Per player: the cards dealt over all streets of the hand (0 without streets)."""
    streets = batch.players.streets
    _, street = streets.parts["dealt"]
    return np.bincount(streets.player[street], minlength=len(batch.players))


# 2 ** code in two halves (codes 0 to 25, then 26 up), as bincount's float weights: a
# half's sum stays an exact integer for any list shorter than 2 ** 27 cards.
_LOW = np.where(np.arange(64) < 26, 2.0 ** np.arange(64), 0.0)
_HIGH = np.where(np.arange(64) >= 26, 2.0 ** (np.arange(64) - 26), 0.0)
_BITS = np.left_shift(np.uint64(1), np.arange(64, dtype=np.uint64))  # for fixed-size rows


def _card_sums(codes: Codes, owner: Ints, owners: int) -> Sums:
    """Per owner: the sum of 2 ** code over its cards (modulo 2 ** 64).

    A sum of k powers of two has k bits set only when the k powers are distinct, so a
    list whose sum has as many bits as it has cards holds distinct cards, and those
    cards are the sum's bits: two such lists are the same cards when their counts and
    sums are equal. (A list of 64 cards or more cannot be distinct: at most 53 codes.)
    """
    low = np.bincount(owner, weights=_LOW[codes], minlength=owners).astype(np.uint64)
    high = np.bincount(owner, weights=_HIGH[codes], minlength=owners).astype(np.uint64)
    return low + (high << np.uint64(26))


def _distinct(counts: Ints, sums: Sums) -> Flags:
    """Per owner of `_card_sums`: whether its cards are distinct."""
    return np.bitwise_count(sums) == counts


def check_placements(batch: HandBatch, findings: Findings) -> None:
    """chinese-family.md section 5: street sizes, every dealt card placed or discarded on
    its street, and the final rows the placements of all streets."""
    players = batch.players
    for p, why in sorted(_placement_problems(batch).items()):
        findings.add(
            int(players.hand[p]),
            DivergenceCheck.placement,
            f"seat {players.seat[p]}: {why}",
            seat=int(players.seat[p]),
        )


@dataclass(frozen=True)
class Placements:
    """What the open-face players' streets show under any profile, per player: whether
    `check_placements` finds them wrong other than by the cards a Fantasyland street
    deals, which the hand's profile bounds; the fewest and most cards a street of
    theirs deals (`_dealt_beyond`; NO_STREET for a player without streets); and the
    cards all their streets deal."""

    misplaced: Flags
    dealt: Ints  # (players, 2)
    cards: Ints


NO_STREET = (np.iinfo(np.int64).max, -1)  # the fewest and most a street deals, of none


def placements(batch: HandBatch) -> Placements:
    """What `check_placements` finds under any profile, found once for every profile."""
    placed = no_streets(len(batch.players))
    placed.misplaced[list(_placement_problems(batch, limits=False))] = True
    streets = batch.players.streets
    dealt = np.bincount(streets.parts["dealt"][1], minlength=len(streets))
    np.minimum.at(placed.dealt[:, 0], streets.player, dealt)
    np.maximum.at(placed.dealt[:, 1], streets.player, dealt)
    placed.cards[:] = streets_dealt(batch)
    return placed


def no_streets(n: int) -> Placements:
    """What `n` players without streets show: nothing misplaced, no street, no cards."""
    return Placements(
        np.zeros(n, dtype=bool), np.array([NO_STREET] * n, dtype=np.int64).reshape(n, 2),
        np.zeros(n, dtype=np.int64),
    )  # fmt: skip


def _dealt_beyond(batch: HandBatch, dealt: Ints) -> Flags:
    """Per player: whether a street of theirs in Fantasyland deals more or fewer cards
    than the hand's profile deals there (`dealt`: the fewest and most a street of theirs
    deals, `placements`)."""
    players = batch.players
    profile = batch.hands.profile[players.hand]
    low, high = (limit[profile] for limit in batch.rules.open_face.fantasyland_dealt)
    has_streets = np.array([v.streets is not None for v in VARIANTS.values()])
    beyond = players.fantasyland & ((dealt[:, 0] < low) | (dealt[:, 1] > high))
    return beyond & has_streets[batch.hands.game[players.hand]]


def _placement_problems(batch: HandBatch, limits: bool = True) -> dict[int, str]:
    """The players whose placements `check_placements` finds wrong, with the first reason;
    without `limits`, a Fantasyland street may deal any number of cards."""
    players = batch.players
    streets = players.streets
    parts, n_streets = streets.parts, len(streets)
    rows = [parts[name] for name in ROW_NAMES]
    row_codes = np.concatenate([codes for codes, _ in rows])
    row_street = np.concatenate([street for _, street in rows])
    dealt = np.bincount(parts["dealt"][1], minlength=n_streets)
    placed = np.bincount(row_street, minlength=n_streets)
    discard = np.bincount(parts["discard"][1], minlength=n_streets)
    # A street deals distinct cards, and places or discards each of them.
    dealt_sum = _card_sums(*parts["dealt"], n_streets)
    kept_sum = _card_sums(
        np.concatenate([row_codes, parts["discard"][0]]),
        np.concatenate([row_street, parts["discard"][1]]),
        n_streets,
    )
    street_bad = ~(
        _distinct(dealt, dealt_sum) & (dealt == placed + discard) & (dealt_sum == kept_sum)
    )
    problems: dict[int, str] = {}
    for s in np.flatnonzero(street_bad).tolist():
        problems.setdefault(
            int(streets.player[s]),
            "a street's dealt cards are not the ones it placed and discarded",
        )
    rule_bad = _street_sizes(batch, streets.player, dealt, placed, discard, limits)
    for p, why in rule_bad.items():
        problems.setdefault(p, why)
    for p, why in _rows_placed(batch).items():
        problems.setdefault(p, why)
    return problems


def _rows_placed(batch: HandBatch) -> dict[int, str]:
    """Players with streets whose final rows are not what the streets placed in them,
    with why. The final rows hold distinct cards (ingest quarantines a card held twice),
    so equal counts and sums of `_card_sums` mean the same cards."""
    players, streets = batch.players, batch.players.streets
    n = len(players)
    with_streets = streets.per_player(n) > 0
    found: dict[int, str] = {}
    for row in ROW_NAMES:
        codes, street = streets.parts[row]
        owner = streets.player[street]
        count, placed = np.bincount(owner, minlength=n), _card_sums(codes, owner, n)
        final = players.setting[row]
        held = _BITS[final].sum(axis=1, dtype=np.uint64)
        for p in np.flatnonzero(with_streets & ((count != final.shape[1]) | (placed != held))):
            why = f"the {row} row is not the cards its streets placed there"
            found.setdefault(int(p), why)
    return found


def _street_sizes(
    batch: HandBatch, street_player: Ints, dealt: Ints, placed: Ints, discard: Ints, limits: bool
) -> dict[int, str]:
    """Players whose streets do not deal, place and discard as their game does (in or out
    of Fantasyland: without `limits`, dealing any number of cards there), with why."""
    players = batch.players
    game = batch.hands.game[players.hand]
    count = np.bincount(street_player, minlength=len(players))
    numbers = players.streets.numbers()
    fantasy_limits = batch.rules.open_face.fantasyland_dealt  # per profile
    found: dict[int, str] = {}
    for code, variant in enumerate(VARIANTS.values()):
        rule, name = variant.streets, variant.name
        if rule is None:
            continue
        ours = game == code
        mine: slice | Ints = slice(None)  # the streets of this game's players
        if not ours[street_player].all():
            mine = np.flatnonzero(ours[street_player])
        number = numbers[mine]
        if len(number) == 0:
            continue
        deals, places, discards = dealt[mine], placed[mine], discard[mine]
        owner = street_player[mine]
        in_fantasyland = players.fantasyland[owner]
        low, high = (limit[batch.hands.profile[players.hand[owner]]] for limit in fantasy_limits)
        want_dealt = np.where(number == 0, rule.first, rule.later_dealt)
        want_placed = np.where(number == 0, rule.first, rule.later_placed)
        usual = (deals == want_dealt) & (places == want_placed)
        fantasy = (places == 13) & (((deals >= low) & (deals <= high)) | (not limits))
        kept = discards == deals - places
        for s in np.flatnonzero(~(kept & np.where(in_fantasyland, fantasy, usual)))[::-1].tolist():
            found[int(owner[s])] = (  # the first wrong street of each wins
                f"street {number[s] + 1} deals {deals[s]} cards, places {places[s]} and "
                f"discards {discards[s]}, which {name} does not"
                + (" in Fantasyland" if in_fantasyland[s] else "")
            )
        want = np.where(players.fantasyland, 1, 1 + rule.later)
        for p in np.flatnonzero(ours & (count > 0) & (count != want)).tolist():
            found.setdefault(p, f"{count[p]} streets, where a {name} hand has {want[p]}")
    return found
