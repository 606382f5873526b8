-- Open-face players' cards by their place in the order dealt (street by street), seat by
-- seat: each (seat, place) a group of one card a hand, as the board places are.
SELECT variant, seat, place, card, count(*) AS dealt
FROM fair_cards
WHERE in_order
GROUP BY ALL
ORDER BY ALL
