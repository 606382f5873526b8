-- title: Fouls
-- question: Per player, and per pair of players, how often did a setting foul, and how much money did each foul move? (Repeated fouls into one opponent are how chips are dumped.)
-- parameters: from_day, to_day (UTC dates, inclusive), table_id, player_id, variant
-- total: the last row, its player_id empty, is the whole result's:
--   hands: distinct hands
--   fouls: distinct hands in which a setting fouled
--   foul_rate: fouls / hands
--   money_moved_by_fouls: what fouling players paid to players who did not foul, each pair once
-- columns: a player's row with opponent_id empty totals that player's pairs; each pair is a row of
--   each of its two players.
WITH chosen AS (
    SELECT p.hand_id, p.seat, p.player_id, p.fouled, h.variant
    FROM players p JOIN hands h USING (hand_id)
    WHERE p.fouled IS NOT NULL
      AND (getvariable('from_day') IS NULL OR h.day >= getvariable('from_day'))
      AND (getvariable('to_day') IS NULL OR h.day <= getvariable('to_day'))
      AND (getvariable('table_id') IS NULL OR h.table_id = getvariable('table_id'))
      AND (getvariable('variant') IS NULL OR h.variant = getvariable('variant'))
),
sides AS (  -- every pair seen from each of its two players; paid: what that player paid
    SELECT a.hand_id, a.variant, a.player_id, b.player_id AS opponent_id, a.fouled,
           b.fouled AS opponent_fouled, greatest(-s.amount, 0) AS paid
    FROM settlements s
    JOIN chosen a ON a.hand_id = s.hand_id AND a.seat = s.seat
    JOIN chosen b ON b.hand_id = s.hand_id AND b.seat = s.opponent
    UNION ALL
    SELECT b.hand_id, b.variant, b.player_id, a.player_id, b.fouled, a.fouled,
           greatest(s.amount, 0)
    FROM settlements s
    JOIN chosen a ON a.hand_id = s.hand_id AND a.seat = s.seat
    JOIN chosen b ON b.hand_id = s.hand_id AND b.seat = s.opponent
)
SELECT player_id,
       opponent_id,
       CASE WHEN grouping(player_id) = 0 THEN any_value(variant) END AS variant,
       count(DISTINCT hand_id) AS hands,
       count(DISTINCT hand_id) FILTER (WHERE fouled) AS fouls,
       round(count(DISTINCT hand_id) FILTER (WHERE fouled) / nullif(count(DISTINCT hand_id), 0), 4)
           AS foul_rate,
       coalesce(sum(paid) FILTER (WHERE fouled AND NOT opponent_fouled), 0)::DECIMAL(18,2)
           AS money_moved_by_fouls
FROM sides
WHERE getvariable('player_id') IS NULL OR player_id = getvariable('player_id')
GROUP BY GROUPING SETS ((player_id), (player_id, opponent_id), ())
ORDER BY player_id NULLS LAST, opponent_id NULLS FIRST
