"""Table rules across hands (rules.md section 7), over each table's hands in hand_no order.

They run as SQL on the stored audit, so a table's history is sorted and windowed
by DuckDB out of core, whatever the order of lines and files in the input.
Quarantined records whose JSON can still be read take part in the sequence (their
table, hand number, players and stacks), so one bad record does not break the
continuity of everything after it; a comparison across one says so.

A run over a whole audit judges every table; an append (`append.py`) judges the tables
its records touch, from their first new hand number on, and replaces the findings
there: a hand's findings depend on it and the hands before it alone.
"""

from __future__ import annotations

from typing import Protocol

from pipeline.core.checks.findings import DivergenceCheck
from pipeline.ingest.quarantine import QuarantineCheck

# The floor of rules.md section 7 is each hand's profile's (`rule_profiles`: house-rules.md
# 2.1; 0 in the games without one).


class Store(Protocol):
    def query(self, sql: str, *params: object) -> list[tuple[object, ...]]: ...


# The players of quarantined records as far as their JSON can be read, kept beside the
# quarantine (derived once, when the records are stored) so that the rules need not
# parse the quarantine again at every run over the audit.
QUARANTINE_APPEARANCES = """
INSERT INTO quarantine_appearances
WITH quarantined AS (
    SELECT hand_id, raw::JSON AS record
    FROM {source}
    WHERE hand_id IS NOT NULL AND json_valid(raw) AND "check" NOT IN ({repeats})
),
players AS (
    SELECT q.hand_id,
           json_extract_string(q.record, '$.table_id') AS table_id,
           TRY_CAST(json_extract_string(q.record, '$.hand_no') AS BIGINT) AS hand_no,
           TRY_CAST(json_extract_string(q.record, '$.started_at') AS TIMESTAMPTZ) AS started_at,
           unnest(json_extract(q.record, '$.players[*]')) AS player
    FROM quarantined q
)
SELECT table_id, hand_no, hand_id, started_at,
       json_extract_string(player, '$.player_id') AS player_id,
       TRY_CAST(json_extract_string(player, '$.seat') AS BIGINT) AS seat,
       TRY_CAST(json_extract_string(player, '$.stack_start') AS DECIMAL(18,2)) AS stack_start,
       coalesce(TRY_CAST(json_extract_string(player, '$.add_on') AS DECIMAL(18,2)), 0) AS add_on,
       TRY_CAST(json_extract_string(player, '$.stack_end') AS DECIMAL(18,2)) AS stack_end,
       coalesce(TRY_CAST(json_extract_string(player, '$.timed_out') AS BOOLEAN), FALSE)
           AS timed_out
FROM players
WHERE table_id IS NOT NULL AND hand_no IS NOT NULL
""".replace(
    "{repeats}",  # a hand read again: its first record is the one audited
    f"'{QuarantineCheck.duplicate_hand.value}', '{QuarantineCheck.conflicting_hand.value}'",
)

# Which tables the rules judge, and from which hand number on (`scope`: from_no NULL is
# the whole table). A table's hands before from_no are not judged again; the last of
# them, and each player's last appearance before it, are read as what came before.
_SCOPE_ALL = """
CREATE OR REPLACE TEMP TABLE scope AS
SELECT DISTINCT table_id, NULL::BIGINT AS from_no FROM hands
UNION SELECT DISTINCT table_id, NULL::BIGINT FROM quarantine_appearances
"""

# What came before each scope table's judged hands, from one pass over its records
# (verified, and quarantined whose id was verified nowhere): the number of the last
# of them, and their latest start (for the hand-number rule).
_BEFORE = """
CREATE OR REPLACE TEMP TABLE table_before AS
SELECT table_id, max(hand_no) AS last_no, max(started_at) AS latest FROM (
    SELECT h.table_id, h.hand_no, h.started_at FROM hands h JOIN scope s USING (table_id)
    WHERE h.hand_no < s.from_no
    UNION ALL
    SELECT q.table_id, q.hand_no, q.started_at
    FROM quarantine_appearances q JOIN scope s USING (table_id)
    WHERE q.hand_no < s.from_no AND q.hand_id NOT IN (SELECT hand_id FROM hands)
) GROUP BY table_id
"""

