"""Writes the audit to DuckDB (and Parquet on request); computes nothing of the audit itself.

Results go to a file beside the final one and replace it atomically at the end, so
an interrupted run leaves the last complete audit readable.
"""

from __future__ import annotations

import os
import shutil
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from pipeline import __version__
from pipeline.core.audit import ROW_TABLES
from pipeline.core.batch import STREET_PARTS
from pipeline.core.evaluator.values import hand_values
from pipeline.core.games import LAYOUTS, Layout, Variant
from pipeline.helpers.encoding import MACROS, macros_sql
from pipeline.helpers.errors import AuditError
from pipeline.helpers.interrupts import audit_written, interrupts_held, pause_at
from pipeline.helpers.packing import CARDS, VALUES
from pipeline.helpers.stages import NO_STAGES, Stages
from pipeline.ingest.quarantine import Quarantined
from pipeline.storage.chain import replaced_digest, seal_run
from pipeline.storage.connection import (
    connected,
    has_table,
    is_locked,
    not_duckdb,
    writer_config,
)
from pipeline.storage.files import DB_NAME, log_of, partial_db, spill_dir
from pipeline.storage.ledger import SCHEMA_VERSION
from pipeline.storage.repeats import tell_repeats
from pipeline.storage.stored import COLUMNS, PUBLISHED
from pipeline.storage.table_rules import QUARANTINE_APPEARANCES

__all__ = [
    "DB_NAME",
    "AuditStore",
    "NoAuditError",
    "ParquetLoad",
    "audited_inputs",
    "insert_rows",
    "open_audit",
]


# Rows of one table kept in memory before they go into DuckDB in one statement: four of
# DuckDB's row groups (122,880 rows each). Whole row groups are written compressed
# straight to the file; small inserts go through the write-ahead log, and partly filled
# row groups are compressed again at checkpoints. On 200,000 hands, the store took 7.0
# CPU-s one block at a time, 4.6 with two row groups, 3.8 with four (and its final
# checkpoint 0.9 s, then 0.3 s).
ROW_GROUP = 122_880
FLUSH_ROWS = 4 * ROW_GROUP
# Threads inserting buffered tables while the audit goes on.
INSERT_THREADS = 2


def _row_places(layout: Variant) -> str:
    """Per stored value: its index among the player's values (from 1), its board (NULL
    without boards) and row, and the first and last of the row's cards among the
    player's (from 0), as SQL VALUES."""
    places = []
    for b in range(max(layout.boards, 1)):
        first = 0
        board = b + 1 if layout.boards else "NULL::BIGINT"
        for r, row in enumerate(layout.rows):
            i = b * len(layout.rows) + r + 1
            places.append(f"({i}, {board}, '{row.name}', {first}, {first + row.size - 1})")
            first += row.size
    return ", ".join(places)


def _spread_rows(table: str, layout: Variant, extra: str) -> str:
    card = CARDS.unpacked_sql("r", "c", CARDS.words(layout.cards_per_player))
    value = VALUES.unpacked_sql("r", "k.i - 1", VALUES.words(layout.values_per_player))
    return f"""
SELECT r.hand_id, r.seat, k.board, k."row",
       array_to_string(list_transform(range(k.first, k.last + 1),
                                      lambda c: card_text({card})), ' ') AS cards,
       v.value, v.category, v.label, {extra}
FROM {table} r
CROSS JOIN (VALUES {_row_places(layout)}) AS k(i, board, "row", first, last)
JOIN hand_values v ON v.value_id = {value}"""


ROWS_VIEW = (
    "CREATE VIEW rows AS"
    + _spread_rows(
        ROW_TABLES[Layout.taiwanese],
        LAYOUTS[Layout.taiwanese],
        "r.joker_as[k.i] AS joker_as, NULL::INTEGER AS royalty",
    )
    + "\nUNION ALL"
    + _spread_rows(
        ROW_TABLES[Layout.chinese],
        LAYOUTS[Layout.chinese],
        "NULL::VARCHAR[] AS joker_as, r.royalties[k.i]::INTEGER",
    )
)
# Each placement's part is an index into STREET_PARTS (helpers.encoding).
STREETS_VIEW = (
    "CREATE VIEW streets AS SELECT hand_id, seat, street, "
    + ", ".join(
        "array_to_string(list_transform(list_filter(placements, lambda p: street_of(p) = "
        f"street AND part_of(p) = {part}), lambda p: card_text(placed_card(p))), ' ') "
        f"AS {name}"
        for part, name in enumerate(STREET_PARTS)
    )
    + " FROM (SELECT *, unnest(generate_series(1, streets)) AS street FROM player_streets)"
)


