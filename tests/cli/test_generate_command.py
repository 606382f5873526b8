"""`handaudit generate`: deterministic, rule-following tables whose faults the audit finds.

Generator and verifier share the engine, so these tests prove the plumbing; the
rules themselves stay checked against the example sets of fixtures/examples.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import jsonschema
import pytest

from pipeline.ingest.sources import fault_list_of
from tests.cli.test_evaluate_command import handaudit
from tests.conftest import ROOT


def generate(out: Path, *extra: str) -> None:
    result = handaudit("generate", "--tables", "8", "--hands", "40", "--out", str(out), *extra)
    assert result.returncode == 0, result.stderr


def missed_and_false(truth: list[dict[str, Any]], out: Path) -> tuple[list[Any], list[Any]]:
    """The listed faults the audit in `out` did not report, and the hands it flagged that
    carry no fault (nor its echo)."""
    with duckdb.connect(str(out / "audit.duckdb"), read_only=True) as con:
        found = set(con.execute('SELECT hand_id, "check" FROM divergences').fetchall()) | set(
            con.execute('SELECT hand_id, "check" FROM quarantine').fetchall()
        )
    allowed = {f["hand_id"] for f in truth} | {e for f in truth for e in f["echo_hand_ids"]}
    missed = [(f["hand_id"], f["check"]) for f in truth if (f["hand_id"], f["check"]) not in found]
    return missed, sorted({(h, c) for h, c in found if h not in allowed})


def test_same_seed_same_bytes_and_every_format(tmp_path: Path) -> None:
    generate(tmp_path / "a" / "hands.jsonl", "--seed", "5")
    generate(tmp_path / "b" / "hands.jsonl", "--seed", "5")
    assert (tmp_path / "a" / "hands.jsonl").read_bytes() == (
        tmp_path / "b" / "hands.jsonl"
    ).read_bytes()
    generate(tmp_path / "c" / "hands.json", "--seed", "5", "--format", "json")
    lines = [json.loads(x) for x in (tmp_path / "a" / "hands.jsonl").read_text().splitlines()]
    assert json.loads((tmp_path / "c" / "hands.json").read_text()) == lines
    assert len(lines) == 320


def test_a_generated_clean_set_audits_clean_and_passes_the_schema(tmp_path: Path) -> None:
    generate(tmp_path / "hands.parquet", "--seed", "11", "--format", "parquet")
    result = handaudit("verify", str(tmp_path / "hands.parquet"), "--out", str(tmp_path / "out"))
    assert result.returncode == 0, result.stdout + result.stderr
    generate(tmp_path / "hands.jsonl", "--seed", "11")
    schema = json.loads((ROOT / "schemas" / "hand-history.schema.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    for line in (tmp_path / "hands.jsonl").read_text().splitlines()[:100]:
        validator.validate(json.loads(line))


def test_a_generated_faulty_set_every_fault_found_nothing_else(tmp_path: Path) -> None:
    generate(tmp_path / "hands.jsonl", "--seed", "3", "--faults", "0.2")
    truth = json.loads(fault_list_of(tmp_path / "hands.jsonl").read_text())
    assert len({f["check"] for f in truth}) >= 15
    result = handaudit("verify", str(tmp_path / "hands.jsonl"), "--out", str(tmp_path / "out"))
    assert result.returncode == 1
    assert missed_and_false(truth, tmp_path / "out") == ([], [])


def test_the_bundled_sample_matches_its_generator() -> None:
    sample = ROOT / "fixtures" / "sample"
    for kind, name in (("jsonl", "hands.jsonl.gz"), ("parquet", "hands.parquet")):
        truth = json.loads(fault_list_of(sample / kind / name).read_text())
        assert len(truth) > 20 and (sample / kind / name).exists()


def test_an_output_that_cannot_be_written_is_a_sentence_and_exit_2(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    result = handaudit("generate", "--tables", "1", "--hands", "2", "--out", f"{blocked}/x.jsonl")
    assert result.returncode == 2
    assert result.stderr.startswith("handaudit: ") and "Traceback" not in result.stderr
    bad = handaudit("generate", "--out", str(tmp_path / "x.txt"), "--format", "csv")
    assert bad.returncode == 2 and "'csv' is not one of" in bad.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("generate", "--format", "csv"),
        ("generate", "--variant", "bridge"),
        ("generate", "--variant", "taiwanese_jokers"),  # dealt as taiwanese, with --jokers
        ("generate", "--scoring", "3-3"),
        ("generate", "--bias", "heavy"),
        ("report", "player_ledger", "--format", "xml"),
        ("report", "player_ledger", "--variant", "bridge"),
    ],
)
def test_a_choice_not_offered_is_refused_with_the_choices(args: tuple[str, ...]) -> None:
    result = handaudit(*args, "--out" if args[0] == "generate" else "--db", "nowhere")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"Invalid value for '{args[-2]}'" in result.stderr and "is not one of" in result.stderr


@pytest.mark.parametrize("bias", ["offbyone", "riffle:3", "sticky"])
def test_every_biased_shuffle_deals_histories_that_verify_clean(bias: str, tmp_path: Path) -> None:
    """A bias changes the cards, never the rules: each game's history verifies clean."""
    for variant in ("taiwanese", "chinese", "ofc", "pineapple_ofc"):
        made = tmp_path / "in" / f"{variant}.jsonl"
        generate(made, "--variant", variant, "--bias", bias, "--seed", "3")
    verified = handaudit("verify", str(tmp_path / "in"), "--out", str(tmp_path / "audit"))
    assert verified.returncode == 0 and "nothing diverged" in verified.stdout, verified.stderr