# The hands of the scope's tables, verified and quarantined (a quarantined record whose
# id was verified elsewhere is left out); `judged` from from_no on, and the last hand
# before it kept as the one the first judged hand follows (of those numbered last, the
# last by id).
_TABLE_HANDS = """
CREATE OR REPLACE TEMP TABLE table_hands AS
WITH quarantined AS (
    SELECT DISTINCT q.table_id, q.hand_no, q.hand_id, q.started_at
    FROM quarantine_appearances q WHERE q.table_id IN (SELECT table_id FROM scope)
),
verified_elsewhere AS (
    SELECT hand_id FROM hands WHERE hand_id IN (SELECT hand_id FROM quarantined)
),
floors AS (  -- each profile's floor (house-rules.md 2.1), by its name and game
    SELECT name, game, floor_points FROM rule_profiles
),
every AS (
    SELECT h.table_id, h.hand_no, h.hand_id, h.started_at, h.point_value,
           f.floor_points, FALSE AS quarantined, s.from_no
    FROM hands h JOIN scope s USING (table_id)
    LEFT JOIN floors f ON f.name = h.rules AND f.game = h.variant
    UNION ALL
    SELECT q.table_id, q.hand_no, q.hand_id, q.started_at, NULL, NULL, TRUE, s.from_no
    FROM quarantined q JOIN scope s USING (table_id)
    WHERE q.hand_id NOT IN (SELECT hand_id FROM verified_elsewhere)
)
SELECT table_id, hand_no, hand_id, started_at, point_value, floor_points, quarantined,
       TRUE AS judged
FROM every WHERE from_no IS NULL OR hand_no >= from_no
UNION ALL
SELECT e.table_id, any_value(e.hand_no), max(e.hand_id), arg_max(e.started_at, e.hand_id),
       arg_max(e.point_value, e.hand_id), arg_max(e.floor_points, e.hand_id),
       arg_max(e.quarantined, e.hand_id), FALSE
FROM every e JOIN table_before b ON b.table_id = e.table_id AND b.last_no = e.hand_no
GROUP BY e.table_id
"""

# For a table judged from from_no on (none in a whole run), its verified hands of the
# last LOOKBACK hand numbers before them: where its players' previous appearances are
# first looked for.
LOOKBACK = 4
_RECENT_HANDS = """
CREATE OR REPLACE TEMP TABLE recent_hands AS
SELECT h.hand_id, h.table_id, h.hand_no, h.started_at, h.point_value
FROM hands h JOIN scope s USING (table_id)
WHERE h.hand_no < s.from_no AND h.hand_no >= s.from_no - {lookback}
  AND h.hand_id NOT IN (SELECT hand_id FROM table_hands)
"""

# The players of the hands above and of the recent ones, in one pass over `players` (a
# run over the whole audit reads them all: no copy).
_THEIR_PLAYERS = """
CREATE OR REPLACE TEMP TABLE their_players AS
SELECT hand_id, player_id, seat, stack_start, add_on, recorded_stack_end, timed_out
FROM players
WHERE hand_id IN (SELECT hand_id FROM table_hands UNION ALL SELECT hand_id FROM recent_hands)
"""
_ALL_PLAYERS = """
CREATE OR REPLACE TEMP VIEW their_players AS
SELECT hand_id, player_id, seat, stack_start, add_on, recorded_stack_end, timed_out
FROM players
"""

# Every appearance of a player at the hands above.
_NEAR = """
CREATE OR REPLACE TEMP TABLE near AS
SELECT t.table_id, t.hand_no, t.hand_id, t.started_at, t.point_value, t.floor_points,
       p.player_id, p.seat,
       p.stack_start, p.add_on, p.recorded_stack_end AS stack_end, p.timed_out,
       FALSE AS quarantined, t.judged
FROM table_hands t JOIN their_players p USING (hand_id)
WHERE NOT t.quarantined
UNION ALL  -- a quarantined hand's players once, however many of its records were read
SELECT DISTINCT t.table_id, t.hand_no, t.hand_id, NULL, NULL, NULL, q.player_id, q.seat,
       q.stack_start,
       q.add_on, q.stack_end, q.timed_out, TRUE, t.judged
FROM table_hands t JOIN quarantine_appearances q USING (hand_id)
WHERE t.quarantined
"""

