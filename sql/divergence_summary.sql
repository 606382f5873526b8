-- title: Divergence summary
-- question: Which checks found divergences, at how many hands and tables, when, and for how much money?
-- parameters: from_day, to_day (UTC dates, inclusive), table_id, player_id, variant
-- totals: divergences, hands, money_difference
SELECT d."check",
       count(*) AS divergences,
       count(DISTINCT d.hand_id) AS hands,
       count(DISTINCT d.table_id) AS tables,
       min(h.started_at) AS first_seen,
       max(h.started_at) AS last_seen,
       CASE WHEN d."check" IN ('won', 'rake', 'net', 'stack_end', 'pair_amount', 'rake_total',
                               'continuity', 'zero_sum')
            THEN sum(abs(coalesce(TRY_CAST(d.expected AS DECIMAL(18,2)), 0)
                         - coalesce(TRY_CAST(d.recorded AS DECIMAL(18,2)), 0)))
       END AS money_difference
FROM divergences d
JOIN hands h USING (hand_id)
LEFT JOIN players p ON p.hand_id = d.hand_id AND p.seat = d.seat
WHERE (getvariable('from_day') IS NULL OR h.day >= getvariable('from_day'))
  AND (getvariable('to_day') IS NULL OR h.day <= getvariable('to_day'))
  AND (getvariable('table_id') IS NULL OR d.table_id = getvariable('table_id'))
  AND (getvariable('variant') IS NULL OR h.variant = getvariable('variant'))
  AND (getvariable('player_id') IS NULL OR p.player_id = getvariable('player_id'))
GROUP BY d."check"
ORDER BY divergences DESC, d."check"
