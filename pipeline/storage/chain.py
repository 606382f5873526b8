"""The chain of runs over the sealed tables, and the check that recomputes both.

At the end of a run, once every table holds its final rows: `seal` digests them
(`seals.py`), keeping each segment's digest in `seals`; the run's row of `runs` then
holds the digest of each table, the chain digest of the run before it (an append's
`previous_digest`), or of the audit it replaced (a plain run's `replaces_digest`), and
its own `chain_digest`: the SHA-256 of the row's other values (`row_text`). `altered`
recomputes all of it and names what differs.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from pipeline.helpers.interrupts import pause_at
from pipeline.storage.connection import OFFLINE, has_column, has_table
from pipeline.storage.ledger import LedgerError, schema_version
from pipeline.storage.seals import (
    SEGMENT_ROWS,
    Segment,
    sealed_tables,
    segment_digest,
    segments,
    table_digest,
)
from pipeline.storage.signing import fingerprint, sign, signed_by, signed_by_own_key
from pipeline.storage.stored import GROWING

# What a runs row's chain digest does not cover: itself, and its signature.
UNCHAINED = ("chain_digest", "signature", "public_key")
# Hands named in a sentence, at most.
NAMED_HANDS = 5


def seal(
    con: duckdb.DuckDBPyConnection, run_id: str, ready: Mapping[str, list[Segment]] | None = None
) -> dict[str, str]:
    """Every table's segments digested into `seals` (the growing tables' sealed full
    segments kept as they are, those `ready` taken as digested); each table's digest, by
    name, and those of the audit's views and macros and of the runs before the chain
    (`_beside_tables`)."""
    held, ready = _held_seals(con), ready or {}
    fresh: list[Segment] = []
    digests = {}
    for table in sealed_tables(con):
        before = held.get(table, []) if table in GROWING else []
        kept = [s for s in before if s.rows == SEGMENT_ROWS]  # full segments, in order
        kept = kept[: next((i for i, s in enumerate(kept) if s.segment != i), len(kept))]
        parts = ready.get(table) or kept + list(segments(con, table, first=len(kept)))
        fresh += parts
        digests[table] = table_digest(table, _columns(con, table), parts)
    con.execute("DELETE FROM seals")
    con.register("fresh_seals", _seal_rows(fresh))
    try:
        con.execute("INSERT INTO seals BY NAME SELECT * FROM fresh_seals")
    finally:
        con.unregister("fresh_seals")
    return digests | _beside_tables(con, run_id)


def growing_segments(con: duckdb.DuckDBPyConnection) -> dict[str, list[Segment]]:
    """The segments of a new audit's growing tables, once they hold their final rows: a
    plain run digests them on a connection of its own (`con`) while the table rules run,
    for `seal` to take as `ready`."""
    try:
        return {t: list(segments(con, t)) for t in sealed_tables(con) if t in GROWING}
    finally:
        con.close()


# What a run seals beside the tables: the definitions of the views and macros that read
# them, and the rows of `runs` before the chain (an audit written before audits were
# sealed): a row added there later would otherwise pass for one of them. OBJECTS is
# every other thing the database holds, and the macros' parameters (audits sealed before
# it was kept hold DEFINITIONS alone, which `check` still compares).
DEFINITIONS, EARLIER_RUNS = "(views and macros)", "(runs before the chain)"
OBJECTS = "(macros' parameters, schemas, sequences, types, indexes, constraints and comments)"
_HERE = "database_name = current_database()"
_OBJECTS = f"""
    SELECT 'macro ' || schema_name || '.' || function_name || '('
        || array_to_string(parameters, ', ') || '): ' || coalesce(macro_definition, '')
        || coalesce(' -- ' || comment, '')
    FROM duckdb_functions() WHERE function_type IN ('macro', 'table_macro') AND NOT internal
        AND {_HERE}
    UNION ALL SELECT 'view ' || schema_name || '.' || view_name || coalesce(' -- ' || comment, '')
    FROM duckdb_views() WHERE NOT internal AND NOT temporary AND {_HERE}
    UNION ALL SELECT 'schema ' || schema_name || coalesce(' -- ' || comment, '')
    FROM duckdb_schemas() WHERE NOT internal AND {_HERE}
    UNION ALL SELECT 'table ' || schema_name || '.' || table_name || coalesce(' -- ' || comment, '')
    FROM duckdb_tables() WHERE NOT temporary AND {_HERE}
    UNION ALL SELECT 'column ' || schema_name || '.' || table_name || '.' || column_name || ' '
        || data_type || CASE WHEN is_nullable THEN '' ELSE ' NOT NULL' END
        || coalesce(' DEFAULT ' || column_default, '') || coalesce(' -- ' || comment, '')
    FROM duckdb_columns() WHERE NOT internal AND {_HERE}
    UNION ALL SELECT 'constraint ' || schema_name || '.' || table_name || ': ' || constraint_text
    FROM duckdb_constraints() WHERE {_HERE}
    UNION ALL SELECT 'sequence ' || schema_name || '.' || sequence_name || ': ' || sql
    FROM duckdb_sequences() WHERE NOT temporary AND {_HERE}
    UNION ALL SELECT 'type ' || schema_name || '.' || type_name || ': ' || logical_type
    FROM duckdb_types() WHERE NOT internal AND {_HERE}
    UNION ALL SELECT 'index ' || schema_name || '.' || index_name || ': ' || coalesce(sql, '')
    FROM duckdb_indexes() WHERE {_HERE}
    ORDER BY 1