# For a player judged from from_no on (none in a whole run), their appearances before
# the hands above: first among the recent hands; for those without a verified one there
# (new arrivals, or back after long), among all before, for them alone.
_JUDGED_PLAYERS = """
CREATE OR REPLACE TEMP TABLE judged_players AS
SELECT DISTINCT n.table_id, n.player_id, s.from_no
FROM near n JOIN scope s USING (table_id)
WHERE n.judged AND s.from_no IS NOT NULL
"""
_RECENT = """
CREATE OR REPLACE TEMP TABLE earlier AS
SELECT h.table_id, h.hand_no, h.hand_id, h.started_at, h.point_value,
       NULL::BIGINT AS floor_points, p.player_id, p.seat,
       p.stack_start, p.add_on, p.recorded_stack_end AS stack_end, p.timed_out,
       FALSE AS quarantined
FROM recent_hands h JOIN their_players p USING (hand_id)
JOIN judged_players j ON j.table_id = h.table_id AND j.player_id = p.player_id
UNION ALL
SELECT q.table_id, q.hand_no, q.hand_id, NULL, NULL, NULL, q.player_id, q.seat,
       q.stack_start, q.add_on, q.stack_end, q.timed_out, TRUE
FROM quarantine_appearances q
JOIN judged_players j ON j.table_id = q.table_id AND j.player_id = q.player_id
WHERE q.hand_no < j.from_no AND q.hand_id NOT IN (SELECT hand_id FROM table_hands)
  AND q.hand_id NOT IN (SELECT hand_id FROM hands WHERE hand_id IN
                        (SELECT hand_id FROM quarantine_appearances))
"""
_DISTANT = """
INSERT INTO earlier
WITH missing AS (
    SELECT * FROM judged_players j
    WHERE NOT EXISTS (SELECT 1 FROM earlier e WHERE NOT e.quarantined
                      AND e.table_id = j.table_id AND e.player_id = j.player_id)
),
theirs AS (
    SELECT * FROM players WHERE player_id IN (SELECT player_id FROM missing)
)
SELECT h.table_id, h.hand_no, h.hand_id, h.started_at, h.point_value, NULL, p.player_id,
       p.seat, p.stack_start, p.add_on, p.recorded_stack_end, p.timed_out, FALSE
FROM theirs p JOIN hands h USING (hand_id)
JOIN missing j ON j.table_id = h.table_id AND j.player_id = p.player_id
WHERE h.hand_no < j.from_no - {lookback} AND h.hand_id NOT IN (SELECT hand_id FROM table_hands)
"""

# The appearances the rules read: those of the hands above, and each judged player's last
# before them (of any record, and of a verified one: Fantasyland reads the verified).
_LAST_EARLIER = """
CREATE OR REPLACE TEMP TABLE last_earlier AS
SELECT DISTINCT *, FALSE AS judged FROM (
    SELECT * FROM earlier
    QUALIFY row_number() OVER (PARTITION BY table_id, player_id
                               ORDER BY hand_no DESC, hand_id DESC) = 1
    UNION ALL
    SELECT * FROM earlier WHERE NOT quarantined
    QUALIFY row_number() OVER (PARTITION BY table_id, player_id
                               ORDER BY hand_no DESC, hand_id DESC) = 1
)
"""
# A run over every table whole (scope's from_no all NULL) has no hands before the judged
# ones: what _BEFORE and _LAST_EARLIER would find there, empty, without their queries.
_NOTHING_BEFORE = """
CREATE OR REPLACE TEMP TABLE table_before
    (table_id VARCHAR, last_no BIGINT, latest TIMESTAMPTZ)
"""
_NOTHING_EARLIER = "CREATE OR REPLACE TEMP TABLE last_earlier AS SELECT * FROM near LIMIT 0"
_APPEARANCES = """
CREATE OR REPLACE TEMP VIEW appearances AS
SELECT * FROM near
UNION ALL  -- (the earlier appearances are of other hands)
SELECT * FROM last_earlier
"""


