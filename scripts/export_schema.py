"""Write schemas/hand-history.schema.json from the pydantic models (tests fail when it drifts)."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.ingest.hand_history import json_schema

TARGET = Path(__file__).resolve().parent.parent / "schemas" / "hand-history.schema.json"


def render() -> str:
    return json.dumps(json_schema(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    TARGET.write_text(render())
    print(f"wrote {TARGET}")
