-- Open-face deal order: per player-hand, the cards in the order dealt (street by street)
-- read as suits and as ranks; the pairs of consecutive cards of one category observed, and
-- the falling factorial sums of the category counts m that give their exact mean and
-- variance (fairness.order_moments). Grouped by those sums: how many player-hands, and
-- their pairs of one category.
WITH dealt AS (
    SELECT hand_id, seat, variant, cards, len(cards) AS n
    FROM fair_players
    WHERE in_scope AND dealt_in_order AND len(cards) >= 2
),
read_as AS (
    SELECT hand_id, seat, variant, n, 'suit' AS kind,
           list_transform(cards, lambda c: c % 4) AS seq
    FROM dealt
    UNION ALL
    SELECT hand_id, seat, variant, n, 'rank', list_transform(cards, lambda c: c // 4)
    FROM dealt
),
counts AS (
    SELECT hand_id, seat, kind, category, count(*) AS m
    FROM (SELECT hand_id, seat, kind, unnest(seq) AS category FROM read_as)
    GROUP BY ALL
),
sums AS (
    SELECT hand_id, seat, kind,
           sum(m * (m - 1))::BIGINT AS s2,
           sum(m * (m - 1) * (m - 2))::BIGINT AS s3,
           sum(m * (m - 1) * (m - 2) * (m - 3))::BIGINT AS s4,
           sum(m * (m - 1) * m * (m - 1))::BIGINT AS q
    FROM counts
    GROUP BY ALL
)
SELECT r.variant, r.kind, r.n, s.s2, s.s3, s.s4, s.q,
       count(*) AS players,
       sum(len(list_filter(range(1, r.n), lambda i: r.seq[i] = r.seq[i + 1])))::BIGINT AS same
FROM read_as r
JOIN sums s USING (hand_id, seat, kind)
GROUP BY ALL
ORDER BY ALL
