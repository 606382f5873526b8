-- title: Rake reconciliation
-- question: Per table and UTC day, does the rake the hands recorded match the rake the rules give?
-- parameters: from_day, to_day (UTC dates, inclusive), table_id, variant
-- totals: hands, recorded_rake, recomputed_rake, recomputed_minus_recorded
WITH recorded AS (
    SELECT hand_id, sum(recorded_rake) AS players_rake FROM players GROUP BY hand_id
)
SELECT h.table_id,
       any_value(h.variant) AS variant,
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
GROUP BY h.table_id, h.day
ORDER BY h.table_id, h.day