# The hands of each table in order, verified and quarantined, with the next one.
_SEQUENCE = """
CREATE OR REPLACE TEMP TABLE sequence AS
SELECT table_id, hand_no, hand_id, quarantined, judged,
       lead(hand_id) OVER w AS next_hand_id,
       lead(quarantined) OVER w AS next_quarantined
FROM (SELECT table_id, hand_no, hand_id, FALSE AS quarantined, judged FROM table_hands
      WHERE NOT quarantined
      UNION ALL  -- every verified hand has players; the quarantined ones read with some
      SELECT DISTINCT table_id, hand_no, hand_id, TRUE, judged FROM appearances
      WHERE quarantined AND hand_id IN (SELECT hand_id FROM table_hands))
WINDOW w AS (PARTITION BY table_id ORDER BY hand_no, hand_id)
"""

# Each player's previous appearance at the table, kept only where a rule may fail.
_PREVIOUS = """
CREATE OR REPLACE TEMP TABLE previous AS
SELECT hand_id, table_id, seat, player_id, point_value, floor_points, stack_start, add_on,
       quarantined,
       lag(stack_end) OVER w AS previous_end,
       lag(hand_id) OVER w AS previous_hand,
       lag(quarantined) OVER w AS previous_quarantined
FROM appearances  -- distinct rows: `near`'s, and `last_earlier`'s of other hands
WINDOW w AS (PARTITION BY table_id, player_id ORDER BY hand_no, hand_id)
QUALIFY judged AND NOT quarantined AND previous_end IS NOT NULL
    AND (previous_end < floor_points * point_value OR stack_start <> previous_end + add_on)
"""


def _insert(check: DivergenceCheck, select: str) -> str:
    return f"""
    INSERT INTO divergences (hand_id, table_id, "check", seat, opponent, board, "row",
                             expected, recorded, message)
    SELECT hand_id, table_id, '{check.value}', seat, NULL, NULL, NULL, expected, recorded, message
    FROM ({select})
    ORDER BY table_id, hand_id, seat NULLS FIRST, message
    """


# The check keeps its name under any profile's floor (house-rules.md 4).
FLOOR = _insert(
    DivergenceCheck.floor_60,
    """
    SELECT hand_id, table_id, seat,
           CAST(floor_points * point_value AS DECIMAL(18,2))::VARCHAR AS expected,
           stack_start::VARCHAR AS recorded,
           format('seat {} ({}) ended hand {} with {}, below the '
                  '{}-point floor of {}, and was dealt in again with {}',
                  seat, player_id, previous_hand, previous_end::VARCHAR, floor_points,
                  CAST(floor_points * point_value AS DECIMAL(18,2))::VARCHAR,
                  stack_start::VARCHAR) AS message
    FROM previous
    WHERE NOT quarantined AND previous_end < floor_points * point_value
      AND stack_start < floor_points * point_value
""",
)

TIMEOUT = _insert(
    DivergenceCheck.timeout_sit_out,
    """
    SELECT n.hand_id, n.table_id, n.seat, 'sat out' AS expected, 'dealt in' AS recorded,
           format('seat {} ({}) timed out in hand {} and was dealt into the next hand',
                  n.seat, n.player_id, a.hand_id) AS message
    FROM appearances a
    JOIN sequence s ON s.hand_id = a.hand_id AND s.table_id = a.table_id
    JOIN appearances n ON n.hand_id = s.next_hand_id AND n.player_id = a.player_id
    WHERE a.timed_out AND NOT n.quarantined AND n.judged
""",
)

CONTINUITY = _insert(
    DivergenceCheck.continuity,
    """
    SELECT hand_id, table_id, seat, (previous_end + add_on)::VARCHAR AS expected,
           stack_start::VARCHAR AS recorded,
           format('seat {} ({}) started with {}, but ended hand {} with {}{}{}', seat, player_id,
                  stack_start::VARCHAR, previous_hand, previous_end::VARCHAR,
                  CASE WHEN add_on <> 0 THEN format(' and added {}', add_on::VARCHAR)
                       ELSE '' END,
                  CASE WHEN previous_quarantined
                       THEN ' (that hand was quarantined; its recorded stacks were used)'
                       ELSE '' END) AS message
    FROM previous
    WHERE NOT quarantined AND previous_end IS NOT NULL
      AND stack_start <> previous_end + add_on
""",
)

