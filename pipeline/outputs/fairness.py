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
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.core import fairness
from pipeline.core.cards import CANONICAL, JOKER, N_STANDARD, RANKS
from pipeline.core.fairness import Deals, Verdict
from pipeline.core.games import LAYOUTS, VARIANTS, Family, Layout, Variant
from pipeline.helpers.packing import CARDS
from pipeline.outputs.reports import SQL_DIR, Filters, ReportResult, ReportSpec, bind, period
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
REST = "rest"  # the cards no group was dealt
_PLAYER = "player"  # the group of the player chosen by --player
KINDS = {
    "home_run": "Home Runs",
    "scoop": "scoops",
    "natural": "naturals",
    "fantasyland_entry": "Fantasyland entries",
}
NOTES = (
    "These tests look for what a fair shuffle would rarely make: a seat (or, with --player, "
    "a player) dealt some suits, ranks, cards or jokers more or less often than the deck "
    "allows; consecutive cards dealt to an open-face player that follow each other; a "
    "player with more Home Runs, scoops, naturals or Fantasyland entries than the other "
    "players of the same tables. A flag says a pattern is unlikely under a fair deal, at "
    "the family-wise false-alarm rate stated, over the tests made; it does not say how it "
    "came about. A clean report does not certify the shuffle: a weak bias, or one that "
    "ties cards to nothing counted here (a predictable but uniform shuffle, a leak of "
    "other players' cards), passes unseen. Tests with too few hands say 'insufficient "
    "data'."
)
SPEC = ReportSpec(
    name="fairness",
    title="Deal fairness",
    question="Was the deck fair, and was any seat or player favoured?",
    parameters="from_day, to_day (UTC dates, inclusive), table_id, player_id, variant; alpha",
    total={},
    headline=(
        "{tests} tests made ({insufficient} with insufficient data); {flagged} flagged at a "
        "family-wise false-alarm rate of {alpha}"
    ),
    sql="",
    notes=NOTES,
)
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
class Test:
    test: str
    scope: str
    hands: int
    cards: int | None
    verdict: Verdict
    detail: str


@dataclass(frozen=True)
class Counts:
    """What DuckDB counted (`sql/fairness/`)."""

    cuts: pa.Table
    cards: pa.Table
    order: pa.Table
    premium: pa.Table
    by_player: bool


def read_counts(db: Path, filters: Filters) -> tuple[Counts, str]:
    """The counts of the hands the filters choose, and the period they cover."""
    with open_audit(db) as con:
        bind(con, filters)
        con.execute(_HANDS_VIEW)
        con.execute(_PLAYERS_VIEW)
        con.register("premium_kinds", _premium_kinds())
        cuts, cards, order, premium = (
            con.sql((COUNTS / f"{name}.sql").read_text()).to_arrow_table()
            for name in ("cuts", "cards", "order", "premium")
        )
        counts = Counts(cuts, cards, order, premium, by_player=filters.player_id is not None)
        return counts, period(con, filters)


def fairness_report(db: Path, filters: Filters, alpha: float = 0.01) -> ReportResult:
    counts, covered = read_counts(db, filters)
    return tested(counts, filters, alpha, covered)


def tested(counts: Counts, filters: Filters, alpha: float, covered: str) -> ReportResult:
    """Every test of the counts, flagged by Holm at family-wise rate `alpha`."""
    tests = [
        *deal_tests(counts, filters),
        *order_tests(counts, filters),
        *premium_tests(counts, filters),
    ]
    flags = fairness.holm([t.verdict.p_value for t in tests], alpha)
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


def _row(test: Test, flagged: bool | None) -> dict[str, object]:
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


# The views the counts read: the hands the filters choose, and their players' dealt cards
# as card codes (52 a joker), open-face players' in the order dealt.
_IN_SCOPE = """(getvariable('player_id') IS NULL OR hand_id IN
    (SELECT hand_id FROM players WHERE player_id = getvariable('player_id')))"""
