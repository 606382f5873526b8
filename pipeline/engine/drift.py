"""After an append: the tables whose new hands fit another profile of the audit better
than the one they are mapped to, one line each (house-rules.md; `rules infer` finds
which values they fit).

Run only when some new hand diverged, so that a clean day costs nothing. The new hands
are read again and scored under each profile of their game that the audit holds; a
table is named when another profile fits at least MIN_GAIN more of its new hands than
the one its hands were audited under. It is a summary line, never a divergence.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pyarrow as pa

from pipeline.core.inference import MIN_GAIN
from pipeline.core.rules import RuleBook
from pipeline.engine.infer import table_hands
from pipeline.engine.pool import read_pool


def rules_drift(files: list[Path], db: Path, book: RuleBook) -> list[str]:
    """One line per table whose new hands (those of `files`) fit a profile of `book`
    better than their mapped one, as the audit in `db` holds them."""
    pool = read_pool(files)
    if not len(pool):
        return []
    with duckdb.connect(str(db), read_only=True) as con:
        ids = pa.table({"hand_id": pa.array(pool.hand_id, pa.string())})
        con.register("drift_ids", ids)
        mapped = dict(
            con.execute(
                "SELECT hand_id, rules FROM hands WHERE hand_id IN (SELECT hand_id FROM drift_ids)"
            ).fetchall()
        )
    lines = []
    for table_id, hands in table_hands(pool):
        names = Counter(mapped.get(pool.hand_id[int(h)]) for h in hands)
        name, _ = names.most_common(1)[0]
        if name is None:
            continue
        game = pool.game[int(hands[0])]
        profiles = [p for p in book.profiles if p.game == game]
        own = next((p for p in profiles if p.name == name), None)
        if own is None:
            continue
        fits = {p.name: int(pool.exact(p, hands).sum()) for p in profiles}
        best = max(fits, key=lambda n: fits[n])
        if best != name and fits[best] >= fits[name] + MIN_GAIN:
            since = datetime.fromtimestamp(pool.started_at[int(hands[0])] / 1e6, tz=UTC)
            lines.append(
                f"table {table_id}: {fits[best]:,} of its {len(hands):,} new hands since "
                f"{since:%Y-%m-%d} fit profile {best} better than its mapped profile {name} "
                f"({fits[name]:,}); `handaudit rules infer` tells which values they fit"
            )
    return lines
