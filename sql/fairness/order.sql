-- Open-face deal order: per player-hand, the cards in the order dealt (street by street)
-- read as suits and as ranks; the pairs of consecutive cards of one category, and the
-- falling factorial sums of the category counts m that give their exact mean and variance
-- (fairness.order_moments). Grouped by those sums: how many player-hands, and their pairs
-- of one category.
WITH dealt AS (
    SELECT hand_id, seat, variant, list(card ORDER BY place) AS cards
    FROM fair_cards
    WHERE in_order
    GROUP BY ALL
),
read_as AS (
    SELECT variant, 'suit' AS kind, list_transform(cards, lambda c: suit_of(c)) AS seq, 4 AS size
    FROM dealt
    UNION ALL
    SELECT variant, 'rank', list_transform(cards, lambda c: rank_of(c)), 13
    FROM dealt
),
counted AS (
    SELECT variant, kind, len(seq) AS n,
           len(list_filter(range(1, len(seq)), lambda i: seq[i] = seq[i + 1])) AS same,
           list_transform(range(size), lambda k: len(list_filter(seq, lambda c: c = k))) AS m
    FROM read_as
    WHERE len(seq) >= 2
)
SELECT variant, kind, n,
       list_sum(list_transform(m, lambda x: x * (x - 1)))::BIGINT AS s2,
       list_sum(list_transform(m, lambda x: x * (x - 1) * (x - 2)))::BIGINT AS s3,
       list_sum(list_transform(m, lambda x: x * (x - 1) * (x - 2) * (x - 3)))::BIGINT AS s4,
       list_sum(list_transform(m, lambda x: x * (x - 1) * x * (x - 1)))::BIGINT AS q,
       count(*) AS players,
       sum(same)::BIGINT AS same
FROM counted
GROUP BY ALL
ORDER BY ALL
