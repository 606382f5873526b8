"""Table rules across hands (rules.md section 7), over each table's hands in hand_no order.

They run as SQL on the stored audit, so a table's history is sorted and windowed
by DuckDB out of core, whatever the order of lines and files in the input.
Quarantined records whose JSON can still be read take part in the sequence (their
table, hand number, players and stacks), so one bad record does not break the
continuity of everything after it; a comparison across one says so.
"""

from __future__ import annotations

from typing import Protocol

from pipeline.games import TAIWANESE, VARIANTS

# The table rules of rules.md section 7, as Taiwanese Poker deals them; the floor holds
# for the games that play it (the Taiwanese pair).
GAME = TAIWANESE
_COVERED = ", ".join(f"'{g.name}'" for g in VARIANTS.values() if g.floor_points)


class Store(Protocol):
    def query(self, sql: str, *params: object) -> list[tuple[object, ...]]: ...


# Every appearance of a player at a table: the verified hands, and the players of
# quarantined records as far as their JSON can be read.
_APPEARANCES = """
CREATE OR REPLACE TEMP TABLE appearances AS
WITH quarantined AS (
    SELECT hand_id, raw::JSON AS record
    FROM quarantine
    WHERE hand_id IS NOT NULL AND json_valid(raw) AND "check" <> 'duplicate_hand'
      AND hand_id NOT IN (SELECT hand_id FROM hands)
),
quarantined_players AS (
    SELECT q.hand_id,
           json_extract_string(q.record, '$.table_id') AS table_id,
           TRY_CAST(json_extract_string(q.record, '$.hand_no') AS BIGINT) AS hand_no,
           unnest(json_extract(q.record, '$.players[*]')) AS player
    FROM quarantined q
)
SELECT h.table_id, h.hand_no, h.hand_id, h.started_at, h.point_value, p.player_id, p.seat,
       p.stack_start, p.add_on, p.recorded_stack_end AS stack_end, p.timed_out,
       FALSE AS quarantined
FROM players p JOIN hands h USING (hand_id)
UNION ALL
SELECT table_id, hand_no, hand_id, NULL, NULL,
       json_extract_string(player, '$.player_id'),
       TRY_CAST(json_extract_string(player, '$.seat') AS BIGINT),
       TRY_CAST(json_extract_string(player, '$.stack_start') AS DECIMAL(18,2)),
       coalesce(TRY_CAST(json_extract_string(player, '$.add_on') AS DECIMAL(18,2)), 0),
       TRY_CAST(json_extract_string(player, '$.stack_end') AS DECIMAL(18,2)),
       coalesce(TRY_CAST(json_extract_string(player, '$.timed_out') AS BOOLEAN), FALSE),
       TRUE
FROM quarantined_players
WHERE table_id IS NOT NULL AND hand_no IS NOT NULL
"""

# The hands of each table in order, verified and quarantined, with the next one.
_SEQUENCE = """
CREATE OR REPLACE TEMP TABLE sequence AS
SELECT table_id, hand_no, hand_id, quarantined,
       lead(hand_id) OVER w AS next_hand_id,
       lead(quarantined) OVER w AS next_quarantined
FROM (SELECT table_id, hand_no, hand_id, FALSE AS quarantined FROM hands
      UNION ALL  -- every verified hand has players; the quarantined ones read with some
      SELECT DISTINCT table_id, hand_no, hand_id, TRUE FROM appearances WHERE quarantined)
WINDOW w AS (PARTITION BY table_id ORDER BY hand_no, hand_id)
"""

# Each player's previous appearance at the table, kept only where a rule may fail.
_PREVIOUS = f"""
CREATE OR REPLACE TEMP TABLE previous AS
SELECT hand_id, table_id, seat, player_id, point_value, stack_start, add_on, quarantined,
       lag(stack_end) OVER w AS previous_end,
       lag(hand_id) OVER w AS previous_hand,
       lag(quarantined) OVER w AS previous_quarantined
FROM appearances
WINDOW w AS (PARTITION BY table_id, player_id ORDER BY hand_no, hand_id)
QUALIFY NOT quarantined AND previous_end IS NOT NULL
    AND (previous_end < {GAME.floor_points} * point_value OR stack_start <> previous_end + add_on)
"""


def _insert(check: str, select: str) -> str:
    return f"""
    INSERT INTO divergences (hand_id, table_id, "check", seat, opponent, board, "row",
                             expected, recorded, message)
    SELECT hand_id, table_id, '{check}', seat, NULL, NULL, NULL, expected, recorded, message
    FROM ({select})
    ORDER BY table_id, hand_id, seat NULLS FIRST, message
    """


