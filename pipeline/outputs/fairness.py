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
from pipeline.core.audit import ROW_TABLES
from pipeline.core.cards import CANONICAL, JOKER, N_STANDARD
from pipeline.core.fairness import Deals, Verdict
from pipeline.core.games import LAYOUTS, VARIANTS, Family, Layout, Variant
from pipeline.helpers.encoding import (
    DEALT_PART,
    GROUPS_PER_KEY,
    N_RANKS,
    N_SUITS,
    group_count,
    rank_of,
    suit_of,
)
from pipeline.helpers.packing import CARDS
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
REST = "rest"  # the cards no group was dealt
PREMIUM = "premium: "  # how the players' tests are named
_PLAYER = "player"  # the group of the player chosen by --player
KINDS = {
    "home_run": "Home Runs",
    "scoop": "scoops",
    "natural": "naturals",
    "fantasyland_entry": "Fantasyland entries",
}
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
class Test:
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
        con.register("premium_kinds", _premium_kinds())
        try:
            for view in (_HANDS_VIEW, _PLAYERS_VIEW, _CARDS_VIEW, _SIZES_VIEW):
                con.execute(view)
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
    return tested(counts, filters, alpha, covered)


def tested(counts: Counts, filters: Filters, alpha: float, covered: str) -> ReportResult:
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


def _weights(tests: list[Test]) -> tuple[list[float], float]:
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


# The views the counts read: the hands the filters choose; their players, each in a group
# (their seat; with --player, 1 the player and 2 the other players; 0 is the boards); and
# every card dealt, as a card code (52 a joker) at its place among the group's cards
# (open-face players' in the order dealt). Packed cards are read by crossing each player
# with the places of their cards, which DuckDB does far faster than list functions.
BOARDS_GROUP, PLAYER_GROUP, OTHERS_GROUP = 0, 1, 2
_IN_SCOPE = """(getvariable('player_id') IS NULL OR hand_id IN
    (SELECT hand_id FROM players WHERE player_id = getvariable('player_id')))"""
_HANDS_VIEW = f"""
CREATE OR REPLACE TEMP VIEW fair_hands AS
SELECT hand_id, table_id, variant, n_players, started_at, {_IN_SCOPE} AS in_scope,
       concat_ws(' ', board_1, board_2) AS boards
FROM hands
WHERE (getvariable('from_day') IS NULL OR day >= getvariable('from_day'))
  AND (getvariable('to_day') IS NULL OR day <= getvariable('to_day'))
  AND (getvariable('table_id') IS NULL OR table_id = getvariable('table_id'))
  AND (getvariable('variant') IS NULL OR variant = getvariable('variant'))"""
_PLAYERS_VIEW = f"""
CREATE OR REPLACE TEMP VIEW fair_players AS
SELECT p.hand_id, h.table_id, h.variant, h.n_players, h.started_at, h.in_scope, p.seat,
       p.player_id,
       p."natural",
       p.fantasyland, p.fantasyland_next,
       CASE WHEN getvariable('player_id') IS NULL THEN p.seat
            WHEN p.player_id = getvariable('player_id') THEN {PLAYER_GROUP}
            ELSE {OTHERS_GROUP} END AS grp
FROM players p
JOIN fair_hands h USING (hand_id)"""


def _packed_cards(table: str, layout: Layout, where: str = "") -> str:
    """Each card of a layout's stored settings, one row per card."""
    cards = LAYOUTS[layout].cards_per_player
    code = CARDS.unpacked_sql("r", "i", CARDS.words(cards))
    return f"""
SELECT p.hand_id, p.variant, p.seat, p.grp, i AS place, ({code})::INTEGER AS card,
       false AS in_order
FROM fair_players p JOIN {table} r USING (hand_id, seat), range({cards}) AS t(i)
WHERE p.in_scope {where}"""


def _jokers(table: str, layout: Layout) -> str:
    """How many jokers a player of a layout holds, from their packed cards."""
    cards = LAYOUTS[layout].cards_per_player
    words = CARDS.words(cards)
    return " + ".join(
        f"({CARDS.unpacked_sql(table, str(i), words)} = {JOKER})::INTEGER" for i in range(cards)
    )


