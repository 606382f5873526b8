"""The hands no profile makes exact (`never_exact`), against the examples settled by the
reference: no hand of a clean history is one, every one of a faulty history is a hand
the reference lists as faulty, and every fault of the record's own arithmetic is one."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pipeline.engine.pool import read_pool
from tests.cli.test_evaluate_command import handaudit
from tests.conftest import EXAMPLES

HOUSE = EXAMPLES / "house-rules"
CLEAN = [
    EXAMPLES / "clean",
    EXAMPLES / "edge",
    EXAMPLES / "family" / "clean",
    *sorted(p for p in HOUSE.iterdir() if p.is_dir() and not p.name.endswith("-faults")),
]
FAULTY = [EXAMPLES / "faults", EXAMPLES / "family" / "faults", *sorted(HOUSE.glob("*-faults"))]
# Faults that break what every settlement keeps, whatever the rules (`self_contradicting`),
# or that no profile changes (a misplaced street).
ARITHMETIC = {
    "won", "net", "rake", "points", "pair_points", "pair_amount", "stack_end", "zero_sum",
    "rake_total", "placement",
}  # fmt: skip


def _named(folder: Path) -> str:
    return str(folder.relative_to(EXAMPLES))


@pytest.mark.parametrize("folder", CLEAN, ids=_named)
def test_no_clean_hand_is_one_no_profile_makes_exact(folder: Path) -> None:
    pool = read_pool([folder / "hands.jsonl"])
    assert len(pool) and not pool.never_exact().any()


def test_a_pair_recorded_twice_alike_leaves_a_clean_hand_one_rules_make_exact(
    tmp_path: Path,
) -> None:
    # A verify settles a pair recorded twice alike as once (each copy meets the same
    # pair): the sums of the pairs are not read in a hand that repeats one.
    for folder in (EXAMPLES / "clean", EXAMPLES / "family" / "clean", HOUSE / "asia"):
        hands = [json.loads(line) for line in (folder / "hands.jsonl").read_text().splitlines()]
        for hand in hands:
            if hand.get("settlements"):
                hand["settlements"].append(dict(hand["settlements"][0]))
        repeated = tmp_path / f"{folder.name}.jsonl"
        repeated.write_text("".join(json.dumps(h) + "\n" for h in hands))
        assert not read_pool([repeated]).never_exact().any(), folder
    audit = handaudit("verify", str(tmp_path / "clean.jsonl"), "--out", str(tmp_path / "a"))
    assert audit.returncode == 0, audit.stdout


@pytest.mark.parametrize("folder", FAULTY, ids=_named)
def test_the_hands_no_profile_makes_exact_are_faulty_and_hold_every_arithmetic_fault(
    folder: Path,
) -> None:
    pool = read_pool([folder / "hands.jsonl"])
    faults = {f["hand_id"]: f["check"] for f in json.loads((folder / "faults.json").read_text())}
    never = {pool.hand_id[i] for i in np.flatnonzero(pool.never_exact())}
    assert never and never <= set(faults)
    held = set(pool.hand_id)
    arithmetic = {h for h, check in faults.items() if check in ARITHMETIC and h in held}
    assert arithmetic and arithmetic <= never