FLOOR = _insert(
    "floor_60",
    f"""
    SELECT hand_id, table_id, seat,
           CAST({GAME.floor_points} * point_value AS DECIMAL(18,2))::VARCHAR AS expected,
           stack_start::VARCHAR AS recorded,
           format('seat {{}} ({{}}) ended hand {{}} with {{}}, below the '
                  '{GAME.floor_points}-point floor of {{}}, and was dealt in again with {{}}',
                  seat, player_id,
                  previous_hand, previous_end::VARCHAR,
                  CAST({GAME.floor_points} * point_value AS DECIMAL(18,2))::VARCHAR,
                  stack_start::VARCHAR) AS message
    FROM previous
    WHERE NOT quarantined AND previous_end < {GAME.floor_points} * point_value
      AND stack_start < {GAME.floor_points} * point_value
      AND hand_id IN (SELECT hand_id FROM hands WHERE variant IN ({_COVERED}))
""",
)

TIMEOUT = _insert(
    "timeout_sit_out",
    """
    SELECT n.hand_id, n.table_id, n.seat, 'sat out' AS expected, 'dealt in' AS recorded,
           format('seat {} ({}) timed out in hand {} and was dealt into the next hand',
                  n.seat, n.player_id, a.hand_id) AS message
    FROM appearances a
    JOIN sequence s ON s.hand_id = a.hand_id AND s.table_id = a.table_id
    JOIN appearances n ON n.hand_id = s.next_hand_id AND n.player_id = a.player_id
    WHERE a.timed_out AND NOT n.quarantined
""",
)

CONTINUITY = _insert(
    "continuity",
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
    "hand_no",
    """
    WITH numbered AS (  -- verified hands, and quarantined ones whose number can be read
        SELECT hand_id, table_id, hand_no, started_at, FALSE AS quarantined FROM hands
        UNION ALL
        SELECT q.hand_id, s.table_id, s.hand_no,
               TRY_CAST(json_extract_string(q.raw, '$.started_at') AS TIMESTAMPTZ), TRUE
        FROM quarantine q JOIN (SELECT DISTINCT hand_id, table_id, hand_no FROM sequence
                                WHERE quarantined) s USING (hand_id)
    ),
    ordered AS (
        SELECT hand_id, table_id, hand_no, started_at, quarantined,
               lag(hand_id) OVER w AS previous_hand,
               lag(hand_no) OVER w AS previous_no,
               max(started_at) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
                   AS latest_before
        FROM numbered
        WINDOW w AS (PARTITION BY table_id ORDER BY hand_no, started_at, hand_id)
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
    FROM ordered
    WHERE hand_no = previous_no OR started_at < latest_before
""",
)


# chinese-family.md section 6, across an open-face table's hands: each player's
# Fantasyland (and the cards it deals) is what their previous hand there earned, and
# nobody of a hand that earned it skips the next hand (unless they timed out).
FANTASYLAND = _insert(
    "fantasyland",
    """
    WITH open AS (
        SELECT h.table_id, h.hand_no, h.hand_id, p.seat, p.player_id, p.fantasyland,
               p.fantasyland_next, p.fantasyland_cards, p.cards_dealt, p.timed_out
        FROM players p JOIN hands h USING (hand_id)
        WHERE p.fantasyland IS NOT NULL
    ),
    ordered AS (
        SELECT *, coalesce(lag(fantasyland_next) OVER w, FALSE) AS earned,
               lag(fantasyland_cards) OVER w AS earned_cards,
               coalesce(lag(hand_id) OVER w, 'none (a first hand)') AS previous_hand
        FROM open
        WINDOW w AS (PARTITION BY table_id, player_id ORDER BY hand_no, hand_id)
    ),
    wrong AS (
        SELECT *, fantasyland <> earned AS wrong_state FROM ordered
        WHERE fantasyland <> earned OR (fantasyland AND cards_dealt <> earned_cards)
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
      AND NOT EXISTS (SELECT 1 FROM appearances a
                      WHERE a.hand_id = s.next_hand_id AND a.player_id = o.player_id)
""",
)


def check_table_rules(store: Store) -> None:
    """Add divergences for the floor, timeouts, continuity, hand order and Fantasyland.
    (Cover and the largest group look at one hand alone: `checks/seating.py`.)"""
    for sql in (
        _APPEARANCES,
        _SEQUENCE,
        _PREVIOUS,
        FLOOR,
        TIMEOUT,
        CONTINUITY,
        HAND_NUMBERS,
        FANTASYLAND,
    ):
        store.query(sql)
    store.query(
        "UPDATE hands SET status = 'diverged' WHERE hand_id IN (SELECT hand_id FROM divergences)"
    )
