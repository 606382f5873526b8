-- title: Rake reconciliation
-- question: Per table and UTC day, does the rake the hands recorded match the rake the rules give?
-- parameters: from_day, to_day (UTC dates, inclusive), table_id, variant
-- total: the last row, its table_id empty, is the whole result's:
--   hands: the sum of the rows (each hand is in one row: its table and day)
--   recorded_rake: the sum of the rows
--   recomputed_rake: the sum of the rows
--   recomputed_minus_recorded: the sum of the rows
WITH recorded AS (
    SELECT hand_id, sum(recorded_rake) AS players_rake FROM players GROUP BY hand_id
)
SELECT h.table_id,
       CASE WHEN grouping(h.table_id) = 0 THEN any_value(h.variant) END AS variant,
       h.day,
       count(*) AS hands,
       sum(coalesce(h.recorded_rake_total, r.players_rake)) AS recorded_rake,
       sum(h.rake_total) AS recomputed_rake,
       sum(h.rake_total) - sum(coalesce(h.recorded_rake_total, r.players_rake))
           AS recomputed_minus_recorded
FROM hands h
JOIN recorded r USING (hand_id)
WHERE (getvariable('from_day') IS NULL OR h.day >= getvariable('from_day'))
  AND (getvariable('to_day') IS NULL OR h.day <= getvariable('to_day'))
  AND (getvariable('table_id') IS NULL OR h.table_id = getvariable('table_id'))
  AND (getvariable('variant') IS NULL OR h.variant = getvariable('variant'))
GROUP BY GROUPING SETS ((h.table_id, h.day), ())
ORDER BY h.table_id NULLS LAST, h.day
