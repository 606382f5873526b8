"""The stored tables of an audit, in one place: each one's name and columns, whether it is
partitioned by day, when its rows are final, and the name a user reads it by. The store
creates them from here, the Parquet output and the Spark engine's partitions and early
loads are derived from here, and the layouts' row tables are named from `audit.ROW_TABLES`.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.core.audit import ROW_TABLES
from pipeline.core.games import LAYOUTS, Layout, Variant
from pipeline.helpers.packing import CARDS, VALUES

MONEY = "DECIMAL(18,2)"
# What each run's row adds to chain it to the run before it (`storage.chain`).
RUN_CHAIN = (
    "previous_digest VARCHAR, replaces_digest VARCHAR, table_digests VARCHAR, "
    "chain_digest VARCHAR, signature VARCHAR, public_key VARCHAR"
)
SEALS = '"table" VARCHAR, segment BIGINT, "rows" BIGINT, digest VARCHAR'
# Boards a hand may show (the Taiwanese layout's).
LAYOUT = LAYOUTS[Layout.taiwanese]


@dataclass(frozen=True)
class StoredTable:
    name: str
    columns: str  # DuckDB's column definitions
    by_day: bool = False  # written by the day of its hand where a dataset is partitioned
    # The table of audit-output.md a user reads its rows in: its own name, or a view's
    # (`rows`); None for the tables that serve the views and the runs.
    published_as: str | None = None
    # Final once the unit of hands that wrote it is audited (the table rules add to
    # `hands` and `divergences` later, the quarantine gathers every unit's).
    early: bool = False
    # Only ever added to, never rewritten (every `early` table, and two more):
    # a run seals their earlier full segments once (`storage.chain`).
    grows: bool = False


def _row_values(layout: Variant, extra: str) -> str:
    """The columns of a layout's row values: a player's cards and values as words
    (`packing.py`), and `extra`."""
    words = [
        *CARDS.columns(layout.cards_per_player),
        *VALUES.columns(layout.values_per_player),
    ]
    return f"""
        hand_id VARCHAR, seat BIGINT, {", ".join(f"{w} BIGINT" for w in words)}, {extra}"""


STORED: tuple[StoredTable, ...] = (
    StoredTable(
        "hands",
        f"""
        hand_id VARCHAR, table_id VARCHAR, hand_no BIGINT, started_at TIMESTAMPTZ, day DATE,
        variant VARCHAR, currency VARCHAR, point_value {MONEY}, rake_rate DECIMAL(18,9),
        rake_cap {MONEY}, n_players BIGINT, rake_total {MONEY}, recorded_rake_total {MONEY},
        {", ".join(f"board_{b + 1} VARCHAR" for b in range(LAYOUT.boards))},
        status VARCHAR, source VARCHAR, record_digest VARCHAR, scoring VARCHAR,
        surrender_points BIGINT, fantasyland_rule BOOLEAN, rules VARCHAR""",
        by_day=True,
        published_as="hands",
    ),
    StoredTable(
        "players",
        f"""
        hand_id VARCHAR, seat BIGINT, player_id VARCHAR, stack_start {MONEY}, add_on {MONEY},
        timed_out BOOLEAN, points BIGINT, won {MONEY}, rake {MONEY}, net {MONEY},
        stack_end {MONEY}, recorded_points BIGINT, recorded_won {MONEY},
        recorded_rake {MONEY}, recorded_net {MONEY}, recorded_stack_end {MONEY},
        fouled BOOLEAN, recorded_fouled BOOLEAN, declare VARCHAR, "natural" VARCHAR,
        fantasyland BOOLEAN, fantasyland_next BOOLEAN, recorded_fantasyland_next BOOLEAN,
        fantasyland_cards BIGINT, cards_dealt BIGINT""",
        by_day=True,
        published_as="players",
        early=True,
        grows=True,
    ),
    # The `rows` view reads these: each player's setting and row values are stored once
    # per player, in the table of the layout of their game, packed into 64-bit words
    # (cards: top, middle, bottom as card codes; values board-major: board 1 top, middle,
    # bottom, then board 2), and their text, category and label come from `hand_values`.
    StoredTable(
        ROW_TABLES[Layout.taiwanese],
        _row_values(LAYOUTS[Layout.taiwanese], "joker_as VARCHAR[][]"),
        by_day=True,
        published_as="rows",
        early=True,
        grows=True,
    ),
    StoredTable(
        ROW_TABLES[Layout.chinese],
        _row_values(LAYOUTS[Layout.chinese], "royalties TINYINT[3]"),
        by_day=True,
        published_as="rows",
        early=True,
        grows=True,
    ),
    StoredTable(
        "hand_values",
        "value_id SMALLINT, value VARCHAR, category VARCHAR, label VARCHAR",
        grows=True,
    ),
    # How each pair was decided (`games.game.Decision`): the case (DECIDED), whose natural,
    # surrender or foul it was, the rows each side won (bit k: row k, board by board), the
    # bonus's points, and the royalties counted per row (the family's; NULL for Taiwanese).
    StoredTable(
        "settlements",
        f"""
        hand_id VARCHAR, seat BIGINT, opponent BIGINT, points BIGINT, home_run VARCHAR,
        amount {MONEY}, decided VARCHAR, decided_by VARCHAR, rows_won SMALLINT,
        rows_lost SMALLINT, bonus BIGINT, royalties INTEGER[], opponent_royalties INTEGER[]""",
        by_day=True,
        published_as="settlements",
        early=True,
        grows=True,
    ),
    StoredTable(
        "sitting_out",
        f"hand_id VARCHAR, seat BIGINT, player_id VARCHAR, stack {MONEY}, reason VARCHAR",
        published_as="sitting_out",
        early=True,
        grows=True,
    ),
    # The audit's findings and the table rules' (`storage.table_rules.TABLE_FINDING` tells them
    # apart): a finding is its hand, check and place.
    StoredTable(
        "divergences",
        """
        hand_id VARCHAR, table_id VARCHAR, "check" VARCHAR, seat BIGINT, opponent BIGINT,
        board BIGINT, "row" VARCHAR, expected VARCHAR, recorded VARCHAR, message VARCHAR""",
        published_as="divergences",
    ),
    # The `streets` view reads this: each open-face player's streets are stored once, as
    # one list of numbers (store.STREETS_VIEW says how they read).
    StoredTable(
        "player_streets",
        "hand_id VARCHAR, seat BIGINT, streets INTEGER, placements UINTEGER[]",
        early=True,
        grows=True,
    ),
    StoredTable(
        "quarantine",
        'source VARCHAR, hand_id VARCHAR, "check" VARCHAR, message VARCHAR, raw VARCHAR, '
        "record_digest VARCHAR",
        published_as="quarantine",
    ),
    # The players of quarantined records as far as their JSON reads, for the table rules
    # (`storage.table_rules.QUARANTINE_APPEARANCES` derives them from `quarantine`).
    StoredTable(
        "quarantine_appearances",
        f"""
        table_id VARCHAR, hand_no BIGINT, hand_id VARCHAR, started_at TIMESTAMPTZ,
        player_id VARCHAR, seat BIGINT, stack_start {MONEY}, add_on {MONEY},
        stack_end {MONEY}, timed_out BOOLEAN""",
        grows=True,
    ),
    StoredTable(
        "runs",
        f"""
        run_id VARCHAR, version VARCHAR, mode VARCHAR, inputs VARCHAR[],
        input_digests VARCHAR[], files_skipped BIGINT, hands_already_audited BIGINT,
        started_at TIMESTAMPTZ, finished_at TIMESTAMPTZ, records_read BIGINT,
        verified BIGINT, quarantined BIGINT, hands_diverged BIGINT, divergences BIGINT,
        rake_total DECIMAL(18,2), recorded_rake_total DECIMAL(18,2), seconds DOUBLE,
        {RUN_CHAIN}""",
        published_as="runs",
    ),
    # Each stored table's digest, segment by segment, as the last run sealed them
    # (`storage.seals`, `storage.chain`).
    StoredTable("seals", SEALS),
    # The house-rules profiles the audit's hands were audited under (house-rules.md 3):
    # the standard one of each game and a rules file's, with the values each sets (JSON)
    # and their digest; the floor (rules.md 7) for the rules across hands. And the
    # rules file's map of tables to profiles, in its order, for an append to reuse.
    StoredTable(
        "rule_profiles",
        'name VARCHAR, game VARCHAR, "values" VARCHAR, digest VARCHAR, floor_points BIGINT',
    ),
    StoredTable(
        "rule_tables",
        'entry BIGINT, "match" VARCHAR, profile VARCHAR, "from" TIMESTAMPTZ, until TIMESTAMPTZ',
    ),
    # The version of these tables (`ledger.SCHEMA_VERSION`), for an append to check.
    StoredTable("audit_info", "schema_version INTEGER, written_by VARCHAR"),
)
# Each table's DuckDB columns, by name.
COLUMNS = {table.name: table.columns for table in STORED}
# What a user sees: the tables of audit-output.md, `rows` (a view) in its place.
PUBLISHED = tuple(dict.fromkeys(t.published_as for t in STORED if t.published_as))
BY_DAY = tuple(t.name for t in STORED if t.by_day)
# The tables final once their unit of hands is audited (the Spark engine loads them early).
EARLY = tuple(t.name for t in STORED if t.early)
# The tables only ever added to.
GROWING = tuple(t.name for t in STORED if t.grows)