_DEALT_PART = f"lambda x: part_of(x) = {DEALT_PART}"  # a placement of a dealt card
_CHINESE_CARDS = LAYOUTS[Layout.chinese].cards_per_player
_TAIWANESE_CARDS = LAYOUTS[Layout.taiwanese].cards_per_player
_NO_STREETS = (
    "NOT EXISTS (SELECT 1 FROM player_streets s WHERE s.hand_id = p.hand_id AND s.seat = p.seat)"
)
_BOARD_CARD = "substr(h.boards, 3 * i + 1, 2)"  # canonical cards, one space between
_BOARD_CARDS = LAYOUTS[Layout.taiwanese].boards * LAYOUTS[Layout.taiwanese].board_size
_CARDS_VIEW = (
    "CREATE OR REPLACE TEMP VIEW fair_cards AS"
    + _packed_cards(ROW_TABLES[Layout.taiwanese], Layout.taiwanese)
    + "\nUNION ALL"
    + _packed_cards(ROW_TABLES[Layout.chinese], Layout.chinese, f"AND {_NO_STREETS}")
    + f"""
UNION ALL
SELECT hand_id, variant, seat, grp, place - 1, placed_card(card)::INTEGER, true
FROM (
    SELECT p.hand_id, p.variant, p.seat, p.grp,
           unnest(list_filter(s.placements, {_DEALT_PART})) AS card,
           generate_subscripts(list_filter(s.placements, {_DEALT_PART}), 1) AS place
    FROM fair_players p JOIN player_streets s USING (hand_id, seat)
    WHERE p.in_scope
)
UNION ALL
SELECT h.hand_id, h.variant, NULL, {BOARDS_GROUP}, i,
       card_of_text({_BOARD_CARD}), false
FROM fair_hands h, range({_BOARD_CARDS}) AS t(i)
WHERE h.in_scope AND h.boards <> '' AND 3 * i < length(h.boards)"""
)


# Each group's cards in each hand, standard apart from all, read from the stored words
# without spreading them card by card: what cuts.sql packs into one key per hand.
_SIZES_VIEW = f"""
CREATE OR REPLACE TEMP VIEW fair_sizes AS
SELECT p.hand_id, p.variant, p.grp,
       {_TAIWANESE_CARDS} - ({_jokers("r", Layout.taiwanese)}) AS standard,
       {_TAIWANESE_CARDS} AS dealt
FROM fair_players p JOIN {ROW_TABLES[Layout.taiwanese]} r USING (hand_id, seat)
WHERE p.in_scope
UNION ALL
SELECT p.hand_id, p.variant, p.grp, {_CHINESE_CARDS}, {_CHINESE_CARDS}
FROM fair_players p JOIN {ROW_TABLES[Layout.chinese]} f USING (hand_id, seat)
WHERE p.in_scope AND {_NO_STREETS}
UNION ALL
SELECT p.hand_id, p.variant, p.grp, n, n
FROM fair_players p
JOIN (SELECT hand_id, seat, len(list_filter(placements, {_DEALT_PART})) AS n
      FROM player_streets) s USING (hand_id, seat)
WHERE p.in_scope
UNION ALL
SELECT hand_id, variant, {BOARDS_GROUP}, (length(boards) + 1) // 3, (length(boards) + 1) // 3
FROM fair_hands
WHERE in_scope AND boards <> ''"""


def _premium_kinds() -> pa.Table:
    """Which premium outcomes each game has (a Home Run; a scoop, a natural, a Fantasyland
    entry), and the name of the outcome they form together."""
    rows = []
    for name, game in VARIANTS.items():
        has = {
            "home_run": game.family is Family.taiwanese,
            "scoop": game.family is not Family.taiwanese,
            "natural": game.family is Family.chinese,
            "fantasyland_entry": game.open_face,
        }
        outcome = " or ".join(KINDS[kind] for kind, present in has.items() if present)
        rows.append({"variant": name, "outcome": outcome, **has})
    return pa.Table.from_pylist(rows)


REST_GROUP = -1


