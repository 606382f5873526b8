"""Shared test fixtures: paths to the shared examples and small card helpers."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED_EXAMPLES = ROOT.parent / "shared" / "examples"

# The commands run by the tests keep the evaluator's tables in the project, not in
# the user's home (a test of the cache sets its own directory).
os.environ.setdefault("HANDAUDIT_CACHE", str(ROOT / ".pytest_cache" / "handaudit-tables"))


def load_examples(name: str) -> list[dict[str, Any]]:
    path = SHARED_EXAMPLES / name / "hands.jsonl"
    if not path.exists():
        pytest.skip(f"the shared examples are not at {path}")
    with path.open() as f:
        return [json.loads(line) for line in f]
