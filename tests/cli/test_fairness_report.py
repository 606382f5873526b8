"""`handaudit report fairness` through the real CLI: fair deals pass, biased ones are flagged,
and the biased histories stay rules-true (they verify clean).

The deal tests' arithmetic is checked against brute force in tests/unit/test_fairness.py;
here the whole path runs: generate, verify into a DuckDB file, report.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pyarrow.parquet as pq
import pytest

from pipeline.engine.verify import verify
from pipeline.generate.run import generate
from pipeline.generate.shuffle import Bias, Dealer
from pipeline.outputs.fairness import COUNTS, fairness_report, read_counts
from pipeline.outputs.reports import Filters
from tests.cli.test_evaluate_command import handaudit
from tests.conftest import EXAMPLES

FAMILY = ("chinese", "ofc", "pineapple_ofc")


def _history(out: Path, *bias: str) -> Path:
    """1,500 Taiwanese hands (half with jokers) and 1,500 of the family (500 of each game),
    audited; the audit database. Each game its own seed: one seed shuffles the same decks
    for every game, and the report finds those deals repeated."""
    runs = [("taiwanese", "6", "250"), *((game, "2", "250") for game in FAMILY)]
    for seed, (game, tables, hands) in enumerate(runs, start=21):
        made = handaudit(
            "generate", "--variant", game, "--tables", tables, "--hands", hands,
            "--seed", str(seed), "--out", str(out / "in" / f"{game}.jsonl"), *bias,
        )  # fmt: skip
        assert made.returncode == 0, made.stderr
    audited = handaudit("verify", str(out / "in"), "--out", str(out / "audit"))
    assert audited.returncode == 0, audited.stdout + audited.stderr  # biased, yet clean
    return out / "audit" / "audit.duckdb"


def _report(db: Path, *options: str) -> dict[str, Any]:
    result = handaudit("report", "fairness", "--db", str(db), "--format", "json", *options)
    assert result.returncode == 0, result.stderr
    report: dict[str, Any] = json.loads(result.stdout)
    return report


@pytest.fixture(scope="module")
def fair(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _history(tmp_path_factory.mktemp("fair"))


def test_fair_deals_of_every_game_are_not_flagged(fair: Path) -> None:
    report = _report(fair)
    assert report["totals"]["flagged"] == 0, [r for r in report["rows"] if r["flagged"]]
    tests = {(r["test"], r["scope"]) for r in report["rows"] if r["p_value"] is not None}
    for game in ("taiwanese", "taiwanese_jokers", *FAMILY):
        assert {("suit by seat", game), ("rank by seat", game)} <= tests
    assert ("jokers by seat", "taiwanese_jokers") in tests
    assert ("deal order: suit", "pineapple_ofc") in tests
    assert any(r["test"].startswith("premium:") for r in report["rows"] if r["p_value"])
    assert "A clean report does not certify the shuffle" in report["notes"]
    assert report["totals"]["alpha"] == "0.01"


def test_a_quarter_of_hands_dealt_toward_seat_one_is_flagged(tmp_path: Path) -> None:
    db = _history(tmp_path, "--bias", "suit", "--bias-share", "0.25")
    flagged = [r for r in _report(db)["rows"] if r["flagged"]]
    suits = {r["scope"] for r in flagged if r["test"] == "suit by seat"}
    assert {"taiwanese", "taiwanese_jokers", *FAMILY} <= suits
    for row in flagged:
        assert row["verdict"] == "FLAGGED"
        if row["test"] == "suit by seat":
            assert "seat 1 dealt hearts" in row["detail"] and "+" in row["detail"]


def test_the_naive_shuffle_is_flagged_by_rank_and_card(tmp_path: Path) -> None:
    made = handaudit(
        "generate", "--tables", "6", "--hands", "250", "--seed", "4", "--bias", "naive",
        "--out", str(tmp_path / "in" / "h.jsonl"),
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert handaudit("verify", str(tmp_path / "in"), "--out", str(tmp_path)).returncode == 0
    flagged = {(r["test"], r["scope"]) for r in _report(tmp_path / "audit.duckdb")["rows"]
               if r["flagged"]}  # fmt: skip
    for game in ("taiwanese", "taiwanese_jokers"):
        assert {("rank by seat", game), ("card by seat", game)} <= flagged


@pytest.mark.parametrize("name", ["clean", "faults", "family/clean"])
def test_the_reference_deals_pass(name: str, tmp_path: Path) -> None:
    """The example sets settled by the independent reference are dealt fairly: nothing is
    flagged (they deal jokers to players from all 54 cards). The family set's luckiest
    player, 21 scoops or Fantasyland entries in 36 hands where 12.2 were their fair share,
    stays under the rate: p = 0.0014 among 35 players' tests."""
    handaudit("verify", str(EXAMPLES / name), "--out", str(tmp_path))
    rows = _report(tmp_path / "audit.duckdb")["rows"]
    flagged = [(r["test"], r["scope"]) for r in rows if r["flagged"]]
    assert flagged == []
    assert any(r["test"] == "card by seat" and r["p_value"] for r in rows)


