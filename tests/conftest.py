"""Test fixtures: paths to the example sets kept in fixtures/, and small card helpers."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "fixtures" / "examples"

# The commands run by the tests keep the evaluator's tables in the project, not in
# the user's home (a test of the cache sets its own directory).
os.environ.setdefault("HANDAUDIT_CACHE", str(ROOT / ".pytest_cache" / "handaudit-tables"))


def load_examples(name: str) -> list[dict[str, Any]]:
    with (EXAMPLES / name / "hands.jsonl").open() as f:
        return [json.loads(line) for line in f]
