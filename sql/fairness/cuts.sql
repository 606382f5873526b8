-- How the hands cut the deck: per hand, each group's standard cards and all its cards,
-- as cut keys (the audit's macros); how many hands cut it so. fairness.Dealt reads them.
WITH per_hand AS (
    SELECT variant,
           sum(cut_key(standard, grp)) AS standard,
           sum(cut_key(dealt, grp)) AS dealt
    FROM fair_sizes
    GROUP BY hand_id, variant
)
SELECT variant, standard::BIGINT AS standard, dealt::BIGINT AS dealt, count(*) AS hands
FROM per_hand
GROUP BY ALL
ORDER BY ALL