_CARD_CODE = "(instr('" + RANKS + "', c[1]) - 1) * 4 + instr('cdhs', c[2]) - 1"
_HANDS_VIEW = f"""
CREATE OR REPLACE TEMP VIEW fair_hands AS
SELECT hand_id, table_id, variant, {_IN_SCOPE} AS in_scope,
       CASE WHEN board_1 IS NOT NULL THEN list_transform(
           string_split(concat_ws(' ', board_1, board_2), ' '), lambda c: {_CARD_CODE})
       END AS board_cards
FROM hands
WHERE (getvariable('from_day') IS NULL OR day >= getvariable('from_day'))
  AND (getvariable('to_day') IS NULL OR day <= getvariable('to_day'))
  AND (getvariable('table_id') IS NULL OR table_id = getvariable('table_id'))
  AND (getvariable('variant') IS NULL OR variant = getvariable('variant'))"""


def _unpacked(alias: str, layout: Layout) -> str:
    cards = LAYOUTS[layout].cards_per_player
    code = CARDS.unpacked_sql(alias, "i", CARDS.words(cards))
    return f"list_transform(range({cards}), lambda i: {code}::INTEGER)"


_PLAYERS_VIEW = f"""
CREATE OR REPLACE TEMP VIEW fair_players AS
SELECT p.hand_id, h.table_id, h.variant, h.in_scope, p.seat, p.player_id, p."natural",
       p.fantasyland, p.fantasyland_next,
       CASE WHEN getvariable('player_id') IS NULL THEN 'seat ' || p.seat
            WHEN p.player_id = getvariable('player_id') THEN '{_PLAYER}'
            ELSE 'other players' END AS grp,
       s.hand_id IS NOT NULL AS dealt_in_order,
       CASE WHEN s.hand_id IS NOT NULL THEN list_transform(
                list_filter(s.placements, lambda x: (x // 100) % 10 = 0),
                lambda x: (x % 100)::INTEGER)
            WHEN r.hand_id IS NOT NULL THEN {_unpacked("r", Layout.taiwanese)}
            ELSE {_unpacked("f", Layout.chinese)} END AS cards
FROM players p
JOIN fair_hands h USING (hand_id)
LEFT JOIN row_values r USING (hand_id, seat)
LEFT JOIN family_row_values f USING (hand_id, seat)
LEFT JOIN player_streets s USING (hand_id, seat)"""


def _premium_kinds() -> pa.Table:
    """Which premium outcomes each game has (a Home Run; a scoop, a natural, a Fantasyland
    entry), and the name of the outcome they form together."""
    rows = []
    for name, game in VARIANTS.items():
        kinds = [
            game.family is Family.taiwanese and "home_run",
            game.family is not Family.taiwanese and "scoop",
            game.family is Family.chinese and "natural",
            game.open_face and "fantasyland_entry",
        ]
        chosen = [kind for kind in kinds if kind]
        outcome = " or ".join(KINDS[kind] for kind in chosen)
        rows += [{"variant": name, "kind": kind, "outcome": outcome} for kind in chosen]
    return pa.Table.from_pylist(rows)


@dataclass(frozen=True)
class Dealt:
    """What one game's hands dealt each group (the rest last), and how they cut the deck."""

    game: Variant
    groups: list[str]
    cuts: list[dict[str, Any]]
    hands: int
    cards: npt.NDArray[np.float64]  # (groups, 53): each card, a joker last; the rest's row 0

    @property
    def standard(self) -> npt.NDArray[np.float64]:
        """(groups, 52): the standard cards, the rest's row what the others left."""
        standard = self.cards[:, :N_STANDARD].copy()
        standard[-1] = self.hands - standard[:-1].sum(axis=0)
        return standard

    def deals(self) -> Deals:
        return _deals(N_STANDARD, self.groups, self.cuts, "standard")


def dealt_by_game(counts: Counts) -> Iterator[Dealt]:
    for name, game in VARIANTS.items():
        cuts = counts.cuts.filter(pc.equal(counts.cuts["variant"], name)).to_pylist()
        if cuts:
            groups = sorted({g for cut in cuts for g in cut["groups"]}, key=_group_order)
            groups.append(REST)
            hands = sum(cut["hands"] for cut in cuts)
            yield Dealt(game, groups, cuts, hands, _dealt(counts.cards, name, groups))


