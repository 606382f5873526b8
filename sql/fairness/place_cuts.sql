-- How the open-face hands cut the deck into dealt places: per hand, each player's number of
-- cards dealt, by slot (places.sql; 5 bits a slot: slot s at bit 5 s); how many hands cut
-- it so.
WITH per_player AS (
    SELECT hand_id, variant, dense_rank() OVER (PARTITION BY hand_id ORDER BY seat) AS slot,
           count(*) OVER (PARTITION BY hand_id, seat) AS n
    FROM fair_cards
    WHERE in_order
    QUALIFY row_number() OVER (PARTITION BY hand_id, seat) = 1
),
per_hand AS (
    SELECT variant, sum(n::BIGINT << (5 * slot))::BIGINT AS shape
    FROM per_player
    GROUP BY hand_id, variant
)
SELECT variant, shape, count(*) AS hands
FROM per_hand
GROUP BY ALL
ORDER BY ALL