def test_a_deal_of_both_jokers_every_hand_is_flagged(tmp_path: Path) -> None:
    """The edge set deals both jokers in every hand (often into one row): 2 a hand, where
    a fair deal of 7 cards to each of n players from 54 gives 14n/54."""
    handaudit("verify", str(EXAMPLES / "edge"), "--out", str(tmp_path))
    rows = _report(tmp_path / "audit.duckdb", "--variant", "taiwanese_jokers")["rows"]
    jokers = next(r for r in rows if r["test"] == "jokers by seat")
    assert jokers["flagged"] and jokers["p_value"] < 1e-20


def test_every_format_and_the_filters(fair: Path, tmp_path: Path) -> None:
    table = handaudit("report", "fairness", "--db", str(fair), "--variant", "chinese")
    assert table.returncode == 0, table.stderr
    assert "Deal fairness" in table.stdout and "family-wise false-alarm rate" in table.stdout
    assert "taiwanese" not in table.stdout
    csv = handaudit("report", "fairness", "--db", str(fair), "--format", "csv")
    assert csv.stdout.splitlines()[0].startswith("test,scope,hands,cards,statistic,df,p_value")
    out = tmp_path / "fairness.parquet"
    written = handaudit(
        "report", "fairness", "--db", str(fair), "--format", "parquet", "--output", str(out)
    )
    assert written.returncode == 0, written.stderr
    assert pq.read_table(out).num_rows == len(_report(fair)["rows"])
    with duckdb.connect(str(fair), read_only=True) as con:
        by_hands = con.sql(
            "SELECT player_id, any_value(variant) FROM players JOIN hands USING (hand_id) "
            "GROUP BY player_id ORDER BY count(*) DESC, player_id"
        ).fetchall()
    most, fewest = by_hands[0], by_hands[-1]
    player = _report(fair, "--player", most[0])["rows"]
    assert all("player" in r["scope"] for r in player)
    assert not any(r["test"].startswith(("between", "repeated", "board")) for r in player)
    for cell in (r for r in player if "most favoured cell" in r["test"] and r["p_value"]):
        assert cell["detail"].startswith("player, "), cell  # the player's cells alone
    suit = next(r for r in player if r["test"] == "suit by player")
    assert suit["scope"] == f"{most[1]}, player {most[0]}" and suit["p_value"] is not None
    few = _report(fair, "--player", fewest[0])["rows"]  # a hand or two: the player merged away
    assert all(r["verdict"] == "insufficient data" for r in few if r["test"] == "card by player")
    bad = handaudit("report", "fairness", "--db", str(fair), "--alpha", "1.5")
    assert bad.returncode == 2 and "--alpha" in bad.stderr
    assert "fairness" in handaudit("report", "--list").stdout