def deal_tests(counts: Counts, filters: Filters) -> Iterator[Test]:
    """Per game: suit, rank and card by seat (or by player) over the standard cards, given
    where the jokers went; and the jokers by seat where the game deals them."""
    by = "player" if counts.by_player else "seat"
    for dealt in dealt_by_game(counts):
        scope = _scope(dealt.game.name, filters)
        standard, deals = dealt.standard, dealt.deals()
        for category, member, labels in _CATEGORIES:
            observed, in_deck = standard @ member, member.sum(axis=0)
            verdict = _focused(fairness.partition_test(deals, observed, in_deck), counts)
            detail = _largest(deals, observed, in_deck, labels, verdict)
            cards = int(standard[:-1].sum())
            yield Test(f"{category} by {by}", scope, dealt.hands, cards, verdict, detail)
        if dealt.game.jokers:
            yield _joker_test(dealt, f"jokers by {by}", scope, counts.by_player)


def card_grid(dealt: Dealt) -> tuple[npt.NDArray[np.float64], ...]:
    """Each group's count of each standard card (the rest's row left out): observed,
    expected, and their difference in standard deviations (0 where too few to expect)."""
    standard, deals = dealt.standard, dealt.deals()
    in_deck = np.ones(N_STANDARD)
    expected = fairness.expected(deals, in_deck)
    return standard[:-1], expected[:-1], _standardized(deals, standard, in_deck)[:-1]


def _joker_test(dealt: Dealt, name: str, scope: str, by_player: bool) -> Test:
    """The jokers among the cards the boards leave (jokers are dealt to players only)."""
    game, groups = dealt.game, dealt.groups
    deck = N_STANDARD - game.boards * game.board_size + game.jokers
    players = [i for i, g in enumerate(groups) if g != _BOARDS]
    jokers = dealt.cards[players, JOKER]
    observed = np.stack([jokers, dealt.cards[players].sum(axis=1) - jokers], axis=1)
    in_deck = np.array([game.jokers, deck - game.jokers], dtype=np.float64)
    observed[-1] = dealt.hands * in_deck - observed[:-1].sum(axis=0)
    deals = _deals(deck, [groups[i] for i in players], dealt.cuts, "dealt")
    verdict = fairness.partition_test(deals, observed, in_deck)
    if by_player:
        verdict = _focused(verdict, by_player)
    detail = _largest(deals, observed, in_deck, ("jokers", "standard cards"), verdict)
    return Test(name, scope, dealt.hands, int(observed[:-1].sum()), verdict, detail)


_BOARDS = "boards"


def _focused(verdict: Verdict, counts: Counts | bool) -> Verdict:
    """With --player, a test whose player had to be merged with another group (too few
    cards to expect) says nothing of the player: insufficient data."""
    by_player = counts if isinstance(counts, bool) else counts.by_player
    if by_player and verdict.p_value is not None and _PLAYER not in verdict.groups:
        return Verdict(verdict.sample, insufficient="insufficient data")
    return verdict


def _group_order(group: str) -> tuple[bool, str]:
    return group == _BOARDS, group


def _membership(of: npt.NDArray[np.int64], size: int) -> npt.NDArray[np.float64]:
    """(52, size): 1 where a standard card belongs to a category."""
    member = np.zeros((N_STANDARD, size))
    member[np.arange(N_STANDARD), of] = 1.0
    return member