HAND_NUMBERS = _insert(
    DivergenceCheck.hand_no,
    """
    WITH numbered AS (  -- verified hands, and quarantined ones read with players
        SELECT hand_id, table_id, hand_no, started_at, judged FROM table_hands
        WHERE NOT quarantined OR hand_id IN (SELECT hand_id FROM sequence WHERE quarantined)
    ),
    ordered AS (
        SELECT hand_id, table_id, hand_no, started_at, judged,
               lag(hand_id) OVER w AS previous_hand,
               lag(hand_no) OVER w AS previous_no,
               max(started_at) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
                   AS latest_in_window
        FROM numbered
        WINDOW w AS (PARTITION BY table_id ORDER BY hand_no, started_at, hand_id)
    ),
    judged AS (
        SELECT o.*, greatest(o.latest_in_window, b.latest) AS latest_before
        FROM ordered o LEFT JOIN table_before b USING (table_id)
        WHERE o.judged
    )
    SELECT hand_id, table_id, NULL::BIGINT AS seat,
           CASE WHEN hand_no = previous_no THEN 'a number of its own'
                ELSE format('started after {}', latest_before) END AS expected,
           CASE WHEN hand_no = previous_no THEN hand_no::VARCHAR
                ELSE started_at::VARCHAR END AS recorded,
           CASE WHEN hand_no = previous_no
                THEN format('hand number {} is also that of hand {}', hand_no, previous_hand)
                ELSE format('hand number {} started at {}, before an earlier-numbered hand '
                            'of the table (started {})', hand_no, started_at, latest_before)
           END AS message
    FROM judged
    WHERE hand_no = previous_no OR started_at < latest_before
""",
)


# chinese-family.md section 6, across an open-face table's hands: each player's
# Fantasyland (and the cards it deals) is what their previous hand there earned, and
# nobody of a hand that earned it skips the next hand (unless they timed out).
FANTASYLAND = _insert(
    DivergenceCheck.fantasyland,
    """
    WITH open AS (
        SELECT a.table_id, a.hand_no, a.hand_id, p.seat, p.player_id, p.fantasyland,
               p.fantasyland_next, p.fantasyland_cards, p.cards_dealt, p.timed_out, a.judged
        FROM appearances a JOIN players p ON p.hand_id = a.hand_id AND p.seat = a.seat
        WHERE NOT a.quarantined AND p.fantasyland IS NOT NULL
    ),
    ordered AS (
        SELECT *, coalesce(lag(fantasyland_next) OVER w, FALSE) AS earned,
               lag(fantasyland_cards) OVER w AS earned_cards,
               lag(hand_id) OVER w IS NULL AS first_here,
               coalesce(lag(hand_id) OVER w, 'none (a first hand)') AS previous_hand
        FROM open
        WINDOW w AS (PARTITION BY table_id, player_id ORDER BY hand_no, hand_id)
    ),
    wrong AS (  -- where the audit begins, a player's previous hand is not known: not judged
        SELECT *, fantasyland <> earned AS wrong_state FROM ordered
        WHERE judged AND NOT (first_here AND hand_id IN (SELECT hand_id FROM first_hands))
          AND (fantasyland <> earned OR (fantasyland AND cards_dealt <> earned_cards))
    )
    SELECT hand_id, table_id, seat,
           CASE WHEN wrong_state THEN CASE WHEN earned THEN 'Fantasyland' ELSE 'no Fantasyland' END
                ELSE format('{} cards', earned_cards) END AS expected,
           CASE WHEN wrong_state THEN CASE WHEN fantasyland THEN 'Fantasyland'
                                           ELSE 'no Fantasyland' END
                ELSE format('{} cards', cards_dealt) END AS recorded,
           CASE WHEN wrong_state
                THEN format('seat {} ({}) is {}in Fantasyland, but the previous hand {} earned {}',
                            seat, player_id, CASE WHEN fantasyland THEN '' ELSE 'not ' END,
                            previous_hand, CASE WHEN earned THEN 'it' ELSE 'none' END)
                ELSE format('seat {} ({}) is dealt {} cards in Fantasyland, but hand {} earned {}',
                            seat, player_id, cards_dealt, previous_hand, earned_cards)
           END AS message
    FROM wrong
    UNION ALL
    SELECT s.next_hand_id, o.table_id, o.seat, 'dealt in', 'missing',
           format('seat {} ({}) played hand {}, which earned Fantasyland, and is missing from '
                  'the next hand', o.seat, o.player_id, o.hand_id)
    FROM open o JOIN sequence s ON s.hand_id = o.hand_id AND s.table_id = o.table_id
    WHERE o.hand_id IN (SELECT hand_id FROM open WHERE fantasyland_next)
      AND NOT o.timed_out AND s.next_hand_id IS NOT NULL
      AND s.next_hand_id IN (SELECT hand_id FROM table_hands WHERE judged)
      AND NOT EXISTS (SELECT 1 FROM appearances a
                      WHERE a.hand_id = s.next_hand_id AND a.player_id = o.player_id)
""",
)


