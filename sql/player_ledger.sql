-- title: Player ledger
-- question: Per player, how many hands, points and how much money won, raked and netted, and Home Runs won and lost?
-- parameters: from_day, to_day (UTC dates, inclusive), table_id, player_id, variant
-- total: the last row, its player_id empty, is the whole result's:
--   hands: distinct hands (a hand deals several players: not the sum of the rows)
--   points: the sum of the rows (every player's points, 0 when each hand's players are all shown)
--   won: the sum of the rows
--   rake: the sum of the rows
--   net: the sum of the rows
--   recorded_net: the sum of the rows
--   home_runs_won: the sum of the rows (each Home Run once: it is won by one player)
--   home_runs_lost: the sum of the rows (each Home Run once: it is lost by one player)
WITH chosen AS (
    SELECT p.*, h.table_id, h.variant
    FROM players p JOIN hands h USING (hand_id)
    WHERE (getvariable('from_day') IS NULL OR h.day >= getvariable('from_day'))
      AND (getvariable('to_day') IS NULL OR h.day <= getvariable('to_day'))
      AND (getvariable('table_id') IS NULL OR h.table_id = getvariable('table_id'))
      AND (getvariable('variant') IS NULL OR h.variant = getvariable('variant'))
      AND (getvariable('player_id') IS NULL OR p.player_id = getvariable('player_id'))
),
home_runs AS (  -- per player of a hand
    SELECT c.hand_id, c.seat,
           count(*) FILTER (WHERE (s.seat = c.seat AND s.home_run = 'seat')
                               OR (s.opponent = c.seat AND s.home_run = 'opponent')) AS won,
           count(*) FILTER (WHERE (s.seat = c.seat AND s.home_run = 'opponent')
                               OR (s.opponent = c.seat AND s.home_run = 'seat')) AS lost
    FROM chosen c
    JOIN settlements s ON s.hand_id = c.hand_id AND c.seat IN (s.seat, s.opponent)
    GROUP BY c.hand_id, c.seat
)
SELECT c.player_id,
       c.variant,
       count(DISTINCT c.hand_id) AS hands,
       sum(c.points)::BIGINT AS points,
       sum(c.won) AS won,
       sum(c.rake) AS rake,
       sum(c.net) AS net,
       sum(c.recorded_net) AS recorded_net,
       coalesce(sum(r.won), 0)::BIGINT AS home_runs_won,
       coalesce(sum(r.lost), 0)::BIGINT AS home_runs_lost
FROM chosen c
LEFT JOIN home_runs r USING (hand_id, seat)
GROUP BY GROUPING SETS ((c.player_id, c.variant), ())
ORDER BY c.player_id NULLS LAST, c.variant
