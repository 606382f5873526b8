"""`handaudit report fairness`: was the deal fair? Counts from DuckDB, tests from
`core.fairness`, one row per test, flagged at a family-wise false-alarm rate.

DuckDB counts what each group (each seat, or with --player the player and the other
players; the boards) was dealt, how the hands cut the deck, the deal order of open-face
players and each player's premium outcomes (`sql/fairness/`); Python only makes the tests.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.core import fairness
from pipeline.core.cards import JOKER, N_STANDARD
from pipeline.core.fairness import Deals, Verdict
from pipeline.core.games import VARIANTS
from pipeline.outputs import fairness_deals
from pipeline.outputs.dealt import BOARDS_GROUP, PLAYER, Dealt, dealt_by_game
from pipeline.outputs.fairness_deals import Sequence
from pipeline.outputs.fairness_rows import (
    CATEGORIES,
    FairnessTest,
    Kind,
    scope_of,
    weights,
)
from pipeline.outputs.registry import FAIRNESS
from pipeline.outputs.reports import (
    SQL_DIR,
    Filters,
    ReportError,
    ReportResult,
    bind,
    period,
)
from pipeline.storage.store import open_audit

COUNTS = SQL_DIR / "fairness"
PREMIUM = "premium: "  # how the players' tests are named
SPEC = FAIRNESS
COLUMNS = pa.schema(
    [
        ("test", pa.string()),
        ("scope", pa.string()),
        ("hands", pa.int64()),
        ("cards", pa.int64()),
        ("statistic", pa.float64()),
        ("df", pa.int64()),
        ("p_value", pa.float64()),
        ("flagged", pa.bool_()),
        ("verdict", pa.string()),
        ("detail", pa.string()),
    ]
)


@dataclass(frozen=True)
class Counts:
    """What DuckDB counted (`sql/fairness/`)."""

    cuts: pa.Table
    cards: pa.Table
    order: pa.Table
    premium: pa.Table
    premium_order: pa.Table
    by_player: bool
    sequence: Sequence | None = None  # the hands in table order (none with --player)
    places: pa.Table | None = None  # open-face cards by seat and place dealt (the same)
    place_cuts: pa.Table | None = None


def read_counts(db: Path, filters: Filters) -> tuple[Counts, str]:
    """The counts of the hands the filters choose, and the period they cover."""
    with open_audit(db) as con:
        bind(con, filters)
        try:
            con.execute((COUNTS / "views.sql").read_text())
            con.execute((COUNTS / "outcomes.sql").read_text())
            cuts, cards, order, premium, premium_order = (
                con.sql((COUNTS / f"{name}.sql").read_text()).to_arrow_table()
                for name in ("cuts", "cards", "order", "premium", "premium_order")
            )
            by_player = filters.player_id is not None
            deals = [
                con.sql((COUNTS / f"{name}.sql").read_text()).to_arrow_table()
                for name in ([] if by_player else ["sequence", "masks", "places", "place_cuts"])
            ]
        except duckdb.Error as error:
            raise ReportError(f"The fairness report failed on {db}: {error}") from None
        covered = period(con, filters)
    # Once the database is closed: while it is open its threads slow numpy down severalfold.
    sequence = Sequence.read(*deals[:2]) if deals else None
    places, place_cuts = deals[2:] if deals else (None, None)
    counts = Counts(
        cuts, cards, order, premium, premium_order, by_player, sequence, places, place_cuts
    )
    return counts, covered


def fairness_report(db: Path, filters: Filters, alpha: float = 0.01) -> ReportResult:
    counts, covered = read_counts(db, filters)
    return report_of(counts, filters, alpha, covered)


def report_of(counts: Counts, filters: Filters, alpha: float, covered: str) -> ReportResult:
    """Every test of the counts, flagged by Holm at family-wise rate `alpha`."""
    tests = [
        *deal_tests(counts, filters),
        *order_tests(counts, filters),
        *memory_tests(counts, filters),
        *premium_tests(counts, filters),
    ]
    shares, untested = weights(tests)
    flags = fairness.holm([t.verdict.p_value for t in tests], alpha, shares, untested)
    rows = pa.Table.from_pylist(
        [_row(t, f) for t, f in zip(tests, flags, strict=True)], schema=COLUMNS
    )
    made = sum(f is not None for f in flags)
    totals = {
        "tests": made,
        "insufficient": len(tests) - made,
        "flagged": sum(bool(f) for f in flags),
        "alpha": f"{alpha:g}",
    }
    generated = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return ReportResult(SPEC, filters, rows, covered, generated, totals)


def _row(test: FairnessTest, flagged: bool | None) -> dict[str, object]:
    v = test.verdict
    return {
        "test": test.test,
        "scope": test.scope,
        "hands": test.hands,
        "cards": test.cards,
        "statistic": None if v.statistic is None else round(v.statistic, 4),
        "df": v.df,
        "p_value": None if v.p_value is None else float(f"{v.p_value:.4g}"),
        "flagged": flagged,
        "verdict": v.insufficient or ("FLAGGED" if flagged else "consistent with a fair deal"),
        "detail": test.detail,
    }


def deal_tests(counts: Counts, filters: Filters) -> Iterator[FairnessTest]:
    """Per game: suit, rank and card by seat (or by player) over the standard cards, given
    where the jokers went; and the jokers by seat where the game deals them. Then, over
    the games together (their hands are independent deals of one deck): the most extreme
    cell and each seat alone (`focused_tests`)."""
    by = "player" if counts.by_player else "seat"
    pooled: dict[str, list[tuple[Deals, npt.NDArray[np.float64]]]] = {}
    games = []
    joker_deck = np.zeros(2)
    for dealt in dealt_by_game(counts.cuts, counts.cards, counts.by_player):
        games.append(dealt)
        scope = scope_of(dealt.game.name, filters.table_id, filters.player_id)
        standard, deals = dealt.standard, dealt.deals()
        for category, member, labels in CATEGORIES:
            observed, in_deck = standard @ member, member.sum(axis=0)
            pooled.setdefault(category, []).append((deals, observed))
            verdict = _focused(fairness.partition_test(deals, observed, in_deck), counts.by_player)
            detail = _furthest_cell(deals, observed, in_deck, labels, verdict)
            cards = int(standard[:-1].sum())
            yield FairnessTest(f"{category} by {by}", scope, dealt.hands, cards, verdict, detail)
        if dealt.game.jokers:
            deals, observed, joker_deck = _jokers(dealt)
            pooled.setdefault("jokers", []).append((deals, observed))
            yield _joker_test(dealt, f"jokers by {by}", scope, counts.by_player)
    decks = {c: (m.sum(axis=0), labels) for c, m, labels in CATEGORIES}
    decks["jokers"] = (joker_deck, _JOKER_LABELS)
    for category, parts in pooled.items():
        deals, observed = Deals.pooled(parts)
        in_deck, labels = decks[category]
        dealing = [d for d in games if d.game.jokers or category != "jokers"]
        names = " + ".join(d.game.name for d in dealing)
        scope = scope_of(names, filters.table_id, filters.player_id)
        count = sum(d.hands for d in dealing)
        yield from focused_tests(
            f"{category} by {by}", scope, count, deals, observed, in_deck, labels, counts.by_player
        )


def focused_tests(
    name: str,
    scope: str,
    hands: int,
    deals: Deals,
    observed: npt.NDArray[np.float64],
    in_deck: npt.NDArray[np.float64],
    labels: tuple[str, ...],
    by_player: bool = False,
    kind: Kind | None = None,
) -> Iterator[FairnessTest]:
    """Beside an omnibus test, the tests with power where a bias is concentrated: the most
    extreme cell (Bonferroni over the cells tested), and each group alone (none when the
    test is of a `kind` of its own: positions)."""
    only = PLAYER if by_player else None
    cell = fairness.cell_test(deals, observed, in_deck, favoured=kind is None, only=only)
    verdict, z = _focused(cell.verdict, by_player), cell.z
    merged, counted = fairness.merge_small(deals, observed, in_deck)
    expected = fairness.expected(merged, in_deck)
    cards = int(observed[:-1].sum())
    if verdict.insufficient:
        detail = _furthest_cell(deals, observed, in_deck, labels, verdict)
    else:
        g, c = cell.furthest
        detail = (
            f"{merged.groups[g]}, {labels[c]}: {z[g, c]:+.1f} sd ({counted[g, c]:,.0f} dealt, "
            f"{expected[g, c]:,.1f} expected); the "
            + ("most favoured" if kind is None else "most extreme")
            + f" of {cell.tested:,} cells"
        )
    yield FairnessTest(
        f"{name}: most {'extreme' if kind else 'favoured'} cell",
        scope,
        hands,
        cards,
        verdict,
        detail,
        kind or Kind.cell,
    )
    if kind is not None:
        return
    for g, each in enumerate(fairness.group_tests(deals, observed, in_deck)):
        group = merged.groups[g]
        if by_player and group != PLAYER:
            continue
        if each.insufficient:
            detail = f"{expected[g].min():,.1f} expected in its smallest cell; 5 needed"
        else:
            k = int(np.argmax(np.abs(z[g, :1] if len(labels) == 2 else z[g])))
            detail = (
                f"furthest: {labels[k]} {counted[g, k]:,.0f} dealt, "
                f"{expected[g, k]:,.1f} expected ({z[g, k]:+.1f} sd)"
            )
        size = int(counted[g].sum())
        yield FairnessTest(f"{name}: {group}", scope, hands, size, each, detail, Kind.seat)


def memory_tests(counts: Counts, filters: Filters) -> Iterator[FairnessTest]:
    """The tests of whole deals in each table's order (`fairness_deals`): between
    consecutive hands and repeats over the games together, board places and the last
    seat dealt per game. None with --player: they ask of the deal, not of a player."""
    seq = counts.sequence
    if seq is None or len(seq.table) == 0:
        return
    games = [name for name in VARIANTS if seq.of_game(name).any()]
    scope = scope_of(" + ".join(games), filters.table_id)
    yield from fairness_deals.between_tests(seq, scope)
    yield from fairness_deals.repeat_tests(seq, scope)
    for game in games:
        scope = scope_of(game, filters.table_id)
        yield from fairness_deals.position_tests(seq, game, scope, focused_tests)
        if counts.places is not None and counts.place_cuts is not None:
            yield from fairness_deals.dealt_place_tests(
                counts.places, counts.place_cuts, game, scope, focused_tests
            )


def card_grid(dealt: Dealt) -> tuple[npt.NDArray[np.float64], ...]:
    """Each group's count of each standard card (the rest's row left out): observed,
    expected, and their difference in standard deviations (0 where too few to expect)."""
    standard, deals = dealt.standard, dealt.deals()
    in_deck = np.ones(N_STANDARD)
    expected = fairness.expected(deals, in_deck)
    return standard[:-1], expected[:-1], fairness.standardized(deals, standard, in_deck)[:-1]


_JOKER_LABELS = ("jokers", "standard cards")


def _jokers(dealt: Dealt) -> tuple[Deals, npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """How the hands cut a deck of 54 among the players, and each player's jokers and
    standard cards. Jokers go to players only: a hand deals its players from the whole
    deck and its boards from the standard cards left, so each of a player's cards is any
    of the deck's alike, a joker included; the boards join the rest. (Boards dealt first
    would leave a player 7 of the 44 other cards: 14/44 jokers a hand, not 14/54. The
    examples deal players first: 0.256 jokers a player-hand in their clean set.)"""
    game = dealt.game
    players = [i for i, g in enumerate(dealt.codes[:-1]) if g != BOARDS_GROUP]
    rows = [*players, len(dealt.codes) - 1]
    jokers = dealt.cards[rows, JOKER]
    observed = np.stack([jokers, dealt.cards[rows].sum(axis=1) - jokers], axis=1)
    in_deck = np.array([game.jokers, N_STANDARD], dtype=np.float64)
    observed[-1] = dealt.hands * in_deck - observed[:-1].sum(axis=0)
    return dealt.deals(N_STANDARD + game.jokers, keep=players), observed, in_deck


def _joker_test(dealt: Dealt, name: str, scope: str, by_player: bool) -> FairnessTest:
    """The jokers by seat (`_jokers`)."""
    deals, observed, in_deck = _jokers(dealt)
    verdict = _focused(fairness.partition_test(deals, observed, in_deck), by_player)
    detail = _furthest_cell(deals, observed, in_deck, _JOKER_LABELS, verdict)
    return FairnessTest(name, scope, dealt.hands, int(observed[:-1].sum()), verdict, detail)


def _focused(verdict: Verdict, by_player: bool) -> Verdict:
    """With --player, a test whose player had to be merged with another group (too few
    cards to expect) says nothing of the player: insufficient data."""
    if by_player and verdict.p_value is not None and PLAYER not in verdict.groups:
        return Verdict(verdict.sample, insufficient="insufficient data")
    return verdict


def _furthest_cell(
    deals: Deals,
    observed: npt.NDArray[np.float64],
    in_deck: npt.NDArray[np.float64],
    labels: tuple[str, ...],
    verdict: Verdict,
) -> str:
    """The group and category furthest from what a fair deal expects, in standard
    deviations (a group's own variance for that category)."""
    expected = fairness.expected(deals, in_deck)
    z = fairness.standardized(deals, observed, in_deck)[:-1]
    if verdict.insufficient or not z.size:
        fewest = expected[:-1].min() if len(expected) > 1 else 0.0
        return f"{fewest:,.1f} expected in the smallest cell; {fairness.MIN_EXPECTED:g} needed"
    if len(labels) == 2:  # two categories deviate alike: name the first (the jokers)
        z = z[:, :1]
    g, c = np.unravel_index(np.argmax(np.abs(z)), z.shape)
    return (
        f"furthest: {deals.groups[g]} dealt {labels[c]} {observed[g, c]:,.0f} times, "
        f"{expected[g, c]:,.1f} expected ({z[g, c]:+.1f} sd)"
    )


def order_tests(counts: Counts, filters: Filters) -> Iterator[FairnessTest]:
    """Per open-face game, suits and ranks: consecutive cards dealt to one player of one
    category, against their exact mean and variance given the cards dealt."""
    order = counts.order
    for name in VARIANTS:
        for kind in ("suit", "rank"):
            rows = order.filter(
                pc.and_(pc.equal(order["variant"], name), pc.equal(order["kind"], kind))
            )
            if rows.num_rows == 0:
                continue
            column = {c: rows[c].to_numpy().astype(np.float64) for c in rows.column_names[2:]}
            mean, variance = fairness.order_moments(
                *(column[c] for c in ("n", "s2", "s3", "s4", "q"))
            )
            players = column["players"]
            pairs = int(players @ (column["n"] - 1))
            same, expected = float(column["same"].sum()), float(players @ mean)
            verdict = fairness.order_test(pairs, same, expected, float(players @ variance))
            detail = (
                f"{same:,.0f} of {pairs:,} consecutive pairs of one {kind}, "
                f"{expected:,.1f} expected"
            )
            yield FairnessTest(
                f"deal order: {kind}",
                scope_of(name, filters.table_id, filters.player_id),
                int(players.sum()),
                int(players @ column["n"]),
                verdict,
                detail,
                Kind.positions,
            )


def premium_tests(counts: Counts, filters: Filters) -> Iterator[FairnessTest]:
    """Per player: their premium outcomes against the other players of the same hands
    (`fairness.premium_evidence`). Players whose hands in doubt leave fewer than
    MIN_EXPECTED outcomes to expect are one row per outcome."""
    totals, order = counts.premium, counts.premium_order
    starts = _runs(order)
    outcomes, players = (pc.take(order[c], starts).to_pylist() for c in ("outcome", "player_id"))
    keys = zip(outcomes, players, strict=True)
    chance, hit = order["chance"].to_numpy(), order["hit"].to_numpy(zero_copy_only=False)
    p_values = dict(zip(keys, fairness.premium_evidence(chance, hit, starts), strict=True))
    untested: dict[str, list[int]] = {}
    for row in totals.to_pylist():
        outcome, player, hands, hits = row["outcome"], row["player_id"], row["hands"], row["hits"]
        if (row["share_in_doubt"] or 0.0) < fairness.MIN_EXPECTED:
            untested.setdefault(outcome, []).append(hands)
            continue
        share = row["share"]
        verdict = Verdict(hands, hits / share, None, float(p_values[outcome, player]))
        seats, others = row["others_hands"], row["others_hits"]
        detail = (
            f"{hits:,} in {hands:,} hands ({hits / hands:.2%}), {share:,.1f} their fair share; "
            f"the other players of the same hands {others / max(seats, 1):.2%} "
            f"({others:,} in {seats:,})"
        )
        scope = scope_of(f"player {player}", filters.table_id)
        yield FairnessTest(f"{PREMIUM}{outcome}", scope, hands, None, verdict, detail, Kind.premium)
    for outcome, sizes in untested.items():
        detail = f"each player needs {fairness.MIN_EXPECTED:g} to expect; these had fewer hands"
        who = f"{len(sizes):,} player" + ("s" if len(sizes) > 1 else "")
        verdict = Verdict(sum(sizes), insufficient="insufficient data")
        scope = scope_of(who, filters.table_id)
        yield FairnessTest(
            f"{PREMIUM}{outcome}",
            scope,
            verdict.sample,
            None,
            verdict,
            detail,
            Kind.premium,
            len(sizes),
        )


def _runs(premium: pa.Table) -> npt.NDArray[np.int64]:
    """Where each player's rows of one outcome begin (the rows come sorted by outcome and
    player)."""
    if premium.num_rows == 0:
        return np.zeros(0, dtype=np.int64)
    keys = [
        pc.dictionary_encode(premium[c].combine_chunks()).indices for c in ("outcome", "player_id")
    ]
    outcome, player = (np.asarray(k.to_numpy(), dtype=np.int64) for k in keys)
    key = outcome * (int(player.max()) + 1) + player
    return np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
