-- Each group's count of each card (52: a joker), over the hands in scope.
SELECT variant, grp, card, count(*) AS dealt
FROM (
    SELECT variant, grp, unnest(cards) AS card FROM fair_players WHERE in_scope
    UNION ALL
    SELECT variant, 'boards', unnest(board_cards) FROM fair_hands
    WHERE in_scope AND board_cards IS NOT NULL
)
GROUP BY ALL
ORDER BY ALL
