-- title: Divergence summary
-- question: Which checks found divergences, at how many hands and tables, when, and for how much money?
-- parameters: from_day, to_day (UTC dates, inclusive), table_id, player_id, variant
-- rows: a check of the divergences, or a repeated hand id (duplicate_hand: an exact repeat of the record
--   audited; conflicting_hand: a record of other content), counted apart; a repeat is quarantined, its
--   hand the one audited, and it moves no money here.
-- total: the last row, its check empty, is the whole result's (the same hand may diverge by several checks):
--   divergences: the sum of the rows
--   hands: distinct hands that diverged, by any check
--   tables: distinct tables with a hand that diverged
--   first_seen: the earliest of the rows
--   last_seen: the latest of the rows
--   net_difference: the sum of |net - recorded_net| over the players of the hands that diverged, each player of a hand once
--   rake_difference: the sum of |rake_total - recorded rake| over the hands that diverged, each hand once
-- headline: Money moved: the players' nets differ from the record by {net_difference} in all, the rake by {rake_difference}.
-- columns: money_difference is the check's own amounts, sum |expected - recorded| (money checks only; the
--   same cents are seen by won, net, stack_end and pair_amount, so it has no total); net_difference and
--   rake_difference are the money at the hands the row's check flagged.
WITH found AS (
    SELECT d.*, h.started_at
    FROM divergences d
    JOIN hands h USING (hand_id)
    LEFT JOIN players p ON p.hand_id = d.hand_id AND p.seat = d.seat
    WHERE (getvariable('from_day') IS NULL OR h.day >= getvariable('from_day'))
      AND (getvariable('to_day') IS NULL OR h.day <= getvariable('to_day'))
      AND (getvariable('table_id') IS NULL OR d.table_id = getvariable('table_id'))
      AND (getvariable('variant') IS NULL OR h.variant = getvariable('variant'))
      AND (getvariable('player_id') IS NULL OR p.player_id = getvariable('player_id'))
),
repeats AS (  -- records of a hand id audited already, by the hand audited
    SELECT q.hand_id, h.table_id, q."check", h.started_at
    FROM quarantine q
    JOIN hands h USING (hand_id)
    WHERE q."check" IN ('duplicate_hand', 'conflicting_hand')
      AND (getvariable('from_day') IS NULL OR h.day >= getvariable('from_day'))
      AND (getvariable('to_day') IS NULL OR h.day <= getvariable('to_day'))
      AND (getvariable('table_id') IS NULL OR h.table_id = getvariable('table_id'))
      AND (getvariable('variant') IS NULL OR h.variant = getvariable('variant'))
      AND (getvariable('player_id') IS NULL OR EXISTS (
          SELECT 1 FROM players p
          WHERE p.hand_id = q.hand_id AND p.player_id = getvariable('player_id')))
),
findings AS (
    SELECT hand_id, table_id, "check", started_at, expected, recorded FROM found
    UNION ALL
    SELECT hand_id, table_id, "check", started_at, NULL, NULL FROM repeats
),
hand_money AS (  -- what each hand's record is off by, each player and the rake once
    SELECT h.hand_id,
           n.net_difference,
           abs(h.rake_total - coalesce(h.recorded_rake_total, n.recorded_rake)) AS rake_difference
    FROM hands h
    JOIN (SELECT hand_id,
                 sum(abs(net - recorded_net)) FILTER (
                     WHERE getvariable('player_id') IS NULL
                        OR player_id = getvariable('player_id')) AS net_difference,
                 sum(recorded_rake) AS recorded_rake
          FROM players GROUP BY hand_id) n USING (hand_id)
    WHERE hand_id IN (SELECT hand_id FROM found)
),
per_check AS (
    SELECT "check",
           count(*) AS divergences,
           count(DISTINCT hand_id) AS hands,
           count(DISTINCT table_id) AS tables,
           min(started_at) AS first_seen,
           max(started_at) AS last_seen,
           CASE WHEN "check" IN ('won', 'rake', 'net', 'stack_end', 'pair_amount', 'rake_total',
                                 'continuity', 'zero_sum')
                THEN sum(abs(coalesce(TRY_CAST(expected AS DECIMAL(18,2)), 0)
                             - coalesce(TRY_CAST(recorded AS DECIMAL(18,2)), 0)))
           END AS money_difference
    FROM findings
    GROUP BY "check"
),
money_per_check AS (
    SELECT c."check",
           coalesce(sum(m.net_difference), 0) AS net_difference,
           coalesce(sum(m.rake_difference), 0) AS rake_difference
    FROM (SELECT DISTINCT "check", hand_id FROM found) c
    JOIN hand_money m USING (hand_id)
    GROUP BY c."check"
)
SELECT * FROM (
    SELECT c.*, coalesce(m.net_difference, 0) AS net_difference,
           coalesce(m.rake_difference, 0) AS rake_difference
    FROM per_check c LEFT JOIN money_per_check m USING ("check")
    UNION ALL
    SELECT NULL, count(*), count(DISTINCT hand_id), count(DISTINCT table_id), min(started_at),
           max(started_at), NULL,
           (SELECT coalesce(sum(net_difference), 0) FROM hand_money),
           (SELECT coalesce(sum(rake_difference), 0) FROM hand_money)
    FROM findings
)
ORDER BY "check" IS NULL, divergences DESC, "check"