@dataclass(frozen=True)
class Dealt:
    """What one game's hands dealt each group, and how they cut the deck: the groups by
    their codes (the rest last), each distinct cut's keys (cuts.sql), and its hands."""

    game: Variant
    codes: list[int]
    labels: list[str]
    standard_keys: npt.NDArray[np.int64]
    dealt_keys: npt.NDArray[np.int64]
    cut_hands: npt.NDArray[np.int64]
    cards: npt.NDArray[np.float64]  # (groups, 53): each card, a joker last; the rest's row 0

    @property
    def hands(self) -> int:
        return int(self.cut_hands.sum())

    @property
    def standard(self) -> npt.NDArray[np.float64]:
        """(groups, 52): the standard cards, the rest's row what the others left."""
        standard = self.cards[:, :N_STANDARD].copy()
        standard[-1] = self.hands - standard[:-1].sum(axis=0)
        return standard

    def deals(self, deck: int = N_STANDARD, keep: list[int] | None = None) -> Deals:
        """How the hands cut a deck among the groups (`keep` of them, by index, and the
        rest): their standard cards, or with `keep`, all their cards."""
        chosen = list(range(len(self.codes) - 1)) if keep is None else keep
        keys = self.standard_keys if keep is None else self.dealt_keys
        groups = np.array([self.codes[i] for i in chosen], dtype=np.int64)
        patterns = group_count(keys[:, None], groups)
        patterns = np.concatenate([patterns, np.zeros((len(keys), 1), np.int64)], axis=1)
        labels = [self.labels[i] for i in chosen] + [self.labels[-1]]
        return Deals.from_patterns(deck, labels, patterns.astype(np.float64), self.cut_hands)


def dealt_by_game(counts: Counts) -> Iterator[Dealt]:
    cuts, cards = counts.cuts, counts.cards
    for name, game in VARIANTS.items():
        mine = cuts.filter(pc.equal(cuts["variant"], name))
        if mine.num_rows == 0:
            continue
        standard, dealt, hands = (mine[c].to_numpy() for c in ("standard", "dealt", "hands"))
        present = np.bitwise_or.reduce(dealt)
        codes = [g for g in range(GROUPS_PER_KEY) if group_count(int(present), g)]
        codes = [*sorted(codes, key=lambda g: (g == BOARDS_GROUP, g)), REST_GROUP]
        labels = [_label(g, counts.by_player) for g in codes]
        row = {g: i for i, g in enumerate(codes)}
        counted = np.zeros((len(codes), JOKER + 1))
        for each in cards.filter(pc.equal(cards["variant"], name)).to_pylist():  # <= 53 a group
            counted[row[each["grp"]], each["card"]] = each["dealt"]
        yield Dealt(game, codes, labels, standard, dealt, hands, counted)


def _label(code: int, by_player: bool) -> str:
    if code == REST_GROUP:
        return REST
    if code == BOARDS_GROUP:
        return _BOARDS
    if by_player:
        return _PLAYER if code == PLAYER_GROUP else "other players"
    return f"seat {code}"


def deal_tests(counts: Counts, filters: Filters) -> Iterator[Test]:
    """Per game: suit, rank and card by seat (or by player) over the standard cards, given
    where the jokers went; and the jokers by seat where the game deals them."""
    by = "player" if counts.by_player else "seat"
    for dealt in dealt_by_game(counts):
        scope = _scope(dealt.game.name, filters.table_id, filters.player_id)
        standard, deals = dealt.standard, dealt.deals()
        for category, member, labels in _CATEGORIES:
            observed, in_deck = standard @ member, member.sum(axis=0)
            verdict = _focused(fairness.partition_test(deals, observed, in_deck), counts.by_player)
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
    detail = _largest(deals, observed, in_deck, ("jokers", "standard cards"), verdict)
    return Test(name, scope, dealt.hands, int(observed[:-1].sum()), verdict, detail)


_BOARDS = "boards"


def _focused(verdict: Verdict, by_player: bool) -> Verdict:
    """With --player, a test whose player had to be merged with another group (too few
    cards to expect) says nothing of the player: insufficient data."""
    if by_player and verdict.p_value is not None and _PLAYER not in verdict.groups:
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


def _scope(who: str, table_id: str | None, player_id: str | None = None) -> str:
    """What a test covers: a game or players, at the table and of the player filtered."""
    parts = [who]
    if table_id is not None:
        parts.append(f"table {table_id}")
    if player_id is not None:
        parts.append(f"player {player_id}")
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
                _scope(name, filters.table_id, filters.player_id),
                int(players.sum()),
                int(players @ column["n"]),
                verdict,
                detail,
            )


def premium_tests(counts: Counts, filters: Filters) -> Iterator[Test]:
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
        yield Test(f"{PREMIUM}{outcome}", scope, hands, None, verdict, detail)
    for outcome, sizes in untested.items():
        detail = f"each player needs {fairness.MIN_EXPECTED:g} to expect; these had fewer hands"
        who = f"{len(sizes):,} player" + ("s" if len(sizes) > 1 else "")
        verdict = Verdict(sum(sizes), insufficient="insufficient data")
        scope = _scope(who, filters.table_id)
        yield Test(f"{PREMIUM}{outcome}", scope, verdict.sample, None, verdict, detail, len(sizes))


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
