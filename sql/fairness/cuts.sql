-- How each hand cut the deck: its groups (seats, or the player and the other players
-- with --player; the boards) and their cards, standard cards apart from all; how many
-- hands cut it so. Reads the temporary views fair_hands and fair_players.
WITH groups AS (
    SELECT hand_id, variant, grp,
           sum(len(list_filter(cards, lambda c: c < 52)))::BIGINT AS standard,
           sum(len(cards))::BIGINT AS dealt
    FROM fair_players
    WHERE in_scope
    GROUP BY ALL
    UNION ALL
    SELECT hand_id, variant, 'boards', len(board_cards), len(board_cards)
    FROM fair_hands
    WHERE in_scope AND board_cards IS NOT NULL
),
cut AS (
    SELECT hand_id, variant,
           list(grp ORDER BY grp) AS groups,
           list(standard ORDER BY grp) AS standard,
           list(dealt ORDER BY grp) AS dealt
    FROM groups
    GROUP BY ALL
)
SELECT variant, groups, standard, dealt, count(*) AS hands
FROM cut
GROUP BY ALL
ORDER BY ALL
