-- Premium outcomes per player (of the view fair_premium, outcomes.sql): their hands and
-- hits, and their fair share: the sum over their hands of had / players, their chance
-- when a hand's outcomes fall on its players alike.
SELECT player_id, outcome,
       count(*) AS hands,
       count(*) FILTER (WHERE hit) AS hits,
       sum(had / players) AS share,
       sum(had / players) FILTER (WHERE had < players) AS share_in_doubt,
       sum(had - hit::INT) AS others_hits,
       sum(players - 1) AS others_hands
FROM fair_premium
GROUP BY ALL
ORDER BY outcome, player_id
