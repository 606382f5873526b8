-- How the open-face hands cut the deck into dealt places: per hand, each seat's number
-- of cards dealt (5 bits a seat: seat s at bit 5 s); how many hands cut it so.
WITH per_seat AS (
    SELECT hand_id, variant, seat, count(*)::BIGINT AS n
    FROM fair_cards
    WHERE in_order
    GROUP BY ALL
),
per_hand AS (
    SELECT variant, sum(n << (5 * seat))::BIGINT AS shape
    FROM per_seat
    GROUP BY hand_id, variant
)
SELECT variant, shape, count(*) AS hands
FROM per_hand
GROUP BY ALL
ORDER BY ALL
