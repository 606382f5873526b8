"""Hand ids read again, told apart once the run's rows are stored: a record with the same
digest as the audited one is an exact repeat (`duplicate_hand`, a double export, harmless);
one with other content is `conflicting_hand`, the strongest sign of a rewritten history,
and its message names both sources and the fields that differ. Both stay in `quarantine`
with their raw text.
"""

from __future__ import annotations

import duckdb

from pipeline.ingest import Accounting
from pipeline.ingest.quarantine import QuarantineCheck
from pipeline.ingest.records import differing_fields, named_fields, records_at

_DUPLICATE = QuarantineCheck.duplicate_hand.value
_CONFLICTING = QuarantineCheck.conflicting_hand.value

# The run's repeats (rows after `after`, by DuckDB's rowid) whose bytes are the audited
# record's, or whose digests are not known (an audit that kept none): named as such.
_EXACT_REPEATS = f"""
UPDATE quarantine SET message = quarantine.source || ': hand ' || quarantine.hand_id || CASE
    WHEN quarantine.record_digest = h.record_digest THEN ' is an exact repeat of ' || h.source
    ELSE ' was read before, at ' || h.source END || '; only its first record is audited'
FROM hands h
WHERE quarantine.hand_id = h.hand_id AND quarantine."check" = '{_DUPLICATE}'
  AND quarantine.rowid > ?
  AND (quarantine.record_digest = h.record_digest
       OR quarantine.record_digest IS NULL OR h.record_digest IS NULL)
"""
_CONFLICTS = f"""
SELECT q.rowid, q.source, q.hand_id, q.raw, h.source, h.record_digest
FROM quarantine q JOIN hands h USING (hand_id)
WHERE q."check" = '{_DUPLICATE}' AND q.rowid > ? AND q.record_digest <> h.record_digest
ORDER BY q.rowid
"""


def tell_repeats(
    con: duckdb.DuckDBPyConnection, accounting: Accounting | None, after: int = -1
) -> int:
    """Name the audited record in each repeat of the run (quarantine rows after rowid
    `after`), and make those with other content `conflicting_hand`, in the run's
    `accounting` too; how many were."""
    con.execute(_EXACT_REPEATS, [after])
    conflicts = con.execute(_CONFLICTS, [after]).fetchall()
    audited = records_at((c[4], c[5]) for c in conflicts)  # each file read once
    for rowid, source, hand_id, raw, audited_source, audited_digest in conflicts:
        first = audited.get((audited_source, audited_digest))
        message = (
            f"{source}: hand {hand_id} conflicts with the record audited from "
            f"{audited_source}: {_what_differs(raw, first)}; only the first record is audited"
        )
        con.execute(
            'UPDATE quarantine SET "check" = ?, message = ? WHERE rowid = ?',
            [_CONFLICTING, message, rowid],
        )
    if accounting is not None:
        accounting.retell(
            QuarantineCheck.duplicate_hand, QuarantineCheck.conflicting_hand, len(conflicts)
        )
    return len(conflicts)


def _what_differs(raw: str | None, audited: bytes | None) -> str:
    if audited is None or raw is None:
        return (
            "the records' digests differ (the audited record could not be read again "
            "there to name the fields)"
        )
    fields = differing_fields(audited, raw)
    if fields is None:
        return "the records' digests differ (one of them is not JSON)"
    if not fields:
        return "the same fields and values, written differently"
    return f"{named_fields(fields)} {'differs' if len(fields) == 1 else 'differ'}"
