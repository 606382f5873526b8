-- title: Jokers
-- question: Per row and hand category, what did the jokers become, and how often?
-- parameters: from_day, to_day (UTC dates, inclusive), table_id, player_id, variant
-- total: the last row, its row empty, is the whole result's:
--   times: the sum of the rows (every joker substitute once)
WITH substitutes AS (
    SELECT r."row", r.category, unnest(r.joker_as) AS became
    FROM rows r
    JOIN hands h USING (hand_id)
    JOIN players p ON p.hand_id = r.hand_id AND p.seat = r.seat
    WHERE r.joker_as IS NOT NULL
      AND (getvariable('from_day') IS NULL OR h.day >= getvariable('from_day'))
      AND (getvariable('to_day') IS NULL OR h.day <= getvariable('to_day'))
      AND (getvariable('table_id') IS NULL OR h.table_id = getvariable('table_id'))
      AND (getvariable('variant') IS NULL OR h.variant = getvariable('variant'))
      AND (getvariable('player_id') IS NULL OR p.player_id = getvariable('player_id'))
)
SELECT "row", category, became, count(*) AS times
FROM substitutes
GROUP BY GROUPING SETS (("row", category, became), ())
ORDER BY list_position(['top', 'middle', 'bottom'], "row") NULLS LAST, category, times DESC, became
