"""A case file for one hand: `handaudit explain HAND_ID --evidence DIR`.

Everything an investigator needs about the hand in one folder, each file named in a
`MANIFEST.sha256` that `sha256sum -c` verifies: the raw record in its exact bytes (read
again at its source, found by its digest; each quarantined copy beside it), the
explanation as text and as offline HTML, its divergences (or quarantine rows), its
house-rules profile, and the audit's runs with their chain digests.
"""

from __future__ import annotations

import hashlib
import html
import json
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb

from pipeline.helpers.errors import AuditError
from pipeline.ingest.records import record_at
from pipeline.outputs.explain import explain
from pipeline.outputs.html_report import STYLE
from pipeline.storage.store import open_audit

MANIFEST = "MANIFEST.sha256"


class EvidenceError(AuditError):
    """A folder the case file cannot be written to."""


def write_case(db: Path, hand_id: str, folder: Path) -> list[str]:
    """The case file of `hand_id` written to `folder` (new, or empty); the names of its
    files, and a sentence for what could not be put in it, if anything."""
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise EvidenceError(
            f"{folder} exists and is not an empty folder: a case file is written to a new "
            "folder, so that nothing else sits among its evidence."
        )
    text = explain(db, hand_id)  # says so if the audit does not hold the hand
    with open_audit(db) as con:
        files = _gathered(con, hand_id)
    files["explanation.txt"] = (text + "\n").encode()
    files["explanation.html"] = _page(hand_id, text).encode()
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (folder / name).write_bytes(data)
    lines = [f"{hashlib.sha256(data).hexdigest()}  {name}" for name, data in sorted(files.items())]
    (folder / MANIFEST).write_text("\n".join(lines) + "\n")
    return sorted(files)


def _gathered(con: duckdb.DuckDBPyConnection, hand_id: str) -> dict[str, bytes]:
    hand = _rows(con, "SELECT * FROM hands WHERE hand_id = ?", hand_id)
    quarantined = _rows(con, "SELECT * FROM quarantine WHERE hand_id = ? ORDER BY rowid", hand_id)
    files: dict[str, bytes] = {}
    # Every record of the hand: the audited one first, then each copy quarantined (a
    # repeat, exact or conflicting), `record-2.json` on.
    for n, where in enumerate([*hand, *quarantined], 1):
        name = "record" if n == 1 else f"record-{n}"
        raw = record_at(str(where["source"]), where.get("record_digest"))
        if raw is not None:
            files[f"{name}.json"] = raw
        else:
            files[f"{name}-not-found.txt"] = (
                f"The record of hand {hand_id} is no longer at {where['source']} with the "
                f"digest {where.get('record_digest')}: the file is gone or was changed since "
                "the audit.\n"
            ).encode()
    divergences = _rows(con, "SELECT * FROM divergences WHERE hand_id = ? ORDER BY ALL", hand_id)
    files["divergences.json"] = _json(divergences)
    if quarantined:
        files["quarantine.json"] = _json(quarantined)
    if hand:
        files["hand.json"] = _json(hand)
        files["rules.json"] = _json(
            _rows(
                con,
                "SELECT r.* FROM rule_profiles r JOIN hands h ON r.name = h.rules "
                "AND r.game = h.variant WHERE h.hand_id = ?",
                hand_id,
            )
        )
    files["runs.json"] = _json(_rows(con, "SELECT * FROM runs ORDER BY finished_at, run_id"))
    return files


def _rows(con: duckdb.DuckDBPyConnection, sql: str, *params: object) -> list[dict[str, Any]]:
    result = con.execute(sql, list(params))
    names = [d[0] for d in result.description or ()]
    return [dict(zip(names, row, strict=True)) for row in result.fetchall()]


def _json(rows: list[dict[str, Any]]) -> bytes:
    return (json.dumps(rows, indent=1, ensure_ascii=False, default=_plain) + "\n").encode()


def _plain(value: object) -> object:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    return str(value)


def _page(hand_id: str, text: str) -> str:
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Hand {html.escape(hand_id)}</title>
<style>{STYLE}</style></head><body>
<h1>Hand {html.escape(hand_id)}</h1>
<pre>{html.escape(text)}</pre>
</body></html>
"""
