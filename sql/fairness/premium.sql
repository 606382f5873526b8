-- Premium outcomes per player and kind, against the other players of the same tables:
-- each player-hand where a kind applies (the register `premium_kinds` says which kinds
-- each game has) and whether it came; per player, their hits and hands, and the hits and
-- hands of everyone else at the tables they played.
WITH swept AS (
    SELECT hand_id, seat, decided
    FROM settlements WHERE decided IN ('home_run', 'scoop') AND bonus > 0
    UNION ALL
    SELECT hand_id, opponent, decided
    FROM settlements WHERE decided IN ('home_run', 'scoop') AND bonus < 0
),
outcomes AS (
    SELECT p.table_id, p.player_id, k.kind,
           CASE k.kind
               WHEN 'natural' THEN p."natural" IS NOT NULL
               WHEN 'fantasyland_entry' THEN coalesce(p.fantasyland_next, false)
               ELSE EXISTS (SELECT 1 FROM swept s
                            WHERE s.hand_id = p.hand_id AND s.seat = p.seat
                              AND s.decided = k.kind)
           END AS hit
    FROM fair_players p
    JOIN premium_kinds k ON k.variant = p.variant
    WHERE k.kind <> 'fantasyland_entry' OR NOT coalesce(p.fantasyland, false)
),
per_table AS (
    SELECT table_id, kind, count(*) AS hands, count(*) FILTER (WHERE hit) AS hits
    FROM outcomes GROUP BY ALL
),
mine AS (
    SELECT player_id, table_id, kind, count(*) AS hands, count(*) FILTER (WHERE hit) AS hits
    FROM outcomes GROUP BY ALL
)
SELECT m.player_id, m.kind,
       sum(m.hits)::BIGINT AS hits,
       sum(m.hands)::BIGINT AS hands,
       sum(t.hits - m.hits)::BIGINT AS others_hits,
       sum(t.hands - m.hands)::BIGINT AS others_hands
FROM mine m
JOIN per_table t USING (table_id, kind)
WHERE getvariable('player_id') IS NULL OR m.player_id = getvariable('player_id')
GROUP BY ALL
ORDER BY m.kind, m.player_id
