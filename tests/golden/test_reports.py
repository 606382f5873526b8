"""Named reports on the example sets: they reconcile to the cent, their formats stay stable."""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections import defaultdict
from decimal import Decimal
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from pipeline.outputs.reports import catalog
from tests.cli.test_evaluate_command import handaudit
from tests.conftest import EXAMPLES, load_examples

GOLDEN = Path(__file__).parent / "reports"


@pytest.fixture(scope="module")
def clean_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("clean")
    handaudit("verify", str(EXAMPLES / "clean" / "hands.jsonl"), "--out", str(out))
    return out / "audit.duckdb"


@pytest.fixture(scope="module")
def faults_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("faults")
    handaudit("verify", str(EXAMPLES / "faults" / "hands.jsonl"), "--out", str(out))
    return out / "audit.duckdb"


def report_json(db: Path, name: str, *options: str) -> dict[str, object]:
    result = handaudit("report", name, "--db", str(db), "--format", "json", *options)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_rake_reconciliation_reproduces_the_recorded_rake(clean_db: Path) -> None:
    want: dict[tuple[str, str], Decimal] = defaultdict(Decimal)
    for hand in load_examples("clean"):
        want[(hand["table_id"], hand["started_at"][:10])] += Decimal(hand["rake_total"])
    rows = report_json(clean_db, "rake_reconciliation")["rows"]
    assert isinstance(rows, list)
    got = {(r["table_id"], r["day"]): Decimal(r["recorded_rake"]) for r in rows}
    assert got == dict(want)
    assert all(Decimal(r["recomputed_minus_recorded"]) == 0 for r in rows)
    assert all(r["recorded_rake"] == r["recomputed_rake"] for r in rows)


def test_player_ledger_reproduces_every_recorded_net(clean_db: Path) -> None:
    want: dict[str, Decimal] = defaultdict(Decimal)
    for hand in load_examples("clean"):
        for p in hand["players"]:
            want[p["player_id"]] += Decimal(p["net"])
    rows = report_json(clean_db, "player_ledger")["rows"]
    assert isinstance(rows, list)
    assert {r["player_id"]: Decimal(r["net"]) for r in rows} == dict(want)


def test_divergence_summary_counts_match_the_divergences(faults_db: Path) -> None:
    with duckdb.connect(str(faults_db), read_only=True) as con:
        want = dict(con.execute('SELECT "check", count(*) FROM divergences GROUP BY 1').fetchall())
        # And the repeated hand ids, quarantined, each kind apart.
        repeats = con.execute(
            'SELECT "check", count(*) FROM quarantine WHERE "check" IN '
            "('duplicate_hand', 'conflicting_hand') GROUP BY 1"
        ).fetchall()
    assert dict(repeats) == {"duplicate_hand": 1}  # the faulty set's exact repeat
    want |= dict(repeats)
    rows = report_json(faults_db, "divergence_summary")["rows"]
    assert isinstance(rows, list)
    assert {r["check"]: r["divergences"] for r in rows} == want


@pytest.fixture(scope="module")
def family_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("family")
    handaudit("verify", str(EXAMPLES / "family" / "clean" / "hands.jsonl"), "--out", str(out))
    return out / "audit.duckdb"


def test_fouls_count_every_recorded_foul_and_the_money_they_moved(family_db: Path) -> None:
    hands = [h for h in load_examples("family/clean") if h["variant"] == "chinese"]
    fouls: dict[str, int] = defaultdict(int)
    moved: dict[str, Decimal] = defaultdict(Decimal)
    for hand in hands:
        seats = {p["seat"]: p for p in hand["players"]}
        for p in hand["players"]:
            fouls[p["player_id"]] += p["fouled"]
        for s in hand["settlements"]:
            a, b, amount = seats[s["seat"]], seats[s["opponent"]], Decimal(s["amount"])
            if a["fouled"] and not b["fouled"]:
                moved[a["player_id"]] += max(-amount, Decimal(0))
            if b["fouled"] and not a["fouled"]:
                moved[b["player_id"]] += max(amount, Decimal(0))
    rows = report_json(family_db, "fouls", "--variant", "chinese")["rows"]
    assert isinstance(rows, list)
    players = [r for r in rows if r["opponent_id"] is None]
    assert {r["player_id"]: r["fouls"] for r in players} == dict(fouls)
    assert {r["player_id"]: Decimal(r["money_moved_by_fouls"]) for r in players} == {
        k: moved.get(k, Decimal(0)) for k in fouls
    }
    assert sum(fouls.values()) > 0 and sum(moved.values()) > 0
    # The pairs of a player add up to the player's money moved.
    for player in players:
        pairs = [r for r in rows if r["player_id"] == player["player_id"] and r["opponent_id"]]
        total = sum(Decimal(r["money_moved_by_fouls"]) for r in pairs)
        assert total == Decimal(player["money_moved_by_fouls"])