def insert_rows(con: duckdb.DuckDBPyConnection, table_name: str, rows: pa.Table) -> None:
    """Arrow rows into a table, by column name (DuckDB casts to the table's types)."""
    con.register("incoming", rows)
    try:
        con.execute(f"INSERT INTO {table_name} BY NAME SELECT * FROM incoming")
    finally:
        con.unregister("incoming")


def quarantine_table(rows: list[Quarantined]) -> pa.Table:
    """Quarantine rows as the columns of the quarantine table."""
    return pa.table(
        {
            "source": pa.array([q.source for q in rows], pa.string()),
            "hand_id": pa.array([q.hand_id for q in rows], pa.string()),
            "check": pa.array([q.check.value for q in rows], pa.string()),
            "message": pa.array([q.message for q in rows], pa.string()),
            "raw": pa.array([q.raw for q in rows], pa.string()),
            "record_digest": pa.array([q.digest for q in rows], pa.string()),
        }
    )


class NoAuditError(AuditError):
    """No audit database where one was asked for."""


def open_audit(db: Path, tables_may_be_gone: bool = False) -> duckdb.DuckDBPyConnection:
    """A finished audit database, read-only, for reports and explanations.
    `tables_may_be_gone`: one that holds `runs` or `seals` will do (`check` names what is
    missing)."""
    if not db.exists():
        raise NoAuditError(f"There is no audit database at {db}; run `handaudit verify` first.")
    if db.is_dir():
        raise NoAuditError(
            f"{db} is a directory: give the audit database in it (such as {db / DB_NAME})."
        )
    try:
        con = connected(db, read_only=True)
    except duckdb.Error as error:
        if "different configuration" in str(error):
            raise NoAuditError(
                f"A connection of this process holds the audit {db} already, opened for "
                "writing: close it (or open it with read_only=True) and read again."
            ) from None
        if not (isinstance(error, duckdb.IOException) and is_locked(error)):
            raise NoAuditError(f"{db} is not an audit database: {not_duckdb(error)}.") from None
        raise NoAuditError(
            f"The audit {db} is being written by another process (an append under way): "
            "DuckDB lets no one read a file while one process writes it. Try again when it "
            "has finished."
        ) from None
    sealed = has_table(con, "runs") or has_table(con, "seals")  # its runs may be gone
    if not is_audit(con) and not (tables_may_be_gone and sealed):
        con.close()
        raise NoAuditError(
            f"{db} is a DuckDB database, but not an audit (it has no audit tables): give "
            "the audit.duckdb that `handaudit verify` wrote."
        )
    if not has_macros(con):  # written before audits held them: this connection's own
        con.execute(macros_sql(temporary=True))
    return con


