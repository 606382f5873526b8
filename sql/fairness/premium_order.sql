-- The player-hands whose premium outcome was in doubt (some but not all of the players
-- compared had it), per player and outcome in the order played: the chance a fair deal
-- gave the player, and whether it came. fairness.premium_evidence reads them in order.
SELECT player_id, outcome, had / players AS chance, hit
FROM fair_premium
WHERE had > 0 AND had < players
ORDER BY outcome, player_id, started_at, hand_id