"""


def _beside_tables(con: duckdb.DuckDBPyConnection, run_id: str) -> dict[str, str]:
    definitions = con.execute(
        "SELECT 'view ' || view_name || ': ' || sql FROM duckdb_views() "
        "WHERE NOT internal AND NOT temporary AND database_name = current_database() "
        "UNION ALL SELECT 'macro ' || function_name || ': ' || "
        "coalesce(macro_definition, '') FROM duckdb_functions() "
        "WHERE function_type IN ('macro', 'table_macro') AND NOT internal "
        "AND database_name = current_database() ORDER BY 1"
    ).fetchall()
    objects = con.execute(_OBJECTS).fetchall()
    earlier = [
        row_text(r) for r in run_rows(con) if not r.get("table_digests") and r["run_id"] != run_id
    ]
    return {
        DEFINITIONS: _digest_of([d for (d,) in definitions]),
        OBJECTS: _digest_of([o for (o,) in objects]),
        EARLIER_RUNS: _digest_of(earlier),
    }


def _digest_of(texts: list[str]) -> str:
    return hashlib.sha256(json.dumps(texts, ensure_ascii=False).encode()).hexdigest()


def _held_seals(con: duckdb.DuckDBPyConnection) -> dict[str, list[Segment]]:
    rows = con.execute(
        'SELECT "table", segment, "rows", digest FROM seals ORDER BY "table", segment'
    ).fetchall()
    held: dict[str, list[Segment]] = {}
    for table, number, count, digest in rows:
        held.setdefault(table, []).append(Segment(table, number, count, digest))
    return held


def _seal_rows(parts: list[Segment]) -> pa.Table:
    return pa.table(
        {
            "table": pa.array([s.table for s in parts], pa.string()),
            "segment": pa.array([s.segment for s in parts], pa.int64()),
            "rows": pa.array([s.rows for s in parts], pa.int64()),
            "digest": pa.array([s.digest for s in parts], pa.string()),
        }
    )


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> list[str]:
    """A table's columns as `name TYPE`: a column whose type changes changes the digest."""
    return [f"{name} {kind}" for name, kind, *_ in con.execute(f'DESCRIBE "{table}"').fetchall()]


