"""Write the JSON Schemas in schemas/ from the pydantic models (tests fail when they drift):
a hand record's, and a house-rules file's."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pipeline.ingest import hand_history, house_rules

SCHEMAS = Path(__file__).resolve().parent.parent / "schemas"
TARGETS: dict[Path, Callable[[], dict[str, Any]]] = {
    SCHEMAS / "hand-history.schema.json": hand_history.json_schema,
    SCHEMAS / "house-rules.schema.json": house_rules.json_schema,
}
TARGET = SCHEMAS / "hand-history.schema.json"


def render(schema: Callable[[], dict[str, Any]] = hand_history.json_schema) -> str:
    return json.dumps(schema(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    for target, schema in TARGETS.items():
        target.write_text(render(schema))
        print(f"wrote {target}")
