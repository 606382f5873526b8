"""Every report's total row equals a direct query on the audit: distinct hands and tables
counted once, money seen by several checks counted once."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pytest

from pipeline.outputs.reports import catalog
from tests.cli.test_evaluate_command import handaudit
from tests.conftest import EXAMPLES

# What each report's total row must be, asked of the audit's tables directly (not of the
# report's SQL). {where} narrows to the hands a filter keeps.
REPEATED = (
    "\"check\" IN ('duplicate_hand', 'conflicting_hand') AND hand_id IN (SELECT hand_id FROM hands)"
)
FOUND = f"(SELECT hand_id FROM divergences UNION SELECT hand_id FROM quarantine WHERE {REPEATED})"
DIRECT: dict[str, dict[str, str]] = {
    "divergence_summary": {
        # The divergences, and the repeated records of audited hands, counted apart.
        "divergences": "SELECT (SELECT count(*) FROM divergences) + (SELECT count(*) FROM "
        f"quarantine WHERE {REPEATED})",
        "hands": f"SELECT count(DISTINCT hand_id) FROM {FOUND}",
        "tables": f"SELECT count(DISTINCT table_id) FROM hands WHERE hand_id IN {FOUND}",
        "first_seen": f"SELECT min(started_at) FROM hands WHERE hand_id IN {FOUND}",
        "last_seen": f"SELECT max(started_at) FROM hands WHERE hand_id IN {FOUND}",
        "net_difference": "SELECT sum(abs(net - recorded_net)) FROM players WHERE hand_id IN "
        "(SELECT hand_id FROM divergences)",
        "rake_difference": "SELECT sum(abs(h.rake_total - coalesce(h.recorded_rake_total, "
        "(SELECT sum(recorded_rake) FROM players p WHERE p.hand_id = h.hand_id)))) "
        "FROM hands h WHERE hand_id IN (SELECT hand_id FROM divergences)",
    },
    "player_ledger": {
        "hands": "SELECT count(*) FROM hands",
        "points": "SELECT sum(points) FROM players",
        "won": "SELECT sum(won) FROM players",
        "rake": "SELECT sum(rake) FROM players",
        "net": "SELECT sum(net) FROM players",
        "recorded_net": "SELECT sum(recorded_net) FROM players",
        "home_runs_won": "SELECT count(home_run) FROM settlements",
        "home_runs_lost": "SELECT count(home_run) FROM settlements",
    },
    "coverage": {
        "hands": "SELECT count(*) FROM hands",
        "first_started": "SELECT min(started_at) FROM hands",
        "last_started": "SELECT max(started_at) FROM hands",
        "players_not_checked": "SELECT count(*) FROM players WHERE hand_id IN (SELECT "
        "hand_id FROM hands h WHERE (hand_no, hand_id) = (SELECT min((hand_no, hand_id)) "
        "FROM hands o WHERE o.table_id = h.table_id))",
    },
    "rules": {
        "hands": "SELECT count(*) FROM hands",
        "first_started": "SELECT min(started_at) FROM hands",
        "last_started": "SELECT max(started_at) FROM hands",
    },
    "fantasyland": {
        "hands": "SELECT count(*) FROM hands WHERE variant IN ('ofc', 'pineapple_ofc')",
        "entries": "SELECT count(*) FROM players WHERE fantasyland_next AND NOT fantasyland",
        "stays": "SELECT count(*) FROM players WHERE fantasyland_next AND fantasyland",
        "fantasyland_hands": "SELECT count(*) FROM players WHERE fantasyland",
        "cards_dealt_in_fantasyland": "SELECT sum(cards_dealt) FROM players WHERE fantasyland",
    },
    "fouls": {
        "hands": "SELECT count(DISTINCT hand_id) FROM settlements JOIN hands USING (hand_id) "
        "WHERE variant IN ('chinese', 'ofc', 'pineapple_ofc')",
        "fouls": "SELECT count(DISTINCT hand_id) FROM players WHERE fouled "
        "AND hand_id IN (SELECT hand_id FROM settlements)",
        "foul_rate": "SELECT round((SELECT count(DISTINCT hand_id) FROM players WHERE fouled "
        "AND hand_id IN (SELECT hand_id FROM settlements)) / (SELECT count(DISTINCT hand_id) "
        "FROM settlements JOIN hands USING (hand_id) WHERE variant IN "
        "('chinese', 'ofc', 'pineapple_ofc')), 4)",
        "money_moved_by_fouls": "SELECT sum(CASE WHEN a.fouled AND NOT b.fouled THEN "
        "greatest(-s.amount, 0) WHEN b.fouled AND NOT a.fouled THEN greatest(s.amount, 0) "
        "ELSE 0 END) FROM settlements s JOIN players a ON a.hand_id = s.hand_id AND "
        "a.seat = s.seat JOIN players b ON b.hand_id = s.hand_id AND b.seat = s.opponent",
    },
    "home_runs": {
        "hands": "SELECT count(DISTINCT hand_id) FROM settlements",
        "pairs": "SELECT count(*) FROM settlements",
        "home_runs": "SELECT count(home_run) FROM settlements",
        "home_run_rate": "SELECT round(count(home_run) / count(*), 4) FROM settlements",
    },
    "jokers": {"times": "SELECT sum(len(joker_as)) FROM rows"},
    "rake_reconciliation": {
        "hands": "SELECT count(*) FROM hands",
        "recorded_rake": "SELECT sum(coalesce(recorded_rake_total, (SELECT sum(recorded_rake) "
        "FROM players p WHERE p.hand_id = h.hand_id))) FROM hands h",
        "recomputed_rake": "SELECT sum(rake_total) FROM hands",
        "recomputed_minus_recorded": "SELECT sum(rake_total - coalesce(recorded_rake_total, "
        "(SELECT sum(recorded_rake) FROM players p WHERE p.hand_id = h.hand_id))) FROM hands h",
    },
    "table_activity": {
        "hands": "SELECT count(*) FROM hands",
        "players": "SELECT count(DISTINCT player_id) FROM players",
        "average_dealt": "SELECT round(avg(n_players), 2) FROM hands",
        "point_value": "SELECT min(point_value) FROM hands",
        "max_point_value": "SELECT max(point_value) FROM hands",
        "rake": "SELECT sum(rake_total) FROM hands",
        "hands_diverged": "SELECT count(*) FROM hands WHERE status = 'diverged'",
        "divergence_rate": "SELECT round(count(*) FILTER (WHERE status = 'diverged') / "
        "count(*), 4) FROM hands",
    },
}


@pytest.fixture(scope="module")
def mixed_faults(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Faulty Taiwanese and faulty family hands (every game) in one audit."""
    out = tmp_path_factory.mktemp("mixed")
    sets = [EXAMPLES / "faults" / "hands.jsonl", EXAMPLES / "family" / "faults" / "hands.jsonl"]
    result = handaudit("verify", *map(str, sets), "--out", str(out))
    assert result.returncode == 1, result.stderr
    return out / "audit.duckdb"


