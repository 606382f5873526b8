-- title: Home Runs and scoops
-- question: How often does a pair end in a Home Run (a scoop in the Chinese family), by table and by number of players dealt?
-- parameters: from_day, to_day (UTC dates, inclusive), table_id, variant
-- total: the last row, its table_id empty, is the whole result's:
--   hands: the sum of the rows (each hand is in one row: its table and its count of players)
--   pairs: the sum of the rows
--   home_runs: the sum of the rows
--   home_run_rate: home_runs / pairs
SELECT h.table_id,
       CASE WHEN grouping(h.table_id) = 0 THEN any_value(h.variant) END AS variant,
       h.n_players,
       count(DISTINCT h.hand_id) AS hands,
       count(*) AS pairs,
       count(s.home_run) AS home_runs,
       round(count(s.home_run) / nullif(count(*), 0), 4) AS home_run_rate
FROM hands h
JOIN settlements s USING (hand_id)
WHERE (getvariable('from_day') IS NULL OR h.day >= getvariable('from_day'))
  AND (getvariable('to_day') IS NULL OR h.day <= getvariable('to_day'))
  AND (getvariable('table_id') IS NULL OR h.table_id = getvariable('table_id'))
  AND (getvariable('variant') IS NULL OR h.variant = getvariable('variant'))
GROUP BY GROUPING SETS ((h.table_id, h.n_players), ())
ORDER BY h.table_id NULLS LAST, h.n_players