def test_hands_of_one_board_have_five_places(tmp_path: Path) -> None:
    """A house's single-board Taiwanese hands deal five board places, not ten."""
    house = EXAMPLES / "house-rules"
    verified = handaudit(
        "verify", str(house / "single_board"), "--rules", str(house / "house.toml"),
        "--out", str(tmp_path),
    )  # fmt: skip
    assert verified.returncode == 0, verified.stderr
    rows = _report(tmp_path / "audit.duckdb")["rows"]
    places = [r for r in rows if r["test"].startswith("board place by")]
    assert places and all(r["cards"] == 5 * r["hands"] for r in places if r["cards"])
    assert not any(r["flagged"] for r in rows)


def test_a_table_is_read_in_the_order_of_its_hand_numbers(tmp_path: Path) -> None:
    """A sticky deal whose hands all start at one time under ids that sort in no order of
    play: the hands are compared in the order of their numbers, and the memory shows."""
    made = handaudit(
        "generate", "--tables", "4", "--hands", "300", "--seed", "9", "--bias", "sticky",
        "--bias-share", "0.05", "--out", str(tmp_path / "made.jsonl"),
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    hands = [json.loads(line) for line in (tmp_path / "made.jsonl").read_text().splitlines()]
    for i, hand in enumerate(hands):
        hand["started_at"] = hand["started_at"][:10] + "T12:00:00Z"
        hand["hand_id"] = f"{(i * 7919) % 100_003:06d}-{hand['hand_id']}"
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "h.jsonl").write_text("".join(json.dumps(h) + "\n" for h in hands))
    assert handaudit("verify", str(tmp_path / "in"), "--out", str(tmp_path)).returncode == 0
    rows = _report(tmp_path / "audit.duckdb")["rows"]
    same = next(r for r in rows if r["test"] == "between hands: same seat")
    assert same["flagged"] and "+" in same["detail"], same


def test_a_day_without_hands_has_no_tests(fair: Path) -> None:
    report = _report(fair, "--from", "2031-01-01")
    assert report["rows"] == [] and report["totals"]["tests"] == 0


def test_no_bias_deals_what_the_fair_simulator_deals(tmp_path: Path) -> None:
    """A bias on no hands leaves a seed's history byte for byte as the fair one."""
    for name, extra in (("fair", ()), ("none", ("--bias", "suit", "--bias-share", "0"))):
        made = handaudit(
            "generate", "--tables", "3", "--hands", "20", "--seed", "9", "--variant",
            "pineapple_ofc", "--out", str(tmp_path / name / "h.jsonl"), *extra,
        )  # fmt: skip
        assert made.returncode == 0, made.stderr
    assert (tmp_path / "fair" / "h.jsonl").read_bytes() == (
        tmp_path / "none" / "h.jsonl"
    ).read_bytes()


@pytest.mark.slow
def test_fair_seeds_are_flagged_at_most_at_the_stated_rate(tmp_path: Path) -> None:
    """Thirty fair Taiwanese histories of 1,500 hands: the report promises a family-wise
    false-alarm rate of 1%, so three or more flagged would happen by chance once in 280
    (the binomial tail P(X >= 3) for 30 trials at 1%: 0.0033). scripts/fairness_power.py
    measures the rate over a hundred seeds of every game."""
    flagged = 0
    for seed in range(30):
        root = tmp_path / str(seed)
        generate(root / "in" / "h.jsonl", tables=6, hands=250, seed=100 + seed,
                 dealer=Dealer(Bias.fair))  # fmt: skip
        verify([root / "in"], root / "audit")
        report = fairness_report(root / "audit" / "audit.duckdb", Filters(), 0.01)
        flagged += report.totals["flagged"] > 0
    assert flagged <= 2


