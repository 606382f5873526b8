"""Ids that the operator's export wrote are shown exactly and can neither crash the tool
nor change what the auditor sees: markup, terminal escapes, bidi overrides, formulas."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.helpers.display import FORBIDDEN, FORMULA_STARTS, visible
from tests.cli.test_evaluate_command import handaudit
from tests.conftest import EXAMPLES, load_examples

HOSTILE = [
    "[/bold] [red]x",
    "[red]redtext",
    "p\x1b]8;;http://x\x1b\\click\x1b]8;;\x1b\\",
    '=HYPERLINK("http://x","click")',
    "+1",
    "-2",
    "@SUM(A1)",
    "\tpad",
    "evil\u202egnp.exe",
    ":smile:",
    "nl\nid",
    "zero\u200bwidth",
    "Zoë",
]


def _hands() -> list[dict[str, Any]]:
    """A few hands of every game: Taiwanese, closed Chinese and open-face, three tables."""
    family = load_examples("family/clean")
    tables = {h["table_id"]: h["variant"] for h in family}
    chosen = [next(t for t, v in tables.items() if v == game) for game in ("chinese", "ofc")]
    taiwanese = load_examples("clean")
    picked = [h for h in family if h["table_id"] in chosen]
    first = taiwanese[0]["table_id"]
    return [h for t in chosen for h in picked if h["table_id"] == t][:8] + [
        h for h in taiwanese if h["table_id"] == first
    ][:4]


HANDS = _hands()
PLAYERS = sorted(
    {p["player_id"] for h in HANDS for p in h["players"] + (h.get("sitting_out") or [])}
)
TABLES = sorted({h["table_id"] for h in HANDS})


def _renamed(players: list[str], tables: list[str]) -> list[dict[str, Any]]:
    """The hands with every player and table id replaced (hand ids follow their table)."""
    player_of = dict(zip(PLAYERS, players, strict=True))
    table_of = dict(zip(TABLES, tables, strict=True))
    out = json.loads(json.dumps(HANDS))
    for hand in out:
        hand["table_id"] = table_of[hand["table_id"]]
        hand["hand_id"] = f"{hand['table_id']}-{hand['hand_no']}"
        for p in hand["players"] + (hand.get("sitting_out") or []):
            p["player_id"] = player_of[p["player_id"]]
    return out


def _spoiled(hand: dict[str, Any]) -> bool:
    ids = [hand["hand_id"], hand["table_id"]]
    ids += [p["player_id"] for p in hand["players"] + (hand.get("sitting_out") or [])]
    return any(FORBIDDEN.search(i) for i in ids)


def _shown(text: str) -> bool:
    """Nothing in `text` that a terminal would obey or hide: its own lines, and printables."""
    return all(c.isprintable() or c in " \n" for c in text)


RUNNER = CliRunner()


def _run(*args: str) -> Any:
    result = RUNNER.invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def _ids(text: str) -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(HOSTILE), st.text(min_size=1, max_size=10)).map(
        lambda s: s + text
    )


def _unique(count: int, suffix: str) -> st.SearchStrategy[list[str]]:
    # A suffix per place keeps the ids unique whatever the strategy draws.
    return st.tuples(*(_ids(f"{suffix}{i}") for i in range(count))).map(list)


def _verified(db: Path) -> Iterator[tuple[str, int, str]]:
    with duckdb.connect(str(db), read_only=True) as con:
        yield from con.execute("SELECT hand_id, seat, player_id FROM players").fetchall()


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(players=_unique(len(PLAYERS), "#p"), tables=_unique(len(TABLES), "#t"))
def test_any_id_is_stored_exactly_or_quarantined_and_shown_visibly(
    players: list[str], tables: list[str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    hands = _renamed(players, tables)
    work = tmp_path_factory.mktemp("hostile")
    source = work / "hands.jsonl"
    source.write_text("".join(json.dumps(h) + "\n" for h in hands), encoding="utf-8")
    run = _run("verify", str(source), "--out", str(work / "audit"), "--workers", "1")
    assert run.exit_code in (0, 1) and _shown(run.stdout), run.stdout
    db = work / "audit" / "audit.duckdb"
    stored = {(h, s): p for h, s, p in _verified(db)}
    with duckdb.connect(str(db), read_only=True) as con:
        quarantined = dict(con.execute('SELECT hand_id, "check" FROM quarantine').fetchall())
    for hand in hands:
        if _spoiled(hand):
            assert quarantined.get(hand["hand_id"]) == "identifier"
            continue
        for p in hand["players"]:  # stored exactly as given
            assert stored[(hand["hand_id"], p["seat"])] == p["player_id"]
        shown = _run("explain", "--db", str(db), "--", hand["hand_id"])
        assert shown.exit_code == 0 and _shown(shown.stdout), shown.stdout
        assert all(visible(p["player_id"]) in shown.stdout for p in hand["players"])
    ledger = _run("report", "player_ledger", "--db", str(db))
    assert ledger.exit_code == 0 and _shown(ledger.stdout)
    assert all(visible(p) in ledger.stdout for p in stored.values())
    table = _run("report", "player_ledger", "--db", str(db), "--format", "csv")
    cells = [row[0] for row in csv.reader(io.StringIO(table.stdout))][1:]
    assert len(cells) == len(set(stored.values()))
    for text in cells:
        assert not text.startswith(FORMULA_STARTS)
        assert text in stored.values() or (text[:1] == "'" and text[1:] in stored.values())


@pytest.fixture(scope="module")
def hostile_audit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The hands with the hostile ids of the issue, by the real command in its own process."""
    work = tmp_path_factory.mktemp("hostile")
    clean = [h for h in HOSTILE if not FORBIDDEN.search(h)]
    players = [clean[i % len(clean)] + ("" if i < len(clean) else f" {i}") for i in range(99)]
    hands = _renamed(players[: len(PLAYERS)], [f"T[bold]{i}" for i in range(len(TABLES))])
    hands[1]["players"][0]["player_id"] = HOSTILE[2]  # an OSC 8 hyperlink
    hands[2]["table_id"] = "T\u202eright-to-left"
    hands[3]["players"][1]["player_id"] = "nl\nid"
    source = work / "hands.jsonl"
    source.write_text("".join(json.dumps(h) + "\n" for h in hands), encoding="utf-8")
    result = handaudit("verify", str(source), "--out", str(work))
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    return work / "audit.duckdb"


