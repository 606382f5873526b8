-- Premium outcomes, player-hand by player-hand (the view `fair_premium`), against the
-- other players of the same hands. The register `premium_kinds` says which kinds each
-- game has (a Home Run; a scoop, a natural, a Fantasyland entry) and names the outcome
-- they form together (`outcome`); a player-hand has the outcome when any of its kinds came
-- (a Fantasyland entry only from outside it). A player in Fantasyland is dealt more cards
-- than the others: within a hand, players are compared only with those in the same state
-- (in Fantasyland or not): `had` of those `players` had the outcome.
CREATE OR REPLACE TEMP VIEW fair_premium AS
WITH swept AS (
    SELECT hand_id, seat,
           bool_or(decided = 'home_run') AS home_run,
           bool_or(decided = 'scoop') AS scoop
    FROM (
        SELECT hand_id, seat, decided
        FROM settlements WHERE decided IN ('home_run', 'scoop') AND bonus > 0
        UNION ALL
        SELECT hand_id, opponent, decided
        FROM settlements WHERE decided IN ('home_run', 'scoop') AND bonus < 0
    )
    GROUP BY ALL
),
outcomes AS (
    SELECT p.hand_id, p.started_at, p.player_id, p.n_players, k.outcome,
           coalesce(p.fantasyland, false) AS landed,
           (k.home_run AND coalesce(s.home_run, false))
           OR (k.scoop AND coalesce(s.scoop, false))
           OR (k."natural" AND p."natural" IS NOT NULL)
           OR (k.fantasyland_entry AND coalesce(p.fantasyland_next, false)
               AND NOT coalesce(p.fantasyland, false)) AS hit
    FROM fair_players p
    JOIN premium_kinds k USING (variant)
    LEFT JOIN swept s USING (hand_id, seat)
),
landed AS (  -- the players in Fantasyland: few, counted apart
    SELECT hand_id, count(*) AS in_fantasyland FROM outcomes WHERE landed GROUP BY hand_id
),
had AS (  -- the hits are few too
    SELECT hand_id, landed, count(*) AS had FROM outcomes WHERE hit GROUP BY ALL
)
SELECT o.player_id, o.outcome, o.hand_id, o.started_at, o.hit,
       coalesce(h.had, 0) AS had,
       CASE WHEN o.landed THEN l.in_fantasyland
            ELSE o.n_players - coalesce(l.in_fantasyland, 0) END AS players
FROM outcomes o
LEFT JOIN landed l ON l.hand_id = o.hand_id
LEFT JOIN had h ON h.hand_id = o.hand_id AND h.landed = o.landed
WHERE getvariable('player_id') IS NULL OR o.player_id = getvariable('player_id')