def test_its_sql_runs_alone_on_an_audit(fair: Path) -> None:
    """sql/fairness/ runs on the audit with nothing made in Python (as in the DuckDB CLI:
    the views file, then the counts), and counts what the report counts, filtered too."""
    filters = Filters(table_id="O00001", player_id="O00001-p2")
    for chosen in (Filters(), filters):
        counts, _ = read_counts(fair, chosen)
        with duckdb.connect(str(fair), read_only=True) as con:
            for name in ("table_id", "player_id"):
                con.execute(f"SET VARIABLE {name} = ?", [getattr(chosen, name)])
            con.execute((COUNTS / "views.sql").read_text())
            con.execute((COUNTS / "outcomes.sql").read_text())
            for name in ("cuts", "cards", "order", "premium", "premium_order"):
                alone = con.sql((COUNTS / f"{name}.sql").read_text()).to_arrow_table()
                counted = getattr(counts, name).to_pylist()
                assert alone.num_rows == len(counted) > 0, name
                for row, same in zip(alone.to_pylist(), counted, strict=True):
                    exact = {k: v for k, v in row.items() if not isinstance(v, float)}
                    assert exact == {k: same[k] for k in exact}, name
                    floats = {k: v for k, v in row.items() if k not in exact}
                    # sums of floats, in any order
                    assert floats == pytest.approx({k: same[k] for k in floats}, rel=1e-12)


@pytest.mark.parametrize(
    ("bias", "share", "meant"),
    [
        ("sticky", "0.1", "between hands: same seat"),
        ("offbyone", "1", "board place by card"),
        ("riffle:3", "1", "card by seat: most favoured cell"),
    ],
)
def test_each_biased_shuffle_is_flagged_by_the_test_meant_for_it(
    bias: str, share: str, meant: str, tmp_path: Path
) -> None:
    """1,500 Taiwanese hands: a tenth dealt from the last deck barely moved, every hand by
    the off-by-one Fisher-Yates, or by three riffles."""
    made = handaudit(
        "generate", "--tables", "6", "--hands", "250", "--seed", "8", "--bias", bias,
        "--bias-share", share, "--out", str(tmp_path / "in" / "h.jsonl"),
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert handaudit("verify", str(tmp_path / "in"), "--out", str(tmp_path)).returncode == 0
    rows = _report(tmp_path / "audit.duckdb")["rows"]
    flagged = {r["test"] for r in rows if r["flagged"]}
    assert meant in flagged, [(r["test"], r["p_value"]) for r in rows if r["p_value"]]


@pytest.mark.parametrize("game", ["taiwanese", *FAMILY])
def test_a_seat_favoured_to_five_sd_in_a_quarter_of_the_hands_is_flagged(
    game: str, tmp_path: Path
) -> None:
    """1,500 hands of each game, a quarter dealt toward seat 1 with hearts: the cell shows
    more than +5 sd, and the most favoured cell flags it, naming it."""
    made = handaudit(
        "generate", "--variant", game, "--tables", "6", "--hands", "250", "--seed", "31",
        "--bias", "suit", "--bias-share", "0.25", "--bias-strength", "0.15",
        "--out", str(tmp_path / "in" / "h.jsonl"),
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert handaudit("verify", str(tmp_path / "in"), "--out", str(tmp_path)).returncode == 0
    rows = _report(tmp_path / "audit.duckdb")["rows"]
    cell = next(r for r in rows if r["test"] == "suit by seat: most favoured cell")
    assert cell["detail"].startswith("seat 1, hearts: +"), cell
    assert float(cell["detail"].split("+")[1].split(" sd")[0]) >= 5.0
    assert cell["flagged"], cell


def test_the_off_by_one_is_found_in_the_open_face_deal_order(tmp_path: Path) -> None:
    """The family has no boards: Open-Face and Pineapple deals record each seat's cards in
    the order dealt, and the off-by-one's stuck places show there."""
    for seed, game in enumerate(("ofc", "pineapple_ofc"), start=40):
        made = handaudit(
            "generate", "--variant", game, "--tables", "2", "--hands", "250", "--seed",
            str(seed), "--bias", "offbyone", "--out", str(tmp_path / "in" / f"{game}.jsonl"),
        )  # fmt: skip
        assert made.returncode == 0, made.stderr
    assert handaudit("verify", str(tmp_path / "in"), "--out", str(tmp_path)).returncode == 0
    rows = _report(tmp_path / "audit.duckdb")["rows"]
    places = [r for r in rows if r["test"] == "dealt place by card"]
    assert {r["scope"] for r in places} == {"ofc", "pineapple_ofc"}
    assert any(r["flagged"] for r in places), places
