-- Premium outcomes per player, against the other players of the same hands. The
-- register `premium_kinds` names each game's kinds (a Home Run; a scoop, a natural, a
-- Fantasyland entry) and the outcome they form together (`outcome`); a player-hand has
-- the outcome when any of its kinds came (a Fantasyland entry only from outside it).
-- Per player and outcome, grouped by how many of a hand's players had it (`had`) of how
-- many played (`players`): the player's hands so, and their hands with the outcome.
WITH swept AS (
    SELECT hand_id, seat, decided
    FROM settlements WHERE decided IN ('home_run', 'scoop') AND bonus > 0
    UNION ALL
    SELECT hand_id, opponent, decided
    FROM settlements WHERE decided IN ('home_run', 'scoop') AND bonus < 0
),
outcomes AS (
    SELECT p.hand_id, p.seat, p.player_id, k.outcome,
           bool_or(CASE k.kind
               WHEN 'natural' THEN p."natural" IS NOT NULL
               WHEN 'fantasyland_entry' THEN coalesce(p.fantasyland_next, false)
                                             AND NOT coalesce(p.fantasyland, false)
               ELSE s.hand_id IS NOT NULL
           END) AS hit
    FROM fair_players p
    JOIN premium_kinds k ON k.variant = p.variant
    LEFT JOIN swept s ON s.hand_id = p.hand_id AND s.seat = p.seat AND s.decided = k.kind
    GROUP BY ALL
),
per_hand AS (
    SELECT hand_id, outcome, count(*) AS players, count(*) FILTER (WHERE hit) AS had
    FROM outcomes GROUP BY ALL
)
SELECT o.player_id, o.outcome, h.had, h.players,
       count(*) AS hands,
       count(*) FILTER (WHERE o.hit) AS hits
FROM outcomes o
JOIN per_hand h USING (hand_id, outcome)
WHERE getvariable('player_id') IS NULL OR o.player_id = getvariable('player_id')
GROUP BY ALL
ORDER BY o.outcome, o.player_id, h.had, h.players
