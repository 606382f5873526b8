-- title: Fantasyland
-- question: Per open-face table and player, how often was Fantasyland entered and kept, how many hands were played in it, and how many cards did those hands deal?
-- parameters: from_day, to_day (UTC dates, inclusive), table_id, player_id, variant
-- total: the last row, its table_id empty, is the whole result's:
--   hands: distinct open-face hands (a hand deals several players: not the sum of the rows)
--   entries: the sum of the rows (a player's hand that earns Fantasyland from outside it)
--   stays: the sum of the rows (a player's hand in Fantasyland that earns it again)
--   fantasyland_hands: the sum of the rows (players' hands dealt in Fantasyland)
--   cards_dealt_in_fantasyland: the sum of the rows
WITH chosen AS (
    SELECT p.hand_id, h.table_id, h.variant, p.player_id, p.fantasyland, p.fantasyland_next,
           p.cards_dealt
    FROM players p JOIN hands h USING (hand_id)
    WHERE p.fantasyland IS NOT NULL
      AND (getvariable('from_day') IS NULL OR h.day >= getvariable('from_day'))
      AND (getvariable('to_day') IS NULL OR h.day <= getvariable('to_day'))
      AND (getvariable('table_id') IS NULL OR h.table_id = getvariable('table_id'))
      AND (getvariable('variant') IS NULL OR h.variant = getvariable('variant'))
      AND (getvariable('player_id') IS NULL OR p.player_id = getvariable('player_id'))
)
SELECT table_id,
       player_id,
       CASE WHEN grouping(table_id) = 0 THEN any_value(variant) END AS variant,
       count(DISTINCT hand_id) AS hands,
       count(*) FILTER (WHERE fantasyland_next AND NOT fantasyland) AS entries,
       count(*) FILTER (WHERE fantasyland_next AND fantasyland) AS stays,
       count(*) FILTER (WHERE fantasyland) AS fantasyland_hands,
       coalesce(sum(cards_dealt) FILTER (WHERE fantasyland), 0)::BIGINT
           AS cards_dealt_in_fantasyland
FROM chosen
GROUP BY GROUPING SETS ((table_id, player_id), ())
ORDER BY table_id NULLS LAST, player_id
