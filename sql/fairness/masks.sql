-- Each player's standard cards in each hand in scope, as a 52-bit mask (card c is bit c),
-- by the hand's place in its table's order (nth, as sequence.sql numbers them) and seat.
WITH ordered AS (
    SELECT hand_id, row_number() OVER (ORDER BY table_id, hand_no, started_at, hand_id) - 1 AS nth
    FROM fair_hands
    WHERE in_scope
)
SELECT o.nth::INTEGER AS nth, m.seat::TINYINT AS seat, m.mask
FROM fair_masks m
JOIN ordered o USING (hand_id)
