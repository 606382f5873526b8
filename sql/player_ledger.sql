-- title: Player ledger
-- question: Per player, how many hands, points and how much money won, raked and netted, and Home Runs won and lost?
-- parameters: from_day, to_day (UTC dates, inclusive), table_id, player_id, variant
-- totals: hands, points, won, rake, net, recorded_net, home_runs_won, home_runs_lost
WITH chosen AS (
    SELECT p.*, h.table_id, h.variant
    FROM players p JOIN hands h USING (hand_id)
    WHERE (getvariable('from_day') IS NULL OR h.day >= getvariable('from_day'))
      AND (getvariable('to_day') IS NULL OR h.day <= getvariable('to_day'))
      AND (getvariable('table_id') IS NULL OR h.table_id = getvariable('table_id'))
      AND (getvariable('variant') IS NULL OR h.variant = getvariable('variant'))
      AND (getvariable('player_id') IS NULL OR p.player_id = getvariable('player_id'))
),
home_runs AS (
    SELECT c.player_id, c.variant,
           count(*) FILTER (WHERE (s.seat = c.seat AND s.home_run = 'seat')
                               OR (s.opponent = c.seat AND s.home_run = 'opponent')) AS won,
           count(*) FILTER (WHERE (s.seat = c.seat AND s.home_run = 'opponent')
                               OR (s.opponent = c.seat AND s.home_run = 'seat')) AS lost
    FROM chosen c
    JOIN settlements s ON s.hand_id = c.hand_id AND c.seat IN (s.seat, s.opponent)
    GROUP BY c.player_id, c.variant
)
SELECT c.player_id,
       c.variant,
       count(*) AS hands,
       sum(c.points)::BIGINT AS points,
       sum(c.won) AS won,
       sum(c.rake) AS rake,
       sum(c.net) AS net,
       sum(c.recorded_net) AS recorded_net,
       coalesce(any_value(r.won), 0) AS home_runs_won,
       coalesce(any_value(r.lost), 0) AS home_runs_lost
FROM chosen c
LEFT JOIN home_runs r USING (player_id, variant)
GROUP BY c.player_id, c.variant
ORDER BY c.player_id, c.variant