def _one(con: duckdb.DuckDBPyConnection, query: str) -> Any:
    found = con.execute(query).fetchone()
    assert found is not None
    return found[0]


def _as_json(value: Any) -> Any:
    """A direct query's value as the JSON envelope writes it."""
    if isinstance(value, Decimal):
        return str(value)
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


def test_every_report_with_a_total_is_checked_here() -> None:
    assert {name for name, spec in catalog().items() if spec.total} == set(DIRECT)
    for name, direct in DIRECT.items():
        assert list(catalog()[name].total) == list(direct), name


@pytest.mark.parametrize("name", sorted(DIRECT))
def test_the_total_row_equals_a_direct_query(mixed_faults: Path, name: str) -> None:
    result = handaudit("report", name, "--db", str(mixed_faults), "--format", "json")
    assert result.returncode == 0, result.stderr
    totals = json.loads(result.stdout)["totals"]
    with duckdb.connect(str(mixed_faults), read_only=True) as con:
        want = {c: _as_json(_one(con, q)) for c, q in DIRECT[name].items()}
    assert totals == want


def test_money_seen_by_several_checks_is_counted_once(mixed_faults: Path) -> None:
    summary = handaudit("report", "divergence_summary", "--db", str(mixed_faults))
    assert summary.returncode == 0, summary.stderr
    with duckdb.connect(str(mixed_faults), read_only=True) as con:
        checks = _one(
            con,
            "SELECT count(DISTINCT \"check\") FROM divergences WHERE \"check\" IN ('won', 'net')",
        )
        nets = _one(con, "SELECT sum(abs(net - recorded_net)) FROM players")
    assert checks == 2  # the same money is seen by both
    assert f"the players' nets differ from the record by {nets} in all" in summary.stdout
    total = next(line for line in summary.stdout.splitlines() if line.startswith("| total"))
    assert total.split("|")[7].strip() == ""  # the checks' own amounts: no total


def test_a_filtered_total_counts_the_filtered_hands(mixed_faults: Path) -> None:
    with duckdb.connect(str(mixed_faults), read_only=True) as con:
        found = con.execute(
            "SELECT player_id, count(DISTINCT hand_id) FROM players GROUP BY 1 ORDER BY 2 DESC "
            "LIMIT 1"
        ).fetchone()
    assert found is not None
    player, hands = found
    options = ("--db", str(mixed_faults), "--format", "json", "--player", player)
    ledger = json.loads(handaudit("report", "player_ledger", *options).stdout)
    assert ledger["totals"]["hands"] == hands == ledger["rows"][0]["hands"]