def seal_run(
    con: duckdb.DuckDBPyConnection,
    run_id: str,
    replaces: str | None = None,
    signer: Ed25519PrivateKey | None = None,
    ready: Mapping[str, list[Segment]] | None = None,
) -> str:
    """Once the run's row is stored and every table final: the tables sealed, and the
    run's row given their digests, the chain digest of the run before it (none for a
    plain run, which says instead which audit it `replaces`), its own chain digest,
    which is returned, and with `signer`, its signature (`signing.py`); `ready`: tables
    already digested (`growing_segments`)."""
    pause_at("sealing", con)
    digests = seal(con, run_id, ready)
    before = con.execute(
        "SELECT chain_digest FROM runs WHERE run_id <> ? "
        "ORDER BY finished_at DESC, run_id DESC LIMIT 1",
        [run_id],
    ).fetchall()
    con.execute(
        "UPDATE runs SET table_digests = ?, previous_digest = ?, replaces_digest = ? "
        "WHERE run_id = ?",
        [json.dumps(digests, sort_keys=True), before[0][0] if before else None, replaces, run_id],
    )
    row = run_rows(con, "WHERE run_id = ?", run_id)[0]
    digest = hashlib.sha256(row_text(row).encode()).hexdigest()
    signature, public = sign(signer, digest) if signer is not None else (None, None)
    con.execute(
        "UPDATE runs SET chain_digest = ?, signature = ?, public_key = ? WHERE run_id = ?",
        [digest, signature, public, run_id],
    )
    return digest


def replaced_digest(db: Path) -> str | None:
    """The chain digest of the last run of the audit at `db`, which a plain run is about
    to replace (None if there is none, or it cannot be read)."""
    if not db.is_file():
        return None
    try:
        with duckdb.connect(str(db), read_only=True, config=OFFLINE) as con:
            if not has_column(con, "runs", "chain_digest"):
                return None
            found = con.execute(
                "SELECT chain_digest FROM runs ORDER BY finished_at DESC, run_id DESC LIMIT 1"
            ).fetchall()
    except duckdb.Error:
        return None
    return found[0][0] if found else None


def run_rows(con: duckdb.DuckDBPyConnection, where: str = "", *params: Any) -> list[dict[str, Any]]:
    result = con.execute(f"SELECT * FROM runs {where} ORDER BY finished_at, run_id", list(params))
    names = [d[0] for d in result.description or ()]
    return [dict(zip(names, row, strict=True)) for row in result.fetchall()]