def test_fantasyland_counts_entries_stays_and_cards(family_db: Path) -> None:
    want: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0])
    for hand in load_examples("family/clean"):
        if hand["variant"] == "chinese":
            continue
        for p in hand["players"]:
            row = want[(hand["table_id"], p["player_id"])]
            landed, earns = p.get("fantasyland", False), p["fantasyland_next"]
            dealt = sum(len(street["dealt"]) for street in p["streets"])
            row[0] += 1
            row[1] += earns and not landed
            row[2] += earns and landed
            row[3] += landed
            row[4] += dealt if landed else 0
    rows = report_json(family_db, "fantasyland")["rows"]
    assert isinstance(rows, list)
    keys = ("hands", "entries", "stays", "fantasyland_hands", "cards_dealt_in_fantasyland")
    got = {(r["table_id"], r["player_id"]): [r[k] for k in keys] for r in rows}
    assert got == dict(want)
    assert sum(r[1] for r in want.values()) > 5 and sum(r[2] for r in want.values()) > 0


def masked(text: str) -> str:
    return re.sub(r"generated \S+ by handaudit \S+", "generated TIME by handaudit VERSION", text)


@pytest.mark.parametrize("name", sorted(catalog()))
def test_each_report_keeps_its_format(clean_db: Path, name: str) -> None:
    result = handaudit("report", name, "--db", str(clean_db), "--table", "T101003")
    assert result.returncode == 0, result.stderr
    golden = GOLDEN / f"{name}.txt"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text(masked(result.stdout))
    assert masked(result.stdout) == golden.read_text()


def test_machine_formats_hold_data_only(clean_db: Path, tmp_path: Path) -> None:
    csv_run = handaudit("report", "table_activity", "--db", str(clean_db), "--format", "csv")
    assert csv_run.stdout.splitlines()[0].startswith("table_id,variant,hands,players")
    assert "Table activity" in csv_run.stderr and "Table activity" not in csv_run.stdout
    out = tmp_path / "homeruns.parquet"
    assert (
        handaudit(
            "report",
            "home_runs",
            "--db",
            str(clean_db),
            "--format",
            "parquet",
            "--output",
            str(out),
        ).returncode
        == 0
    )
    meta = json.loads(pq.read_schema(out).metadata[b"handaudit"])
    assert meta["title"] == "Home Runs and scoops" and meta["totals"]["pairs"] > 0


def test_no_activity_and_bad_requests(clean_db: Path) -> None:
    empty = handaudit("report", "player_ledger", "--db", str(clean_db), "--player", "nobody")
    assert empty.returncode == 0 and "No activity" in empty.stdout
    assert handaudit("report", "nope", "--db", str(clean_db)).returncode == 2
    bad_day = handaudit("report", "jokers", "--db", str(clean_db), "--from", "yesterday")
    assert bad_day.returncode == 2 and "2026-11-29" in bad_day.stderr
    listed = handaudit("report", "--list").stdout
    assert all(name in listed for name in catalog())


def test_the_sql_files_run_from_duckdb_directly(clean_db: Path) -> None:
    """What the README tells analysts: set the variables, run the file."""
    sql = catalog()["rake_reconciliation"].sql
    with duckdb.connect(str(clean_db), read_only=True) as con:
        con.execute("SET VARIABLE table_id = 'T101001'")
        rows = con.sql(sql).fetchall()
    *days, total = rows
    assert days and all(r[0] == "T101001" for r in days)
    assert total[0] is None and total[3] == sum(r[3] for r in days)  # the hands, in all


def _png_pixels(path: Path) -> set[tuple[int, int, int]]:
    """The colours in an 8-bit RGB(A) PNG (enough of a decoder to check a screenshot)."""
    import struct
    import zlib

    data = path.read_bytes()
    pos, idat, width, height, channels = 8, b"", 0, 0, 3
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        chunk = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, _, color = struct.unpack(">IIBB", chunk[:10])
            channels = 4 if color == 6 else 3
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    previous = bytearray(stride)
    colours: set[tuple[int, int, int]] = set()
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa_, pb, pc_ = abs(p - left), abs(p - up), abs(p - corner)
                pred = left if pa_ <= pb and pa_ <= pc_ else up if pb <= pc_ else corner
                line[i] = (line[i] + pred) & 255
        colours.update(tuple(line[x : x + 3]) for x in range(0, stride, channels))  # type: ignore[misc]
        previous = line
    return colours


def test_the_html_audit_report_draws_its_charts_in_a_browser(
    faults_db: Path, tmp_path: Path
) -> None:
    page = tmp_path / "audit.html"
    result = handaudit("report", "audit", "--db", str(faults_db), "--html", str(page))
    assert result.returncode == 0, result.stderr
    text = page.read_text()
    maps = text.count('each card dealt to each group, against a fair deal" width')
    assert maps >= 1 and "<h2>Deal fairness</h2>" in text and "family-wise" in text
    assert text.count('<svg class="chart"') == 2 + maps and 'class="bar"' in text
    assert "http://" not in text and "https://" not in text  # opens offline
    assert 'href="#hand-' in text and 'id="hand-' in text
    browser = next(
        (b for b in ("/usr/bin/chromium", "/usr/bin/chromium-browser") if Path(b).exists()), None
    )
    if browser is None:
        pytest.skip("no Chromium here to render the page (apt-get install chromium)")
    shot = tmp_path / "shot.png"
    subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--hide-scrollbars",
            "--window-size=1100,1400",
            f"--screenshot={shot}",
            page.as_uri(),
        ],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert shot.exists(), "Chromium wrote no screenshot"
    colours = _png_pixels(shot)
    assert (0x2B, 0x6C, 0xB0) in colours  # the divergence bars, drawn