def has_macros(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether a database holds the encoding macros (an audit written before audits held
    them does not, until it is next appended to)."""
    names = [name for name, _, _ in MACROS]
    found = con.execute(
        "SELECT count(DISTINCT function_name) FROM duckdb_functions() "
        "WHERE function_name IN (SELECT unnest(?::VARCHAR[]))",
        [names],
    ).fetchall()
    return bool(found) and found[0][0] == len(names)


def audited_inputs(db: Path) -> tuple[Path, ...]:
    """The inputs (files and directories) the audit's runs read, as they stored them."""
    with open_audit(db) as con:
        rows = con.execute("SELECT DISTINCT unnest(inputs) FROM runs").fetchall()
    return tuple(Path(i) for (i,) in rows if i and "://" not in i)


def is_audit(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether a database holds an audit's tables."""
    return has_table(con, "hands", "players", "divergences", "quarantine", "runs")


class AuditStore:
    """An audit database being written; `commit` publishes it, `discard` drops it.

    Given `con`, the rows go into that connection's database instead (an append writes
    into the audit itself, in its transaction), and the caller commits or rolls back."""

    def __init__(
        self,
        out_dir: Path,
        stages: Stages = NO_STAGES,
        con: duckdb.DuckDBPyConnection | None = None,
    ) -> None:
        self.out_dir = out_dir
        self.stages = stages  # the inserts' seconds count as the "store" stage
        self.final = out_dir / DB_NAME
        self.partial = partial_db(out_dir)
        self._pending: dict[str, list[pa.Table]] = {name: [] for name in COLUMNS}
        self._inserters = ThreadPoolExecutor(INSERT_THREADS, thread_name_prefix="store")
        self._inserting: dict[str, Future[None]] = {}
        self._cursors: dict[str, duckdb.DuckDBPyConnection] = {}
        if con is not None:
            self.con = con
            return
        out_dir.mkdir(parents=True, exist_ok=True)
        self.partial.unlink(missing_ok=True)
        try:
            self.con = self._new_database()
        except BaseException:  # interrupted, or out of memory: nothing left behind
            self.discard()
            raise

    def _new_database(self) -> duckdb.DuckDBPyConnection:
        con = connected(
            self.partial,
            read_only=False,
            config={
                **writer_config(self.out_dir),
                # Checkpoint now and then, not at every 16 MB (each checkpoint
                # recompresses), nor only at the end (appended rows would stay in
                # memory until then: 1.73 GB peak for a million hands, 1.39 at 256 MB).
                "checkpoint_threshold": "256MB",
                # An insert on one thread fills whole row groups (`_insert`); queries
                # get every core back after the inserts (`flush`, done).
                "threads": 1,
            },
        )
        self.con = con
        for name, columns in COLUMNS.items():
            con.execute(f"CREATE TABLE {name} ({columns})")
        self.append("hand_values", hand_values())
        con.execute(
            "INSERT INTO audit_info VALUES (?, ?)", [SCHEMA_VERSION, f"handaudit {__version__}"]
        )
        con.execute(macros_sql())
        con.execute(ROWS_VIEW)
        con.execute(STREETS_VIEW)
        return con

    def append(self, table_name: str, rows: pa.Table) -> None:
        """Add rows to a table, in order; they are in the database after `flush`."""
        if rows.num_rows == 0:
            return
        pending = self._pending[table_name]
        pending.append(rows)
        if sum(part.num_rows for part in pending) >= FLUSH_ROWS:
            self._insert(table_name, whole_groups=True)

    def flush(self, done: bool = False) -> None:
        """Write every buffered row, so that queries see all that was appended; `done`:
        no more rows come but the run's own, and queries may use every core."""
        for name in COLUMNS:
            self._insert(name)
        for name in COLUMNS:
            self._wait(name)
        if done:
            self.con.execute("RESET threads")

    def _insert(self, table_name: str, whole_groups: bool = False) -> None:
        """Hand a table's buffered rows to the store's threads. One table's inserts run
        one after another (its rows keep their order), two tables' side by side, and
        the caller goes on auditing while DuckDB compresses.

        `whole_groups`: insert whole row groups only, and keep the rest buffered. An
        insert leaves a partly filled row group in the file for each thread that ended
        one, and DuckDB merges such groups at the audit's next checkpoint (on an audit
        of a million hands, 24 of settlements' 92 groups: 1.15 s of the first append's
        checkpoint, 0.2 s once inserts were whole groups on one thread).
        """
        rows = self._take(table_name, whole_groups)
        if rows is None:
            return
        self._wait(table_name)  # one insert per table at a time: memory stays bounded
        self._inserting[table_name] = self._inserters.submit(self._insert_now, table_name, rows)

    def _take(self, table_name: str, whole_groups: bool) -> pa.Table | None:
        """A table's buffered rows to insert now (with `whole_groups`, a multiple of
        ROW_GROUP of them, the others staying buffered)."""
        parts = self._pending[table_name]
        if not parts:
            return None
        rows = pa.concat_tables(parts, promote_options="permissive")
        keep = rows.num_rows % ROW_GROUP if whole_groups else 0
        self._pending[table_name] = [rows.slice(rows.num_rows - keep)] if keep else []
        return rows.slice(0, rows.num_rows - keep)

    def _insert_now(self, table_name: str, rows: pa.Table) -> None:
        con = self._cursors.get(table_name)
        if con is None:  # a connection of its own: DuckDB runs them side by side
            con = self._cursors[table_name] = self.con.cursor()
        with self.stages.stage("store"):
            insert_rows(con, table_name, rows)

    def _wait(self, table_name: str) -> None:
        inserting = self._inserting.pop(table_name, None)
        if inserting is not None:
            inserting.result()

    def quarantine(self, rows: list[Quarantined]) -> None:
        if rows:
            self.append("quarantine", quarantine_table(rows))

    def query(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        self.flush()
        return self.con.execute(sql, list(params)).fetchall()

    def commit(self, parquet: bool = False) -> Path:
        """Write what is buffered, close, and atomically replace the previous audit. Ctrl-C
        interrupts the writing (the previous audit stays), but is held over the swap:
        once swapped in, the audit is done, and an interrupt then must not report it
        undone."""
        self.finish(parquet)
        with interrupts_held():
            pause_at("committing")
            log_of(self.final).unlink(missing_ok=True)  # the replaced audit's, not this one's
            os.replace(self.partial, self.final)
            audit_written()
        return self.final

    def finish(self, parquet: bool = False) -> Path:
        """Write what is buffered and close; the database stays where it was written."""
        self.flush()
        pause_at("checkpointing", self.con)
        self.con.execute("CHECKPOINT")
        if parquet:
            self._write_parquet()
        self._close()
        shutil.rmtree(spill_dir(self.out_dir), ignore_errors=True)
        return self.partial

    def _write_parquet(self) -> None:
        target = self.out_dir / "parquet"
        staging = self.out_dir / f".parquet.{os.getpid()}.partial"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir()
        for name in PUBLISHED:
            self.con.execute(
                f"COPY (SELECT * FROM {name}) TO '{staging / (name + '.parquet')}' (FORMAT parquet)"
            )
        old = self.out_dir / f".parquet.{os.getpid()}.old"
        if target.exists():
            target.rename(old)
        staging.rename(target)
        shutil.rmtree(old, ignore_errors=True)

    def _close(self) -> None:
        """Stop the inserting threads (an insert under way finishes) and close DuckDB."""
        self._inserters.shutdown(wait=True, cancel_futures=True)
        for cursor in self._cursors.values():
            cursor.close()
        con = getattr(self, "con", None)  # none when connecting failed
        if con is not None:
            con.close()

    def discard(self) -> None:
        pause_at("cleaning")
        try:
            self._close()
        finally:
            shutil.rmtree(spill_dir(self.out_dir), ignore_errors=True)
            self.partial.unlink(missing_ok=True)
            log_of(self.partial).unlink(missing_ok=True)


class ParquetLoad:
    """`out_dir/audit.duckdb` built from tables another engine wrote as Parquet, table by
    table as their files are ready (hive-partitioned or not); published atomically by
    `commit`, like `verify`'s."""

    def __init__(self, out_dir: Path) -> None:
        self.store = AuditStore(out_dir)
        self.store.flush(done=True)  # DuckDB reads the Parquet files on every core
        self.derived = False
        self.conflicting = 0  # the repeats with other content, once derived

    def load(self, name: str, files: list[str]) -> None:
        """The rows of `files` (paths or globs) into table `name`."""
        if not files:
            return
        con = self.store.con
        columns = ", ".join(f'"{c}"' for c, *_ in con.execute(f"DESCRIBE {name}").fetchall())
        con.execute(
            f"INSERT INTO {name} BY NAME SELECT {columns} "
            "FROM read_parquet(?, hive_partitioning = true)",
            [files],
        )

    def derive(self) -> duckdb.DuckDBPyConnection:
        """Once every table is loaded: what the audit derives from them (the quarantined
        records' appearances, and the repeated hands told apart, `repeats.py`); the
        connection, to read the tables as they will be published."""
        if not self.derived:
            self.store.con.execute(QUARANTINE_APPEARANCES.format(source="quarantine"))
            self.conflicting = tell_repeats(self.store.con, None)
            self.derived = True
        return self.store.con

    def seal(self) -> duckdb.DuckDBPyConnection:
        """Once derived: the run sealed (its row came with the tables, unsealed)."""
        con = self.derive()
        replaces = replaced_digest(self.store.final)
        for (run_id,) in con.execute(
            "SELECT run_id FROM runs WHERE chain_digest IS NULL"
        ).fetchall():
            seal_run(con, run_id, replaces)
        return con

    def commit(self) -> Path:
        """Derived, sealed, and published."""
        self.seal()
        return self.store.commit()

    def discard(self) -> None:
        self.store.discard()