_CODES = np.arange(N_STANDARD)
_CATEGORIES = (
    ("suit", _membership(_CODES % 4, 4), SUITS),
    ("rank", _membership(_CODES // 4, 13), RANK_NAMES),
    ("card", np.eye(N_STANDARD), CANONICAL[:N_STANDARD]),
)


def _dealt(cards: pa.Table, variant: str, groups: list[str]) -> npt.NDArray[np.float64]:
    """(groups, 53): each group's count of each card, a joker last; the rest's row 0."""
    dealt = np.zeros((len(groups), JOKER + 1))
    index = {g: i for i, g in enumerate(groups)}
    for row in cards.filter(pc.equal(cards["variant"], variant)).to_pylist():
        dealt[index[row["grp"]], row["card"]] = row["dealt"]
    return dealt


def _deals(deck: int, groups: list[str], cuts: list[dict[str, Any]], count: str) -> Deals:
    """How the hands cut a deck among `groups` (the rest last), each cut's `count` of cards
    (its standard cards, or all it dealt)."""
    index = {g: i for i, g in enumerate(groups)}
    patterns = np.zeros((len(cuts), len(groups)))
    for p, cut in enumerate(cuts):
        for group, cards in zip(cut["groups"], cut[count], strict=True):
            if group in index:
                patterns[p, index[group]] = cards
    return Deals.from_patterns(deck, groups, patterns, [cut["hands"] for cut in cuts])


def _largest(
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


def _scope(variant: str, filters: Filters) -> str:
    parts = [variant]
    if filters.table_id is not None:
        parts.append(f"table {filters.table_id}")
    if filters.player_id is not None:
        parts.append(f"player {filters.player_id}")
    return ", ".join(parts)


def order_tests(counts: Counts, filters: Filters) -> Iterator[Test]:
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
            yield Test(
                f"deal order: {kind}",
                _scope(name, filters),
                int(players.sum()),
                int(players @ column["n"]),
                verdict,
                detail,
            )


def premium_tests(counts: Counts, filters: Filters) -> Iterator[Test]:
    """Per player: their premium outcomes against the other players of the same hands.
    The players too few hands leave untested are one row per outcome."""
    premium = counts.premium
    untested: dict[str, list[int]] = {}
    keys = pa.table({"player_id": premium["player_id"], "outcome": premium["outcome"]})
    for (player, outcome), rows in _runs(keys, premium):
        had, players = rows["had"], rows["players"]
        hands, hits = rows["hands"], int(rows["hits"].sum())
        verdict = fairness.premium_test(hits, had / players, hands)
        if verdict.insufficient:
            untested.setdefault(outcome, []).append(int(hands.sum()))
            continue
        others = int((had * hands).sum() - hits)
        seats = int(((players - 1) * hands).sum())
        share = float((had / players * hands).sum())
        detail = (
            f"{hits:,} in {int(hands.sum()):,} hands ({hits / hands.sum():.2%}), "
            f"{share:,.1f} their fair share; the other players of the same hands "
            f"{others / max(seats, 1):.2%} ({others:,} in {seats:,})"
        )
        scope = _scope(f"player {player}", Filters(table_id=filters.table_id))
        yield Test(f"premium: {outcome}", scope, verdict.sample, None, verdict, detail)
    for outcome, sizes in untested.items():
        detail = f"each player needs {fairness.MIN_EXPECTED:g} to expect; these had fewer hands"
        who = f"{len(sizes):,} player" + ("s" if len(sizes) > 1 else "")
        scope = _scope(who, Filters(table_id=filters.table_id))
        verdict = Verdict(sum(sizes), insufficient="insufficient data")
        yield Test(f"premium: {outcome}", scope, sum(sizes), None, verdict, detail)


def _runs(
    keys: pa.Table, table: pa.Table
) -> Iterator[tuple[tuple[Any, ...], dict[str, npt.NDArray[np.float64]]]]:
    """The rows of `table` (sorted by `keys`) run by run of equal keys, as numpy columns."""
    if table.num_rows == 0:
        return
    values = list(zip(*(keys[c].to_pylist() for c in keys.column_names), strict=True))
    starts = [0, *(i for i in range(1, len(values)) if values[i] != values[i - 1])]
    columns = {
        c: table[c].to_numpy().astype(np.float64)
        for c in table.column_names
        if c not in keys.column_names
    }
    for start, end in zip(starts, [*starts[1:], len(values)], strict=True):
        yield values[start], {c: v[start:end] for c, v in columns.items()}
