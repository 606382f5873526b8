-- The views the fairness report counts from: the hands its filters choose (fair_hands),
-- their players in groups (fair_players), every card dealt (fair_cards), each group's
-- cards in each hand (fair_sizes), each player's standard cards as a mask (fair_masks),
-- and each game's premium outcomes (premium_kinds).
-- Runs alone on an audit (its macros), its variables set or not; then the other files
-- of sql/fairness/ count from these views.
-- Written by scripts/export_sql.py from pipeline/outputs/fairness_views.py: edit that.
CREATE OR REPLACE TEMP VIEW fair_hands AS
SELECT hand_id, table_id, hand_no, variant, n_players, started_at, (getvariable('player_id') IS NULL OR hand_id IN
    (SELECT hand_id FROM players WHERE player_id = getvariable('player_id'))) AS in_scope,
       concat_ws(' ', board_1, board_2) AS boards
FROM hands
WHERE (getvariable('from_day') IS NULL OR day >= getvariable('from_day'))
  AND (getvariable('to_day') IS NULL OR day <= getvariable('to_day'))
  AND (getvariable('table_id') IS NULL OR table_id = getvariable('table_id'))
  AND (getvariable('variant') IS NULL OR variant = getvariable('variant'));

CREATE OR REPLACE TEMP VIEW fair_players AS
SELECT p.hand_id, h.table_id, h.variant, h.n_players, h.started_at, h.in_scope, p.seat,
       p.player_id,
       p."natural",
       p.fantasyland, p.fantasyland_next,
       CASE WHEN getvariable('player_id') IS NULL THEN p.seat
            WHEN p.player_id = getvariable('player_id') THEN 1
            ELSE 2 END AS grp
FROM players p
JOIN fair_hands h USING (hand_id);

CREATE OR REPLACE TEMP VIEW fair_cards AS
SELECT p.hand_id, p.variant, p.seat, p.grp, i AS place, (cards_item(r.cards_1, (i)))::INTEGER AS card,
       false AS in_order
FROM fair_players p JOIN row_values r USING (hand_id, seat), range(7) AS t(i)
WHERE p.in_scope 
UNION ALL
SELECT p.hand_id, p.variant, p.seat, p.grp, i AS place, (cards_item(CASE WHEN (i) < 10 THEN r.cards_1 ELSE r.cards_2 END, (i) % 10))::INTEGER AS card,
       false AS in_order
FROM fair_players p JOIN family_row_values r USING (hand_id, seat), range(13) AS t(i)
WHERE p.in_scope AND NOT EXISTS (SELECT 1 FROM player_streets s WHERE s.hand_id = p.hand_id AND s.seat = p.seat)
UNION ALL
SELECT hand_id, variant, seat, grp, place - 1, placed_card(card)::INTEGER, true
FROM (
    SELECT p.hand_id, p.variant, p.seat, p.grp,
           unnest(list_filter(s.placements, lambda x: part_of(x) = 0)) AS card,
           generate_subscripts(list_filter(s.placements, lambda x: part_of(x) = 0), 1) AS place
    FROM fair_players p JOIN player_streets s USING (hand_id, seat)
    WHERE p.in_scope
)
UNION ALL
SELECT h.hand_id, h.variant, NULL, 0, i,
       card_of_text(substr(h.boards, 3 * i + 1, 2)), false
FROM fair_hands h, range(10) AS t(i)
WHERE h.in_scope AND h.boards <> '' AND 3 * i < length(h.boards);

CREATE OR REPLACE TEMP VIEW fair_sizes AS
SELECT p.hand_id, p.variant, p.grp,
       7 - ((cards_item(r.cards_1, (0)) = 52)::INTEGER + (cards_item(r.cards_1, (1)) = 52)::INTEGER + (cards_item(r.cards_1, (2)) = 52)::INTEGER + (cards_item(r.cards_1, (3)) = 52)::INTEGER + (cards_item(r.cards_1, (4)) = 52)::INTEGER + (cards_item(r.cards_1, (5)) = 52)::INTEGER + (cards_item(r.cards_1, (6)) = 52)::INTEGER) AS standard,
       7 AS dealt
