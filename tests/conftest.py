"""Shared test fixtures: paths to the shared examples and small card helpers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED_EXAMPLES = ROOT.parent / "shared" / "examples"


def load_examples(name: str) -> list[dict[str, Any]]:
    path = SHARED_EXAMPLES / name / "hands.jsonl"
    if not path.exists():
        pytest.skip(f"the shared examples are not at {path}")
    with path.open() as f:
        return [json.loads(line) for line in f]
