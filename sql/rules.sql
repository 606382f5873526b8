-- title: House rules
-- question: Per table, under which house rules (profiles, house-rules.md) were its hands audited: how many hands each, and their first and last hand numbers and times?
-- parameters: from_day, to_day (UTC dates, inclusive), table_id, variant
-- total: the last row, its table_id empty, is the whole result's:
--   hands: the sum of the rows (each hand is audited under one profile)
--   first_started: the earliest of the rows
--   last_started: the latest of the rows
-- columns: rules is the profile's name (standard: the contract as written); digest begins
--   the digest of its values (what it sets: `rule_profiles`, and `handaudit explain`).
WITH chosen AS (
    SELECT * FROM hands
    WHERE (getvariable('from_day') IS NULL OR day >= getvariable('from_day'))
      AND (getvariable('to_day') IS NULL OR day <= getvariable('to_day'))
      AND (getvariable('table_id') IS NULL OR table_id = getvariable('table_id'))
      AND (getvariable('variant') IS NULL OR variant = getvariable('variant'))
),
per_table AS (
    SELECT h.table_id, h.rules, any_value(h.variant) AS variant, count(*) AS hands,
           min(h.hand_no) AS first_hand_no, max(h.hand_no) AS last_hand_no,
           min(h.started_at) AS first_started, max(h.started_at) AS last_started
    FROM chosen h
    GROUP BY h.table_id, h.rules
),
total AS (
    SELECT NULL AS table_id, NULL AS rules, NULL AS variant, sum(hands)::BIGINT AS hands,
           NULL::BIGINT AS first_hand_no, NULL::BIGINT AS last_hand_no,
           min(first_started) AS first_started, max(last_started) AS last_started
    FROM per_table
)
SELECT t.table_id, t.rules, t.variant, t.hands, t.first_hand_no, t.last_hand_no,
       t.first_started, t.last_started, left(r.digest, 12) AS digest
FROM (SELECT * FROM per_table UNION ALL SELECT * FROM total) t
LEFT JOIN rule_profiles r ON r.name = t.rules AND r.game = t.variant
ORDER BY t.table_id NULLS LAST, t.first_started, t.rules
