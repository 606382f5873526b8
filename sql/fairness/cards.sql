-- Each group's count of each card (52: a joker), over the hands in scope. Groups are
-- numbers: 0 the boards, else the seat (with --player, 1 the player, 2 the others).
SELECT variant, grp, card, count(*) AS dealt
FROM fair_cards
GROUP BY ALL
ORDER BY ALL
