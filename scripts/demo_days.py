"""Split the bundled sample into two days of exports, as an operator's arrive (`make demo`).

The Taiwanese and closed Chinese sample tables, the open-face tables of the family
examples, and one table of the house-rules examples dealt by a house profile
(`jokers_deep`, audited with `--rules fixtures/examples/house-rules/house.toml`): each
table's hands up to the middle of its hand numbers are day 1, the rest
day 2, so every table runs across the boundary. A line that cannot be read goes with
the line before it.

Run: .venv/bin/python scripts/demo_days.py DIR  (writes DIR/day-1.jsonl.gz, DIR/day-2.jsonl.gz)
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = (
    ROOT / "fixtures" / "sample" / "jsonl" / "hands.jsonl.gz",
    ROOT / "fixtures" / "sample" / "chinese" / "hands.jsonl.gz",
    ROOT / "fixtures" / "examples" / "family" / "clean" / "hands.jsonl",
    ROOT / "fixtures" / "examples" / "house-rules" / "jokers_deep" / "hands.jsonl",
)
OPEN_FACE = ("ofc", "pineapple_ofc")
HOUSE_TABLE = "JD-T7003000"  # mapped to jokers_deep by its [[tables]] entry


def _read(path: Path) -> list[str]:
    raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    return raw.decode("utf-8", errors="surrogateescape").splitlines()


def _record(line: str) -> dict[str, object] | None:
    try:
        found = json.loads(line)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def main(out: Path) -> None:
    lines: list[tuple[str, dict[str, object] | None]] = []
    for path in SOURCES:
        family, house = "family" in path.parts, "house-rules" in path.parts
        for line in _read(path):
            record = _record(line)
            if family and (record is None or record.get("variant") not in OPEN_FACE):
                continue  # the examples' open-face tables alone
            if house and (record is None or record.get("table_id") != HOUSE_TABLE):
                continue
            lines.append((line, record))
    last: dict[object, int] = {}
    for _, record in lines:
        if record is not None and isinstance(record.get("hand_no"), int):
            table = record.get("table_id")
            last[table] = max(last.get(table, 0), int(record["hand_no"]))  # type: ignore[call-overload]
    days: list[list[str]] = [[], []]
    day = 0
    for line, record in lines:
        if record is not None and isinstance(record.get("hand_no"), int):
            day = int(int(record["hand_no"]) > last[record.get("table_id")] // 2)  # type: ignore[call-overload]
        days[day].append(line)
    out.mkdir(parents=True, exist_ok=True)
    for n, held in enumerate(days, 1):
        text = "".join(line + "\n" for line in held)
        (out / f"day-{n}.jsonl.gz").write_bytes(
            gzip.compress(text.encode("utf-8", errors="surrogateescape"), mtime=0)
        )
        print(f"day {n}: {len(held):,} records in {out / f'day-{n}.jsonl.gz'}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "audit" / "days")
