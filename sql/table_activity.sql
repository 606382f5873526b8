-- title: Table activity
-- question: Per table, how much was played, by how many players, at what stakes, for how much rake, and how often did a hand diverge?
-- parameters: from_day, to_day (UTC dates, inclusive), table_id, variant
-- totals: hands, rake, hands_diverged
WITH chosen AS (
    SELECT * FROM hands
    WHERE (getvariable('from_day') IS NULL OR day >= getvariable('from_day'))
      AND (getvariable('to_day') IS NULL OR day <= getvariable('to_day'))
      AND (getvariable('table_id') IS NULL OR table_id = getvariable('table_id'))
      AND (getvariable('variant') IS NULL OR variant = getvariable('variant'))
)
SELECT h.table_id,
       any_value(h.variant) AS variant,
       count(*) AS hands,
       (SELECT count(DISTINCT p.player_id) FROM players p JOIN chosen c USING (hand_id)
        WHERE c.table_id = h.table_id) AS players,
       round(avg(h.n_players), 2) AS average_dealt,
       min(h.point_value) AS point_value,
       max(h.point_value) AS max_point_value,
       sum(h.rake_total) AS rake,
       count(*) FILTER (WHERE h.status = 'diverged') AS hands_diverged,
       round(count(*) FILTER (WHERE h.status = 'diverged') / count(*), 4) AS divergence_rate
FROM chosen h
GROUP BY h.table_id
ORDER BY h.table_id
