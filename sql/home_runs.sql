-- title: Home Runs and scoops
-- question: How often does a pair end in a Home Run (a scoop in the Chinese family), by table and by number of players dealt?
-- parameters: from_day, to_day (UTC dates, inclusive), table_id, variant
-- totals: hands, pairs, home_runs
SELECT h.table_id,
       any_value(h.variant) AS variant,
       h.n_players,
       count(DISTINCT h.hand_id) AS hands,
       count(*) AS pairs,
       count(s.home_run) AS home_runs,
       round(count(s.home_run) / count(*), 4) AS home_run_rate
FROM hands h
JOIN settlements s USING (hand_id)
WHERE (getvariable('from_day') IS NULL OR h.day >= getvariable('from_day'))
  AND (getvariable('to_day') IS NULL OR h.day <= getvariable('to_day'))
  AND (getvariable('table_id') IS NULL OR h.table_id = getvariable('table_id'))
  AND (getvariable('variant') IS NULL OR h.variant = getvariable('variant'))
GROUP BY h.table_id, h.n_players
ORDER BY h.table_id, h.n_players
