-- How the hands cut the deck: per hand, each group's standard cards and all its cards,
-- packed 7 bits a group (group g at bit 7 * g; no group holds 128 cards); how many hands
-- cut it so. fairness.Dealt reads the keys.
WITH per_hand AS (
    SELECT variant,
           sum(standard::BIGINT << (7 * grp)) AS standard,
           sum(dealt::BIGINT << (7 * grp)) AS dealt
    FROM fair_sizes
    GROUP BY hand_id, variant
)
SELECT variant, standard::BIGINT AS standard, dealt::BIGINT AS dealt, count(*) AS hands
FROM per_hand
GROUP BY ALL
ORDER BY ALL
