-- The hands in scope in the order each table played them (by hand number, as the audit's
-- continuity check reads them; nth from 0; tbl numbers the
-- tables), their game, and their boards' cards in the order dealt (card codes, board 1's
-- five then board 2's; NULL without boards): what the tests of repeats, positions and
-- consecutive hands read, with masks.sql.
SELECT (row_number() OVER (ORDER BY table_id, hand_no, started_at, hand_id) - 1)::INTEGER AS nth,
       dense_rank() OVER (ORDER BY table_id)::INTEGER AS tbl,
       hand_id, variant,
       card_of_text(substr(boards, 1, 2))::TINYINT AS b0,
       card_of_text(substr(boards, 4, 2))::TINYINT AS b1,
       card_of_text(substr(boards, 7, 2))::TINYINT AS b2,
       card_of_text(substr(boards, 10, 2))::TINYINT AS b3,
       card_of_text(substr(boards, 13, 2))::TINYINT AS b4,
       card_of_text(substr(boards, 16, 2))::TINYINT AS b5,
       card_of_text(substr(boards, 19, 2))::TINYINT AS b6,
       card_of_text(substr(boards, 22, 2))::TINYINT AS b7,
       card_of_text(substr(boards, 25, 2))::TINYINT AS b8,
       card_of_text(substr(boards, 28, 2))::TINYINT AS b9
FROM fair_hands
WHERE in_scope
ORDER BY nth