def test_generated_chinese_tables_audit_clean_and_every_fault_is_found(tmp_path: Path) -> None:
    clean = tmp_path / "clean" / "hands.jsonl"
    generate(clean, "--variant", "chinese", "--scoring", "2-4", "--seed", "4")
    hands = [json.loads(x) for x in clean.read_text().splitlines()]
    assert {h["variant"] for h in hands} == {"chinese"} and hands[0]["scoring"] == "2-4"
    players = [p for h in hands for p in h["players"]]
    assert any(p["fouled"] for p in players) and any(p.get("declare") for p in players)
    result = handaudit("verify", str(clean), "--out", str(tmp_path / "clean-out"))
    assert result.returncode == 0, result.stdout + result.stderr
    faulty = tmp_path / "faulty" / "hands.jsonl"
    generate(faulty, "--variant", "chinese", "--seed", "5", "--faults", "0.2")
    truth = json.loads(fault_list_of(faulty).read_text())
    assert {"foul", "royalty", "natural"} <= {f["check"] for f in truth}
    handaudit("verify", str(faulty), "--out", str(tmp_path / "out"))
    assert missed_and_false(truth, tmp_path / "out") == ([], [])


@pytest.mark.parametrize("variant", ["ofc", "pineapple_ofc"])
def test_generated_open_face_tables_audit_clean_and_every_fault_is_found(
    variant: str, tmp_path: Path
) -> None:
    clean = tmp_path / "clean" / "hands.jsonl"
    generate(clean, "--variant", variant, "--seed", "4")
    hands = [json.loads(x) for x in clean.read_text().splitlines()]
    players = [p for h in hands for p in h["players"]]
    assert {h["variant"] for h in hands} == {variant}
    assert any(p["fantasyland_next"] for p in players) and any(p["fantasyland"] for p in players)
    assert any(p["fouled"] for p in players) and all(p["streets"] for p in players)
    result = handaudit("verify", str(clean), "--out", str(tmp_path / "clean-out"))
    assert result.returncode == 0, result.stdout + result.stderr
    faulty = tmp_path / "faulty" / "hands.jsonl"
    generate(faulty, "--variant", variant, "--seed", "5", "--faults", "0.25")
    truth = json.loads(fault_list_of(faulty).read_text())
    assert {"placement", "fantasyland", "foul", "royalty"} <= {f["check"] for f in truth}
    handaudit("verify", str(faulty), "--out", str(tmp_path / "out"))
    assert missed_and_false(truth, tmp_path / "out") == ([], [])