# The first verified hand of each table (of those `where` keeps): where its audit begins
# (chinese-family.md 8). The run's summary counts their players.
FIRST_HANDS = """
SELECT arg_min(hand_id, (hand_no, hand_id)) AS hand_id FROM hands
WHERE {where} GROUP BY table_id
"""
_FIRST_HANDS = "CREATE OR REPLACE TEMP TABLE first_hands AS " + FIRST_HANDS.format(
    where="table_id IN (SELECT table_id FROM scope)"
)

# The checks the rules across hands raise (a yes-or-no Fantasyland finding is the hand's
# own: `checks/family.py` records its expected value as true or false).
_ACROSS_HANDS = (
    DivergenceCheck.floor_60,
    DivergenceCheck.timeout_sit_out,
    DivergenceCheck.continuity,
    DivergenceCheck.hand_no,
)
TABLE_FINDING = f"""(
    "check" IN ({", ".join(f"'{c.value}'" for c in _ACROSS_HANDS)})
    OR ("check" = '{DivergenceCheck.fantasyland.value}' AND expected NOT IN ('true', 'false')))"""


def check_table_rules(store: Store, scope: str | None = None) -> None:
    """Add divergences for the floor, timeouts, continuity, hand order and Fantasyland.
    (Cover and the largest group look at one hand alone: `checks/seating.py`.)

    `scope`: a query of (table_id, from_no), the tables to judge again from which hand
    number on; their earlier findings there are replaced. None: every table, whole.
    """
    if scope is None:  # every table whole: nothing comes before the judged hands
        for sql in (_SCOPE_ALL, _NOTHING_BEFORE, _TABLE_HANDS, _FIRST_HANDS, _ALL_PLAYERS, _NEAR):
            store.query(sql)
        store.query(_NOTHING_EARLIER)
    else:
        store.query(f"CREATE OR REPLACE TEMP TABLE scope AS {scope}")
        recent = _RECENT_HANDS.format(lookback=LOOKBACK)
        hands = (_BEFORE, _TABLE_HANDS, _FIRST_HANDS, recent, _THEIR_PLAYERS, _NEAR)
        looking_back = (_JUDGED_PLAYERS, _RECENT, _DISTANT.format(lookback=LOOKBACK))
        for sql in (*hands, *looking_back, _LAST_EARLIER):
            store.query(sql)
    for sql in (_APPEARANCES, _SEQUENCE, _PREVIOUS):
        store.query(sql)
    store.query(
        f"DELETE FROM divergences WHERE {TABLE_FINDING} "
        "AND hand_id IN (SELECT hand_id FROM table_hands WHERE judged)"
    )
    for sql in (FLOOR, TIMEOUT, CONTINUITY, HAND_NUMBERS, FANTASYLAND):
        store.query(sql)
    judged = "hand_id IN (SELECT hand_id FROM table_hands WHERE judged AND NOT quarantined)"
    found = "hand_id IN (SELECT hand_id FROM divergences)"
    store.query(f"UPDATE hands SET status = 'diverged' WHERE {judged} AND {found}")
    store.query(f"UPDATE hands SET status = 'ok' WHERE {judged} AND status <> 'ok' AND NOT {found}")
