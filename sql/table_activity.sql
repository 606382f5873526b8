-- title: Table activity
-- question: Per table, how much was played, by how many players, at what stakes, for how much rake, and how often did a hand diverge?
-- parameters: from_day, to_day (UTC dates, inclusive), table_id, variant
-- total: the last row, its table_id empty, is the whole result's:
--   hands: the sum of the rows (each hand is at one table)
--   players: distinct players over every table (one may play at several: not the sum of the rows)
--   average_dealt: the players dealt a hand, on average over every hand
--   point_value: the least of the rows
--   max_point_value: the most of the rows
--   rake: the sum of the rows
--   hands_diverged: the sum of the rows
--   divergence_rate: hands_diverged / hands
WITH chosen AS (
    SELECT * FROM hands
    WHERE (getvariable('from_day') IS NULL OR day >= getvariable('from_day'))
      AND (getvariable('to_day') IS NULL OR day <= getvariable('to_day'))
      AND (getvariable('table_id') IS NULL OR table_id = getvariable('table_id'))
      AND (getvariable('variant') IS NULL OR variant = getvariable('variant'))
),
seated AS (
    SELECT c.table_id, count(DISTINCT p.player_id) AS players
    FROM players p JOIN chosen c USING (hand_id)
    GROUP BY GROUPING SETS ((c.table_id), ())
),
activity AS (
    SELECT h.table_id,
           CASE WHEN grouping(h.table_id) = 0 THEN any_value(h.variant) END AS variant,
           count(*) AS hands,
           round(avg(h.n_players), 2) AS average_dealt,
           min(h.point_value) AS point_value,
           max(h.point_value) AS max_point_value,
           sum(h.rake_total) AS rake,
           count(*) FILTER (WHERE h.status = 'diverged') AS hands_diverged,
           round(count(*) FILTER (WHERE h.status = 'diverged') / nullif(count(*), 0), 4) AS divergence_rate
    FROM chosen h
    GROUP BY GROUPING SETS ((h.table_id), ())
)
SELECT a.table_id, a.variant, a.hands, coalesce(s.players, 0) AS players, a.average_dealt,
       a.point_value, a.max_point_value, a.rake, a.hands_diverged, a.divergence_rate
FROM activity a
LEFT JOIN seated s ON s.table_id IS NOT DISTINCT FROM a.table_id
ORDER BY a.table_id NULLS LAST