FROM fair_players p JOIN row_values r USING (hand_id, seat)
WHERE p.in_scope
UNION ALL
SELECT p.hand_id, p.variant, p.grp, 13, 13
FROM fair_players p JOIN family_row_values f USING (hand_id, seat)
WHERE p.in_scope AND NOT EXISTS (SELECT 1 FROM player_streets s WHERE s.hand_id = p.hand_id AND s.seat = p.seat)
UNION ALL
SELECT p.hand_id, p.variant, p.grp, n, n
FROM fair_players p
JOIN (SELECT hand_id, seat, len(list_filter(placements, lambda x: part_of(x) = 0)) AS n
      FROM player_streets) s USING (hand_id, seat)
WHERE p.in_scope
UNION ALL
SELECT hand_id, variant, 0, (length(boards) + 1) // 3, (length(boards) + 1) // 3
FROM fair_hands
WHERE in_scope AND boards <> '';

CREATE OR REPLACE TEMP VIEW fair_masks AS
SELECT p.hand_id, p.seat, (CASE WHEN (cards_item(r.cards_1, (0))) < 52 THEN 1::BIGINT << (cards_item(r.cards_1, (0))) ELSE 0 END) | (CASE WHEN (cards_item(r.cards_1, (1))) < 52 THEN 1::BIGINT << (cards_item(r.cards_1, (1))) ELSE 0 END) | (CASE WHEN (cards_item(r.cards_1, (2))) < 52 THEN 1::BIGINT << (cards_item(r.cards_1, (2))) ELSE 0 END) | (CASE WHEN (cards_item(r.cards_1, (3))) < 52 THEN 1::BIGINT << (cards_item(r.cards_1, (3))) ELSE 0 END) | (CASE WHEN (cards_item(r.cards_1, (4))) < 52 THEN 1::BIGINT << (cards_item(r.cards_1, (4))) ELSE 0 END) | (CASE WHEN (cards_item(r.cards_1, (5))) < 52 THEN 1::BIGINT << (cards_item(r.cards_1, (5))) ELSE 0 END) | (CASE WHEN (cards_item(r.cards_1, (6))) < 52 THEN 1::BIGINT << (cards_item(r.cards_1, (6))) ELSE 0 END) AS mask
FROM fair_players p JOIN row_values r USING (hand_id, seat)
WHERE p.in_scope 
UNION ALL
SELECT p.hand_id, p.seat, (CASE WHEN (cards_item(CASE WHEN (0) < 10 THEN r.cards_1 ELSE r.cards_2 END, (0) % 10)) < 52 THEN 1::BIGINT << (cards_item(CASE WHEN (0) < 10 THEN r.cards_1 ELSE r.cards_2 END, (0) % 10)) ELSE 0 END) | (CASE WHEN (cards_item(CASE WHEN (1) < 10 THEN r.cards_1 ELSE r.cards_2 END, (1) % 10)) < 52 THEN 1::BIGINT << (cards_item(CASE WHEN (1) < 10 THEN r.cards_1 ELSE r.cards_2 END, (1) % 10)) ELSE 0 END) | (CASE WHEN (cards_item(CASE WHEN (2) < 10 THEN r.cards_1 ELSE r.cards_2 END, (2) % 10)) < 52 THEN 1::BIGINT << (cards_item(CASE WHEN (2) < 10 THEN r.cards_1 ELSE r.cards_2 END, (2) % 10)) ELSE 0 END) | (CASE WHEN (cards_item(CASE WHEN (3) < 10 THEN r.cards_1 ELSE r.cards_2 END, (3) % 10)) < 52 THEN 1::BIGINT << (cards_item(CASE WHEN (3) < 10 THEN r.cards_1 ELSE r.cards_2 END, (3) % 10)) ELSE 0 END) | (CASE WHEN (cards_item(CASE WHEN (4) < 10 THEN r.cards_1 ELSE r.cards_2 END, (4) % 10)) < 52 THEN 1::BIGINT << (cards_item(CASE WHEN (4) < 10 THEN r.cards_1 ELSE r.cards_2 END, (4) % 10)) ELSE 0 END) | (CASE WHEN (cards_item(CASE WHEN (5) < 10 THEN r.cards_1 ELSE r.cards_2 END, (5) % 10)) < 52 THEN 1::BIGINT << (cards_item(CASE WHEN (5) < 10 THEN r.cards_1 ELSE r.cards_2 END, (5) % 10)) ELSE 0 END) | (CASE WHEN (cards_item(CASE WHEN (6) < 10 THEN r.cards_1 ELSE r.cards_2 END, (6) % 10)) < 52 THEN 1::BIGINT << (cards_item(CASE WHEN (6) < 10 THEN r.cards_1 ELSE r.cards_2 END, (6) % 10)) ELSE 0 END) | (CASE WHEN (cards_item(CASE WHEN (7) < 10 THEN r.cards_1 ELSE r.cards_2 END, (7) % 10)) < 52 THEN 1::BIGINT << (cards_item(CASE WHEN (7) < 10 THEN r.cards_1 ELSE r.cards_2 END, (7) % 10)) ELSE 0 END) | (CASE WHEN (cards_item(CASE WHEN (8) < 10 THEN r.cards_1 ELSE r.cards_2 END, (8) % 10)) < 52 THEN 1::BIGINT << (cards_item(CASE WHEN (8) < 10 THEN r.cards_1 ELSE r.cards_2 END, (8) % 10)) ELSE 0 END) | (CASE WHEN (cards_item(CASE WHEN (9) < 10 THEN r.cards_1 ELSE r.cards_2 END, (9) % 10)) < 52 THEN 1::BIGINT << (cards_item(CASE WHEN (9) < 10 THEN r.cards_1 ELSE r.cards_2 END, (9) % 10)) ELSE 0 END) | (CASE WHEN (cards_item(CASE WHEN (10) < 10 THEN r.cards_1 ELSE r.cards_2 END, (10) % 10)) < 52 THEN 1::BIGINT << (cards_item(CASE WHEN (10) < 10 THEN r.cards_1 ELSE r.cards_2 END, (10) % 10)) ELSE 0 END) | (CASE WHEN (cards_item(CASE WHEN (11) < 10 THEN r.cards_1 ELSE r.cards_2 END, (11) % 10)) < 52 THEN 1::BIGINT << (cards_item(CASE WHEN (11) < 10 THEN r.cards_1 ELSE r.cards_2 END, (11) % 10)) ELSE 0 END) | (CASE WHEN (cards_item(CASE WHEN (12) < 10 THEN r.cards_1 ELSE r.cards_2 END, (12) % 10)) < 52 THEN 1::BIGINT << (cards_item(CASE WHEN (12) < 10 THEN r.cards_1 ELSE r.cards_2 END, (12) % 10)) ELSE 0 END) AS mask
FROM fair_players p JOIN family_row_values r USING (hand_id, seat)
WHERE p.in_scope AND NOT EXISTS (SELECT 1 FROM player_streets s WHERE s.hand_id = p.hand_id AND s.seat = p.seat)
UNION ALL
SELECT p.hand_id, p.seat,
       list_reduce(list_transform(list_filter(s.placements, lambda x: part_of(x) = 0),
                                  lambda x: (CASE WHEN (placed_card(x)) < 52 THEN 1::BIGINT << (placed_card(x)) ELSE 0 END)),
                   lambda a, b: a | b, 0::BIGINT)
FROM fair_players p JOIN player_streets s USING (hand_id, seat)
WHERE p.in_scope;

CREATE OR REPLACE TEMP VIEW premium_kinds AS
SELECT * FROM (VALUES
    ('taiwanese', 'Home Runs', true, false, false, false),
    ('taiwanese_jokers', 'Home Runs', true, false, false, false),
    ('chinese', 'scoops or naturals', false, true, true, false),
    ('ofc', 'scoops or Fantasyland entries', false, true, false, true),
    ('pineapple_ofc', 'scoops or Fantasyland entries', false, true, false, true)) AS k(variant, outcome, "home_run", "scoop", "natural", "fantasyland_entry");