def row_text(row: dict[str, Any]) -> str:
    """A runs row as the text its chain digest is taken of: its values but those of
    UNCHAINED, as JSON with sorted keys (times in UTC, amounts as text)."""
    kept = {k: _plain(v) for k, v in row.items() if k not in UNCHAINED}
    return json.dumps(kept, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def refuse_if_altered(con: duckdb.DuckDBPyConnection, db: Path) -> None:
    """Before an append adds anything: the audit as its last run sealed it, or a
    sentence and exit 2 (an append would seal the edit into the chain)."""
    runs = run_rows(con)
    found = _unchained(con, runs)
    if not found and unsealed_runs(runs) == len(runs):
        return  # written before audits were sealed: this append seals it from now on
    found = found or _chain_breaks(runs) + changed_since_sealed(con, runs, whole=False)
    if found:
        raise LedgerError(
            f"The audit {db} was altered since its last run ({found[0]}"
            + (f" and {len(found) - 1} more" if len(found) > 1 else "")
            + "): an append would seal the edit. `handaudit check` names what changed; "
            "restore the audit, or audit every input again into a new directory."
        )


def altered(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Where the audit differs from its seals and its chain, a sentence each (none: intact)."""
    try:
        runs = run_rows(con)
    except duckdb.Error as error:  # dropped, or a column the chain is read by
        why = str(error).splitlines()[0]
        return [f"Table runs was dropped or altered: it cannot be read as a chain ({why})."]
    if unsealed_runs(runs) == len(runs):
        return _unchained(con, runs) or [
            "The audit holds no chain of runs: it was written before audits were sealed."
        ]
    return _chain_breaks(runs) + changed_since_sealed(con, runs)


def unsigned(con: duckdb.DuckDBPyConnection, signer: Ed25519PublicKey) -> list[str]:
    """Every run of the chain not signed by `signer`, a sentence each."""
    try:
        return _unsigned(run_rows(con), signer)
    except duckdb.Error:
        return []  # `altered` says why the runs cannot be read


def changed_since_sealed(
    con: duckdb.DuckDBPyConnection, runs: list[dict[str, Any]], whole: bool = True
) -> list[str]:
    """How the tables differ from the digests of the last run, a sentence each. Not
    `whole` (an append, before it adds anything): the growing tables' earlier full
    segments are taken as sealed, but the seals themselves are checked against the
    run's digests, so that an edit cannot be carried forward with forged seals."""
    try:
        sealed = json.loads(runs[-1].get("table_digests") or "{}")
        assert isinstance(sealed, dict)
    except (ValueError, AssertionError):
        return ["The last runs row's table digests were altered: they are not a table of digests."]
    try:
        held = _held_seals(con)
    except duckdb.Error:
        return ["Table seals was dropped or altered: the segments' digests cannot be read."]
    found = []
    for name, current in _beside_tables(con, str(runs[-1]["run_id"])).items():
        if sealed.get(name) not in (None, current):
            found.append(f"The audit's {name[1:-1]} were altered.")
    tables = set(sealed_tables(con))
    for table in sorted({t for t in sealed if not t.startswith("(")} | tables):
        parts = held.get(table, [])
        here = _table_changes(con, table, sealed.get(table), parts, whole)
        forged = (
            not here
            and table in sealed
            and table in tables
            and table_digest(table, _columns(con, table), parts) != sealed[table]
        )
        if forged:
            here = [f"Table seals was altered: the segments of {table} are not those sealed."]
        found += here
    return found


def was_sealed(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the audit was written (or appended to) by a version that seals: it holds
    the table of seals, or says its version is that of sealed audits."""
    return has_table(con, "seals") or schema_version(con) >= SEALED_SINCE


# The first version of the audit's tables that every run seals.
SEALED_SINCE = 5


def _unchained(con: duckdb.DuckDBPyConnection, runs: list[dict[str, Any]]) -> list[str]:
    """A sealed audit whose runs rows hold no seals any more: stripped of them, as if
    written before audits were sealed (so that an append would seal an edit)."""
    if unsealed_runs(runs) < len(runs) or not was_sealed(con):
        return []
    return [
        "Table runs was altered: no runs row holds its seals any more, where the audit was "
        "sealed (it holds the table of seals and says so by its version)."
    ]


def unsealed_runs(runs: list[dict[str, Any]]) -> int:
    """How many runs came before the chain: written before audits were sealed (an
    append to such an audit seals it from then on)."""
    return next((n for n, row in enumerate(runs) if row.get("table_digests")), len(runs))


def _chained(runs: list[dict[str, Any]]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The runs of the chain (those after the runs before it), each with the words that
    name it in a sentence."""
    for n, row in enumerate(runs, 1):
        if n > unsealed_runs(runs):
            yield f"runs row {n} (run {row['run_id']}, finished {_plain(row['finished_at'])})", row


def _chain_breaks(runs: list[dict[str, Any]]) -> list[str]:
    found, previous = [], None
    for where, row in _chained(runs):
        if row.get("chain_digest") != hashlib.sha256(row_text(row).encode()).hexdigest():
            found.append(f"{where} was altered: its values no longer give its chain digest.")
        if row.get("mode") == "append" and row.get("previous_digest") != previous:
            found.append(f"{where} does not follow the run before it (the chain is broken there).")
        signed = row.get("signature") or row.get("public_key")
        if signed and not signed_by_own_key(
            row.get("chain_digest") or "", row.get("signature"), row.get("public_key")
        ):
            found.append(f"{where} was altered: its signature is not that of the key it keeps.")
        previous = row.get("chain_digest")
    return found


def _unsigned(runs: list[dict[str, Any]], signer: Ed25519PublicKey) -> list[str]:
    found = []
    for where, row in _chained(runs):
        if not row.get("signature"):
            found.append(f"{where} is not signed.")
        elif not signed_by(signer, row["chain_digest"] or "", row["signature"]):
            found.append(
                f"{where} is not signed by the key given (its signature is another key's, "
                "or its chain digest was rewritten)."
            )
        elif row.get("public_key") != fingerprint(signer):
            found.append(f"{where} was altered: the public key it keeps is not the signer's.")
    return found


def _table_changes(
    con: duckdb.DuckDBPyConnection,
    table: str,
    sealed: str | None,
    held: list[Segment],
    whole: bool = True,
) -> list[str]:
    if sealed is None:
        return [f"Table {table} was added after the audit was sealed."]
    if table not in sealed_tables(con):
        return [f"Table {table} was dropped from the audit."]
    if not whole and table in GROWING and held:
        # The last sealed segment read again: what an append seals anew of the old rows.
        last = held[-1]
        found = next(iter(segments(con, table, first=last.segment)), None)
        again = found if found is None or found.rows <= last.rows else None
        if again is None or _prefix(con, table, last) != last.digest:
            return [f"Table {table} was altered: {_where(con, table, [last], held)}."]
        return []
    parts = list(segments(con, table))
    if table_digest(table, _columns(con, table), parts) == sealed:
        return []
    rows, was = sum(s.rows for s in parts), sum(s.rows for s in held)
    changed = [p for p, h in zip(parts, held, strict=False) if p != h]
    if len(parts) != len(held) and not changed:
        changed = parts[min(len(parts), len(held)) - 1 :]
    counted = f"it holds {rows:,} rows where {was:,} were sealed; " if rows != was else ""
    return [f"Table {table} was altered: {counted}{_where(con, table, changed, held)}."]


def _prefix(con: duckdb.DuckDBPyConnection, table: str, last: Segment) -> str:
    """The digest of the first `last.rows` rows of segment `last.segment`, as they are."""
    first = last.segment * SEGMENT_ROWS
    rows = con.sql(f'SELECT * FROM "{table}" LIMIT {last.rows} OFFSET {first}').to_arrow_table()
    return segment_digest(table, last.segment, rows).digest


def _where(
    con: duckdb.DuckDBPyConnection, table: str, changed: list[Segment], held: list[Segment]
) -> str:
    """Which rows (and hands) of the table differ from the seals, as far as they tell."""
    if not held:
        return "its seals are gone"
    if not changed:
        return "its columns or its seals were changed"
    first = changed[0].segment * SEGMENT_ROWS
    span = (
        f"rows from {first + 1:,}"
        if len(changed) > 1
        else (f"rows {first + 1:,} to {first + changed[0].rows:,}")
    )
    if "hand_id VARCHAR" not in _columns(con, table) or len(changed) > 1:
        return f"the {span} differ"
    ids = con.execute(  # the segment's rows first, then their hands, in the rows' order
        f"SELECT hand_id FROM (SELECT hand_id, row_number() OVER () AS n FROM "
        f'(SELECT hand_id FROM "{table}" LIMIT {changed[0].rows} OFFSET {first})) '
        "GROUP BY hand_id ORDER BY min(n)"
    ).fetchall()
    named = ", ".join(str(i) for (i,) in ids[:NAMED_HANDS])
    more = f" and {len(ids) - NAMED_HANDS:,} more" if len(ids) > NAMED_HANDS else ""
    return f"the {span} differ (hands {named}{more})"
