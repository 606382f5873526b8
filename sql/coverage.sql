-- title: Coverage
-- question: Per table, which hands does the audit hold (first and last hand numbers and times), and which players begin the audit without a previous hand (their continuity and Fantasyland not checked)?
-- parameters: from_day, to_day (UTC dates, inclusive), table_id, variant
-- total: the last row, its table_id empty, is the whole result's:
--   hands: the sum of the rows (each hand is at one table)
--   first_started: the earliest of the rows
--   last_started: the latest of the rows
--   players_not_checked: the sum of the rows
-- columns: where the audit begins is the table's first verified hand in the whole audit
--   (chinese-family.md section 8), whatever the days asked for.
WITH chosen AS (
    SELECT * FROM hands
    WHERE (getvariable('from_day') IS NULL OR day >= getvariable('from_day'))
      AND (getvariable('to_day') IS NULL OR day <= getvariable('to_day'))
      AND (getvariable('table_id') IS NULL OR table_id = getvariable('table_id'))
      AND (getvariable('variant') IS NULL OR variant = getvariable('variant'))
),
beginning AS (  -- each table's first verified hand, and its players
    SELECT f.table_id, count(*) AS players_not_checked,
           string_agg(p.player_id, ', ' ORDER BY p.seat) AS not_checked
    FROM (SELECT table_id, arg_min(hand_id, (hand_no, hand_id)) AS hand_id FROM hands
          GROUP BY table_id) f
    JOIN players p USING (hand_id)
    GROUP BY f.table_id
),
per_table AS (
    SELECT h.table_id, any_value(h.variant) AS variant, count(*) AS hands,
           min(h.hand_no) AS first_hand_no, max(h.hand_no) AS last_hand_no,
           min(h.started_at) AS first_started, max(h.started_at) AS last_started,
           coalesce(any_value(b.players_not_checked), 0) AS players_not_checked,
           any_value(b.not_checked) AS not_checked
    FROM chosen h LEFT JOIN beginning b USING (table_id)
    GROUP BY h.table_id
)
SELECT * FROM per_table
UNION ALL
SELECT NULL, NULL, sum(hands)::BIGINT, NULL, NULL, min(first_started), max(last_started),
       sum(players_not_checked)::BIGINT, NULL
FROM per_table
ORDER BY table_id NULLS LAST