def test_markup_is_shown_literally_by_explain_and_report(hostile_audit: Path) -> None:
    hand = next(h for h, _, p in _verified(hostile_audit) if p.startswith("[/bold]"))
    shown = handaudit("explain", "--db", str(hostile_audit), "--", hand)
    assert shown.returncode == 0, shown.stderr
    assert "[/bold] [red]x" in shown.stdout and "T[bold]" in shown.stdout
    ledger = handaudit("report", "player_ledger", "--db", str(hostile_audit))
    assert ledger.returncode == 0, ledger.stderr
    assert "[/bold] [red]x" in ledger.stdout and "[red]redtext" in ledger.stdout
    assert ":smile:" in ledger.stdout


def test_control_and_bidi_ids_are_quarantined_with_the_character_named(
    hostile_audit: Path,
) -> None:
    with duckdb.connect(str(hostile_audit), read_only=True) as con:
        found = con.execute(
            "SELECT message, raw FROM quarantine WHERE \"check\" = 'identifier' ORDER BY source"
        ).fetchall()
    messages = [m for m, _ in found]
    assert any("player_id 'p\\x1b]8;;http://x" in m and "U+001B" in m for m in messages)
    assert any("table_id 'T\\u202eright-to-left'" in m and "RIGHT-TO-LEFT" in m for m in messages)
    assert any("nl\\x0aid" in m for m in messages)
    assert all(raw and json.loads(raw)["hand_id"] for _, raw in found)  # the record kept
    for hand in _quarantined(hostile_audit):
        shown = handaudit("explain", "--db", str(hostile_audit), "--", hand)
        assert shown.returncode == 0 and "\x1b" not in shown.stdout + shown.stderr
        assert _shown(shown.stdout)


