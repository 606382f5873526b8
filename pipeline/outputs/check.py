"""`handaudit check`: the audit's seals and chain recomputed, and what differs named."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from pipeline.storage.chain import altered, run_rows, unsealed_runs, unsigned
from pipeline.storage.signing import fingerprint
from pipeline.storage.store import open_audit


@dataclass(frozen=True)
class Checked:
    intact: bool
    text: str


def check_audit(db: Path, signer: Ed25519PublicKey | None = None) -> Checked:
    """Every table of the audit at `db` digested again and the chain of runs followed;
    with `signer`, every run's signature verified with that key."""
    with open_audit(db, tables_may_be_gone=True) as con:
        found = altered(con)
        unsigned_runs = unsigned(con, signer) if signer is not None else []
        if found or unsigned_runs:
            what = "was altered after it was written" if found else "is not signed as asked"
            head = f"The audit {db} {what} ({len(found) + len(unsigned_runs)} found):"
            lines = [*found, *unsigned_runs]
            return Checked(False, "\n".join([head, *(f"- {line}" for line in lines)]))
        every = run_rows(con)
        runs, before = len(every), unsealed_runs(every)
        tables, rows = con.execute(
            'SELECT count(DISTINCT "table"), coalesce(sum("rows"), 0) FROM seals'
        ).fetchall()[0]
    plural = "run" if runs - before == 1 else "runs"
    earlier = (
        f" ({before:,} earlier run{'s' if before > 1 else ''} written before audits were "
        "sealed: their rows are outside the chain)"
        if before
        else ""
    )
    signed = f", every run signed by the key {fingerprint(signer)}" if signer else ""
    return Checked(
        True,
        f"The audit {db} is intact: {runs - before:,} {plural} chained{earlier}, {tables} "
        f"tables sealed ({rows:,} rows), every digest as written{signed}.",
    )
