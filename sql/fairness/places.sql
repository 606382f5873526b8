-- Open-face players' cards by their place in the order dealt (street by street), player by
-- player in the order the seats are dealt (slot 1 the lowest seat of the hand): each
-- (slot, place) a group of one card a hand, as the board places are.
WITH dealt AS (
    SELECT variant, place, card,
           dense_rank() OVER (PARTITION BY hand_id ORDER BY seat) AS slot
    FROM fair_cards
    WHERE in_order
)
SELECT variant, slot, place, card, count(*) AS dealt
FROM dealt
GROUP BY ALL
ORDER BY ALL
