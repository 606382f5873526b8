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
from pipeline.core.cards import CANONICAL, JOKER, N_STANDARD
from pipeline.core.fairness import Deals, Verdict
from pipeline.core.games import VARIANTS
from pipeline.helpers.encoding import (
    N_RANKS,
    N_SUITS,
    rank_of,
    suit_of,
)
from pipeline.outputs.dealt import BOARDS_GROUP, PLAYER, Dealt, dealt_by_game
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
SUITS = ("clubs", "diamonds", "hearts", "spades")
RANK_NAMES = (
    "twos",
    "threes",
    "fours",
    "fives",
    "sixes",
    "sevens",
    "eights",
    "nines",
    "tens",
    "jacks",
    "queens",
    "kings",
    "aces",
)
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
class FairnessTest:
    test: str
    scope: str
    hands: int
    cards: int | None
    verdict: Verdict
    detail: str
    untested: int = 0  # players this row stands for, too few hands to test (premium)


@dataclass(frozen=True)
class Counts:
    """What DuckDB counted (`sql/fairness/`)."""

    cuts: pa.Table
    cards: pa.Table
    order: pa.Table
    premium: pa.Table
    premium_order: pa.Table
    by_player: bool


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
        except duckdb.Error as error:
            raise ReportError(f"The fairness report failed on {db}: {error}") from None
        counts = Counts(
            cuts, cards, order, premium, premium_order, by_player=filters.player_id is not None
        )
        return counts, period(con, filters)


def fairness_report(db: Path, filters: Filters, alpha: float = 0.01) -> ReportResult:
    counts, covered = read_counts(db, filters)
    return report_of(counts, filters, alpha, covered)


def report_of(counts: Counts, filters: Filters, alpha: float, covered: str) -> ReportResult:
    """Every test of the counts, flagged by Holm at family-wise rate `alpha`."""
    tests = [
        *deal_tests(counts, filters),
        *order_tests(counts, filters),
        *premium_tests(counts, filters),
    ]
    weights, untested = _weights(tests)
    flags = fairness.holm([t.verdict.p_value for t in tests], alpha, weights, untested)
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


