"""The views the fairness report counts from (`sql/fairness/views.sql`, written from here by
`scripts/export_sql.py`; a test fails when the file and this module differ).

The file runs alone on an audit, in the DuckDB CLI or from Python, after the report's
variables are set or not (unset: no filter); the other files of sql/fairness/ then count
from its views. It is written from here because it spells out facts whose home is the
code: the layouts' tables and sizes, the groups' numbers (`dealt.py`), the premium
outcomes of each game.
"""

from __future__ import annotations

from pipeline.core.audit import ROW_TABLES
from pipeline.core.cards import JOKER
from pipeline.core.games import LAYOUTS, VARIANTS, Family, Layout
from pipeline.helpers.encoding import DEALT_PART
from pipeline.helpers.packing import CARDS
from pipeline.outputs.dealt import BOARDS_GROUP, OTHERS_GROUP, PLAYER_GROUP

KINDS = {
    "home_run": "Home Runs",
    "scoop": "scoops",
    "natural": "naturals",
    "fantasyland_entry": "Fantasyland entries",
}
HEADER = """-- The views the fairness report counts from: the hands its filters choose (fair_hands),
-- their players in groups (fair_players), every card dealt (fair_cards), each group's
-- cards in each hand (fair_sizes), each player's standard cards as a mask (fair_masks),
-- and each game's premium outcomes (premium_kinds).
-- Runs alone on an audit (its macros), its variables set or not; then the other files
-- of sql/fairness/ count from these views.
-- Written by scripts/export_sql.py from pipeline/outputs/fairness_views.py: edit that.
"""


# The views the counts read: the hands the filters choose; their players, each in a group
# (their seat; with --player, 1 the player and 2 the other players; 0 is the boards); and
# every card dealt, as a card code (52 a joker) at its place among the group's cards
# (open-face players' in the order dealt). Packed cards are read by crossing each player
# with the places of their cards, which DuckDB does far faster than list functions.
_IN_SCOPE = """(getvariable('player_id') IS NULL OR hand_id IN
    (SELECT hand_id FROM players WHERE player_id = getvariable('player_id')))"""
_HANDS_VIEW = f"""
CREATE OR REPLACE TEMP VIEW fair_hands AS
SELECT hand_id, table_id, hand_no, variant, n_players, started_at, {_IN_SCOPE} AS in_scope,
       concat_ws(' ', board_1, board_2) AS boards
FROM hands
WHERE (getvariable('from_day') IS NULL OR day >= getvariable('from_day'))
  AND (getvariable('to_day') IS NULL OR day <= getvariable('to_day'))
  AND (getvariable('table_id') IS NULL OR table_id = getvariable('table_id'))
  AND (getvariable('variant') IS NULL OR variant = getvariable('variant'))"""
_PLAYERS_VIEW = f"""
CREATE OR REPLACE TEMP VIEW fair_players AS
SELECT p.hand_id, h.table_id, h.variant, h.n_players, h.started_at, h.in_scope, p.seat,
       p.player_id,
       p."natural",
       p.fantasyland, p.fantasyland_next,
       CASE WHEN getvariable('player_id') IS NULL THEN p.seat
            WHEN p.player_id = getvariable('player_id') THEN {PLAYER_GROUP}
            ELSE {OTHERS_GROUP} END AS grp
FROM players p
JOIN fair_hands h USING (hand_id)"""


def _packed_cards(table: str, layout: Layout, where: str = "") -> str:
    """Each card of a layout's stored settings, one row per card."""
    cards = LAYOUTS[layout].cards_per_player
    code = CARDS.unpacked_sql("r", "i", CARDS.words(cards))
    return f"""
SELECT p.hand_id, p.variant, p.seat, p.grp, i AS place, ({code})::INTEGER AS card,
       false AS in_order
FROM fair_players p JOIN {table} r USING (hand_id, seat), range({cards}) AS t(i)
WHERE p.in_scope {where}"""


def _jokers(table: str, layout: Layout) -> str:
    """How many jokers a player of a layout holds, from their packed cards."""
    cards = LAYOUTS[layout].cards_per_player
    words = CARDS.words(cards)
    return " + ".join(
        f"({CARDS.unpacked_sql(table, str(i), words)} = {JOKER})::INTEGER" for i in range(cards)
    )


_DEALT_PART = f"lambda x: part_of(x) = {DEALT_PART}"  # a placement of a dealt card
_CHINESE_CARDS = LAYOUTS[Layout.chinese].cards_per_player
_TAIWANESE_CARDS = LAYOUTS[Layout.taiwanese].cards_per_player
_NO_STREETS = (
    "NOT EXISTS (SELECT 1 FROM player_streets s WHERE s.hand_id = p.hand_id AND s.seat = p.seat)"
)
_BOARD_CARD = "substr(h.boards, 3 * i + 1, 2)"  # canonical cards, one space between
_BOARD_CARDS = LAYOUTS[Layout.taiwanese].boards * LAYOUTS[Layout.taiwanese].board_size
_CARDS_VIEW = (
    "CREATE OR REPLACE TEMP VIEW fair_cards AS"
    + _packed_cards(ROW_TABLES[Layout.taiwanese], Layout.taiwanese)
    + "\nUNION ALL"
    + _packed_cards(ROW_TABLES[Layout.chinese], Layout.chinese, f"AND {_NO_STREETS}")
    + f"""
UNION ALL
SELECT hand_id, variant, seat, grp, place - 1, placed_card(card)::INTEGER, true
FROM (
    SELECT p.hand_id, p.variant, p.seat, p.grp,
           unnest(list_filter(s.placements, {_DEALT_PART})) AS card,
           generate_subscripts(list_filter(s.placements, {_DEALT_PART}), 1) AS place
    FROM fair_players p JOIN player_streets s USING (hand_id, seat)
    WHERE p.in_scope
)
UNION ALL
SELECT h.hand_id, h.variant, NULL, {BOARDS_GROUP}, i,
       card_of_text({_BOARD_CARD}), false
FROM fair_hands h, range({_BOARD_CARDS}) AS t(i)
WHERE h.in_scope AND h.boards <> '' AND 3 * i < length(h.boards)"""
)