def _quarantined(db: Path) -> list[str]:
    with duckdb.connect(str(db), read_only=True) as con:
        return [h for (h,) in con.execute("SELECT hand_id FROM quarantine").fetchall()]


def test_csv_cells_cannot_start_a_formula_unless_asked_raw(hostile_audit: Path) -> None:
    safe = handaudit("report", "player_ledger", "--db", str(hostile_audit), "--format", "csv")
    rows = list(csv.reader(io.StringIO(safe.stdout)))
    ids = [r[0] for r in rows[1:]]
    assert '\'=HYPERLINK("http://x","click")' in ids and "'+1" in ids and "'-2" in ids
    assert "'@SUM(A1)" in ids  # (a tab would start one too, but ids may hold no tab)
    assert not any(i.startswith(FORMULA_STARTS) for i in ids)
    nets = [r[rows[0].index("net")] for r in rows[1:]]
    assert any(n.startswith("-") for n in nets)  # a negative amount stays a number
    raw = handaudit(
        "report", "player_ledger", "--db", str(hostile_audit), "--format", "csv", "--csv-raw"
    )
    assert '=HYPERLINK("http://x","click")' in [r[0] for r in csv.reader(io.StringIO(raw.stdout))]


def test_json_output_stays_exact(hostile_audit: Path) -> None:
    out = handaudit("report", "player_ledger", "--db", str(hostile_audit), "--format", "json")
    ids = {r["player_id"] for r in json.loads(out.stdout)["rows"]}
    assert '=HYPERLINK("http://x","click")' in ids and "zero\u200bwidth" in ids


def _findings(db: Path) -> set[tuple[str, str, int | None]]:
    with duckdb.connect(str(db), read_only=True) as con:
        return set(
            con.execute(
                'SELECT hand_id, "check", seat FROM divergences UNION ALL '
                'SELECT hand_id, "check", NULL FROM quarantine WHERE hand_id IS NOT NULL'
            ).fetchall()
        )


def test_hostile_ids_change_no_finding_of_a_faulty_family_history(tmp_path: Path) -> None:
    """Markup, formulas and any printable Unicode in every id of a history with faults of
    every kind: the same findings, hand for hand, as the history with its own ids."""
    source = EXAMPLES / "family" / "faults" / "hands.jsonl"
    clean = [h for h in HOSTILE if not FORBIDDEN.search(h)]
    names: dict[str, str] = {}

    def renamed(text: object, prefix: str) -> object:
        if not isinstance(text, str):
            return text
        return names.setdefault(prefix + text, f"{clean[len(names) % len(clean)]} {len(names)}")

    lines = []
    for line in source.read_text().splitlines():
        hand = json.loads(line)
        if isinstance(hand.get("hand_id"), str):
            hand["hand_id"] = "[red]" + hand["hand_id"]
        hand["table_id"] = renamed(hand.get("table_id"), "table ")
        for p in (hand.get("players") or []) + (hand.get("sitting_out") or []):
            if isinstance(p, dict):
                p["player_id"] = renamed(p.get("player_id"), "player ")
        lines.append(json.dumps(hand))
    hostile = tmp_path / "hostile.jsonl"
    hostile.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for name, path in (("own", source), ("hostile", hostile)):
        result = handaudit("verify", str(path), "--out", str(tmp_path / name))
        assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    own = _findings(tmp_path / "own" / "audit.duckdb")
    found = _findings(tmp_path / "hostile" / "audit.duckdb")
    assert {(h.removeprefix("[red]"), c, s) for h, c, s in found} == own
    assert len(own) > 50