def _weights(tests: list[FairnessTest]) -> tuple[list[float], float]:
    """Each test's share of the false-alarm rate, and the untested players': half for the
    deal's tests, half for the players (each player alike, the untested too), so that
    thousands of players do not drown the deal's few tests; all to one kind when the
    other has none."""
    players = [t.test.startswith(PREMIUM) for t in tests]
    made = sum(not p and t.verdict.p_value is not None for p, t in zip(players, tests, strict=True))
    people = sum(p and t.verdict.p_value is not None for p, t in zip(players, tests, strict=True))
    untested = sum(t.untested for t in tests)
    deal_share = 0.5 if made and (people + untested) else 1.0 if made else 0.0
    per_deal = deal_share / max(made, 1)
    per_player = (1.0 - deal_share) / max(people + untested, 1)
    weights = [per_player if p else per_deal for p in players]
    return weights, per_player * untested


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
    where the jokers went; and the jokers by seat where the game deals them."""
    by = "player" if counts.by_player else "seat"
    for dealt in dealt_by_game(counts.cuts, counts.cards, counts.by_player):
        scope = _scope(dealt.game.name, filters.table_id, filters.player_id)
        standard, deals = dealt.standard, dealt.deals()
        for category, member, labels in _CATEGORIES:
            observed, in_deck = standard @ member, member.sum(axis=0)
            verdict = _focused(fairness.partition_test(deals, observed, in_deck), counts.by_player)
            detail = _furthest_cell(deals, observed, in_deck, labels, verdict)
            cards = int(standard[:-1].sum())
            yield FairnessTest(f"{category} by {by}", scope, dealt.hands, cards, verdict, detail)
        if dealt.game.jokers:
            yield _joker_test(dealt, f"jokers by {by}", scope, counts.by_player)


def card_grid(dealt: Dealt) -> tuple[npt.NDArray[np.float64], ...]:
    """Each group's count of each standard card (the rest's row left out): observed,
    expected, and their difference in standard deviations (0 where too few to expect)."""
    standard, deals = dealt.standard, dealt.deals()
    in_deck = np.ones(N_STANDARD)
    expected = fairness.expected(deals, in_deck)
    return standard[:-1], expected[:-1], _standardized(deals, standard, in_deck)[:-1]


def _joker_test(dealt: Dealt, name: str, scope: str, by_player: bool) -> FairnessTest:
    """The jokers by seat. Jokers go to players only: a hand deals its players from the
    whole deck and its boards from the standard cards left, so each of a player's cards is
    any of the deck's alike, a joker included; the boards join the rest. (Boards dealt
    first would leave a player 7 of the 44 other cards: 14/44 jokers a hand, not 14/54.
    The examples deal players first: 0.256 jokers a player-hand in their clean set.)"""
    game = dealt.game
    deck = N_STANDARD + game.jokers
    players = [i for i, g in enumerate(dealt.codes[:-1]) if g != BOARDS_GROUP]
    rows = [*players, len(dealt.codes) - 1]
    jokers = dealt.cards[rows, JOKER]
    observed = np.stack([jokers, dealt.cards[rows].sum(axis=1) - jokers], axis=1)
    in_deck = np.array([game.jokers, N_STANDARD], dtype=np.float64)
    observed[-1] = dealt.hands * in_deck - observed[:-1].sum(axis=0)
    deals = dealt.deals(deck, keep=players)
    verdict = _focused(fairness.partition_test(deals, observed, in_deck), by_player)
    detail = _furthest_cell(deals, observed, in_deck, ("jokers", "standard cards"), verdict)
    return FairnessTest(name, scope, dealt.hands, int(observed[:-1].sum()), verdict, detail)


def _focused(verdict: Verdict, by_player: bool) -> Verdict:
    """With --player, a test whose player had to be merged with another group (too few
    cards to expect) says nothing of the player: insufficient data."""
    if by_player and verdict.p_value is not None and PLAYER not in verdict.groups:
        return Verdict(verdict.sample, insufficient="insufficient data")
    return verdict


def _membership(of: npt.NDArray[np.int64], size: int) -> npt.NDArray[np.float64]:
    """(52, size): 1 where a standard card belongs to a category."""
    member = np.zeros((N_STANDARD, size))
    member[np.arange(N_STANDARD), of] = 1.0
    return member


_CODES = np.arange(N_STANDARD)
_CATEGORIES = (
    ("suit", _membership(suit_of(_CODES), N_SUITS), SUITS),
    ("rank", _membership(rank_of(_CODES), N_RANKS), RANK_NAMES),
    ("card", np.eye(N_STANDARD), CANONICAL[:N_STANDARD]),
)


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
    z = _standardized(deals, observed, in_deck)[:-1]
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


def _standardized(
    deals: Deals, observed: npt.NDArray[np.float64], in_deck: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    """(observed - expected) over each cell's own standard deviation under a fair deal;
    0 where fewer than MIN_EXPECTED are expected."""
    expected = fairness.expected(deals, in_deck)
    b = in_deck / deals.deck
    sd = np.sqrt(deals.deck**2 / (deals.deck - 1) * np.outer(np.diag(deals.spread), b * (1 - b)))
    with np.errstate(divide="ignore", invalid="ignore"):
        shown = (expected >= fairness.MIN_EXPECTED) & (sd > 0)
        return np.where(shown, (observed - expected) / sd, 0.0)


def _scope(who: str, table_id: str | None, player_id: str | None = None) -> str:
    """What a test covers: a game or players, at the table and of the player filtered."""
    parts = [who]
    if table_id is not None:
        parts.append(f"table {table_id}")
    if player_id is not None:
        parts.append(f"player {player_id}")
    return ", ".join(parts)


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
                _scope(name, filters.table_id, filters.player_id),
                int(players.sum()),
                int(players @ column["n"]),
                verdict,
                detail,
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
        scope = _scope(f"player {player}", filters.table_id)
        yield FairnessTest(f"{PREMIUM}{outcome}", scope, hands, None, verdict, detail)
    for outcome, sizes in untested.items():
        detail = f"each player needs {fairness.MIN_EXPECTED:g} to expect; these had fewer hands"
        who = f"{len(sizes):,} player" + ("s" if len(sizes) > 1 else "")
        verdict = Verdict(sum(sizes), insufficient="insufficient data")
        scope = _scope(who, filters.table_id)
        yield FairnessTest(
            f"{PREMIUM}{outcome}", scope, verdict.sample, None, verdict, detail, len(sizes)
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