# Each group's cards in each hand, standard apart from all, read from the stored words
# without spreading them card by card: what cuts.sql packs into one key per hand.
_SIZES_VIEW = f"""
CREATE OR REPLACE TEMP VIEW fair_sizes AS
SELECT p.hand_id, p.variant, p.grp,
       {_TAIWANESE_CARDS} - ({_jokers("r", Layout.taiwanese)}) AS standard,
       {_TAIWANESE_CARDS} AS dealt
FROM fair_players p JOIN {ROW_TABLES[Layout.taiwanese]} r USING (hand_id, seat)
WHERE p.in_scope
UNION ALL
SELECT p.hand_id, p.variant, p.grp, {_CHINESE_CARDS}, {_CHINESE_CARDS}
FROM fair_players p JOIN {ROW_TABLES[Layout.chinese]} f USING (hand_id, seat)
WHERE p.in_scope AND {_NO_STREETS}
UNION ALL
SELECT p.hand_id, p.variant, p.grp, n, n
FROM fair_players p
JOIN (SELECT hand_id, seat, len(list_filter(placements, {_DEALT_PART})) AS n
      FROM player_streets) s USING (hand_id, seat)
WHERE p.in_scope
UNION ALL
SELECT hand_id, variant, {BOARDS_GROUP}, (length(boards) + 1) // 3, (length(boards) + 1) // 3
FROM fair_hands
WHERE in_scope AND boards <> ''"""


def _mask(card: str) -> str:
    """A card's bit among the standard cards' (none for a joker)."""
    return f"(CASE WHEN ({card}) < {JOKER} THEN 1::BIGINT << ({card}) ELSE 0 END)"


def _masked(table: str, layout: Layout, where: str = "") -> str:
    """Each player's standard cards of a layout's stored settings, as one 52-bit mask."""
    cards = LAYOUTS[layout].cards_per_player
    words = CARDS.words(cards)
    bits = " | ".join(_mask(CARDS.unpacked_sql("r", str(i), words)) for i in range(cards))
    return f"""
SELECT p.hand_id, p.seat, {bits} AS mask
FROM fair_players p JOIN {table} r USING (hand_id, seat)
WHERE p.in_scope {where}"""


# Each player's standard cards as a 52-bit mask (card c is bit c), read from the stored
# words without spreading them card by card: what the tests between hands compare.
_MASKS_VIEW = (
    "CREATE OR REPLACE TEMP VIEW fair_masks AS"
    + _masked(ROW_TABLES[Layout.taiwanese], Layout.taiwanese)
    + "\nUNION ALL"
    + _masked(ROW_TABLES[Layout.chinese], Layout.chinese, f"AND {_NO_STREETS}")
    + f"""
UNION ALL
SELECT p.hand_id, p.seat,
       list_reduce(list_transform(list_filter(s.placements, {_DEALT_PART}),
                                  lambda x: {_mask("placed_card(x)")}),
                   lambda a, b: a | b, 0::BIGINT)
FROM fair_players p JOIN player_streets s USING (hand_id, seat)
WHERE p.in_scope"""
)


def _premium_kinds() -> str:
    """Which premium outcomes each game has (a Home Run; a scoop, a natural, a Fantasyland
    entry), and the name of the outcome they form together, as a view."""
    rows = []
    for name, game in VARIANTS.items():
        has = {
            "home_run": game.family is Family.taiwanese,
            "scoop": game.family is not Family.taiwanese,
            "natural": game.family is Family.chinese,
            "fantasyland_entry": game.open_face,
        }
        outcome = " or ".join(KINDS[kind] for kind, present in has.items() if present)
        flags = ", ".join(str(v).lower() for v in has.values())
        rows.append(f"('{name}', '{outcome}', {flags})")
    kinds = ", ".join(f'"{kind}"' for kind in KINDS)  # "natural" is a keyword
    return (
        "CREATE OR REPLACE TEMP VIEW premium_kinds AS\nSELECT * FROM (VALUES\n    "
        + ",\n    ".join(rows)
        + f") AS k(variant, outcome, {kinds})"
    )


def text() -> str:
    """The file's text."""
    views = (_HANDS_VIEW, _PLAYERS_VIEW, _CARDS_VIEW, _SIZES_VIEW, _MASKS_VIEW, _premium_kinds())
    return HEADER + "".join(f"{v.strip()};\n\n" for v in views).rstrip() + "\n"
