"""Checks the Chinese family adds: the recorded foul, each row's royalty, declared naturals.

Detection over whole columns; only the divergences found become sentences.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from pipeline.batch import HandBatch
from pipeline.cards import try_parse
from pipeline.checks.findings import DivergenceCheck, Findings
from pipeline.checks.outcome import row_place
from pipeline.columns import children, field
from pipeline.games import ROW_NAMES, VARIANTS
from pipeline.games.chinese import NATURAL, NATURALS
from pipeline.games.open_face import STREETS
from pipeline.scoring import ChineseScore

Ints = npt.NDArray[np.int64]
Codes = npt.NDArray[np.int8]
Flags = npt.NDArray[np.bool_]


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
    differs = players.has_fantasyland_next & (players.fantasyland_next != scored.fantasyland_next)
    for p in np.flatnonzero(differs & open_face_hands(batch)[hand]).tolist():
        earns = bool(scored.fantasyland_next[p])
        findings.add(
            int(hand[p]),
            DivergenceCheck.fantasyland,
            f"seat {seat[p]} {'earns' if earns else 'does not earn'} Fantasyland for the next "
            f"hand, recorded as {'not earned' if earns else 'earned'}",
            seat=int(seat[p]),
            expected=str(earns).lower(),
            recorded=str(not earns).lower(),
        )
    check_placements(batch, findings)
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


def open_face_hands(batch: HandBatch) -> Flags:
    """Per hand: whether its game is an open-face one."""
    kinds = np.array([g.family == "open_face" for g in VARIANTS.values()])
    return kinds[batch.hands.game]


def _street_cards(batch: HandBatch) -> tuple[Ints, dict[str, tuple[Codes, Ints]]]:
    """Each street's player, and per part (dealt, rows, discard) its cards' codes with the
    street each belongs to."""
    streets, player = children(batch.players.streets)
    parts = {}
    for name in ("dealt", *ROW_NAMES, "discard"):
        texts, street = children(field(streets, name))
        parts[name] = (try_parse(texts), street)
    return player, parts


def streets_dealt(batch: HandBatch) -> Ints:
    """Per player: the cards dealt over all streets of the hand (0 without streets)."""
    player, parts = _street_cards(batch)
    _, street = parts["dealt"]
    return np.bincount(player[street], minlength=len(batch.players))


def _same_multisets(a: tuple[Codes, Ints], b: tuple[Codes, Ints], owners: int) -> Flags:
    """Per owner: whether the two lists of codes hold the same codes as many times each."""
    (a_codes, a_owner), (b_codes, b_owner) = a, b
    same = np.bincount(a_owner, minlength=owners) == np.bincount(b_owner, minlength=owners)
    keep_a, keep_b = same[a_owner], same[b_owner]
    a_order = np.lexsort((a_codes[keep_a], a_owner[keep_a]))
    b_order = np.lexsort((b_codes[keep_b], b_owner[keep_b]))
    differs = a_codes[keep_a][a_order] != b_codes[keep_b][b_order]
    same[a_owner[keep_a][a_order][differs]] = False
    return same


def check_placements(batch: HandBatch, findings: Findings) -> None:
    """chinese-family.md section 5: street sizes, every dealt card placed or discarded on
    its street, and the final rows the placements of all streets."""
    players = batch.players
    street_player, parts = _street_cards(batch)
    n_streets = len(street_player)
    size = {name: np.bincount(s, minlength=n_streets) for name, (_, s) in parts.items()}
    placed = size["top"] + size["middle"] + size["bottom"]
    kept = (
        np.concatenate([parts[n][0] for n in (*ROW_NAMES, "discard")]),
        np.concatenate([parts[n][1] for n in (*ROW_NAMES, "discard")]),
    )
    street_bad = ~_same_multisets(parts["dealt"], kept, n_streets)
    problems: dict[int, str] = {}
    for s in np.flatnonzero(street_bad).tolist():
        problems.setdefault(
            int(street_player[s]), "a street's dealt cards are not the ones it placed and discarded"
        )
    rule_bad = _street_sizes(batch, street_player, size["dealt"], placed, size["discard"])
    for p, why in rule_bad.items():
        problems.setdefault(p, why)
    for row in ROW_NAMES:
        codes, street = parts[row]
        final = players.setting[row]
        with_streets = np.bincount(street_player, minlength=len(players)) > 0
        held = (final.reshape(-1), np.repeat(np.arange(len(players)), final.shape[1]))
        same = _same_multisets((codes, street_player[street]), held, len(players))
        for p in np.flatnonzero(with_streets & ~same).tolist():
            problems.setdefault(p, f"the {row} row is not the cards its streets placed there")
    for p, why in sorted(problems.items()):
        findings.add(
            int(players.hand[p]),
            DivergenceCheck.placement,
            f"seat {players.seat[p]}: {why}",
            seat=int(players.seat[p]),
        )


def _street_sizes(
    batch: HandBatch, street_player: Ints, dealt: Ints, placed: Ints, discard: Ints
) -> dict[int, str]:
    """Players whose streets do not deal, place and discard as their game does (in or out
    of Fantasyland), with why."""
    players = batch.players
    n = len(players)
    game = np.array(list(VARIANTS), dtype=object)[batch.hands.game][players.hand]
    count = np.bincount(street_player, minlength=n)
    number = np.arange(len(street_player)) - np.searchsorted(street_player, street_player)
    in_fantasyland = players.fantasyland[street_player]
    found: dict[int, str] = {}
    for name, rule in STREETS.items():
        ours = game == name
        want_dealt = np.where(number == 0, rule.first, rule.later_dealt)
        want_placed = np.where(number == 0, rule.first, rule.later_placed)
        usual = (dealt == want_dealt) & (placed == want_placed) & (discard == dealt - placed)
        low, high = rule.fantasyland_dealt
        fantasy = (dealt >= low) & (dealt <= high) & (placed == 13) & (discard == dealt - 13)
        wrong = ours[street_player] & ~np.where(in_fantasyland, fantasy, usual)
        for s in np.flatnonzero(wrong)[::-1].tolist():  # the first wrong street of each wins
            found[int(street_player[s])] = (
                f"street {number[s] + 1} deals {dealt[s]} cards, places {placed[s]} and "
                f"discards {discard[s]}, which {name} does not"
                + (" in Fantasyland" if in_fantasyland[s] else "")
            )
        want = np.where(players.fantasyland, 1, 1 + rule.later)
        for p in np.flatnonzero(ours & (count > 0) & (count != want)).tolist():
            found.setdefault(p, f"{count[p]} streets, where a {name} hand has {want[p]}")
    return found
