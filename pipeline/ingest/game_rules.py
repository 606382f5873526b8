"""The game checks of ingest (players, card, joker, duplicate_card, setting) over whole columns.

Each rule is one function: it judges every record of a batch at once and returns,
with its verdict, how to say why a record failed, read from the same columns the
verdict came from, so a verdict and its message cannot drift apart. The counts
(players, seats, row sizes, jokers) come from each record's game.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.core.batch import STREET_PARTS, Streets
from pipeline.core.cards import INVALID, JOKER, format_cards, try_parse
from pipeline.core.games import ROW_NAMES, VARIANTS, Variant
from pipeline.core.rules import CONTRACT, RuleBook
from pipeline.helpers.columns import children, field, ints, is_null, lengths, whole
from pipeline.ingest.profiles import resolve
from pipeline.ingest.quarantine import QuarantineCheck

Flags = npt.NDArray[np.bool_]
Ints = npt.NDArray[np.int64]
Codes = npt.NDArray[np.int8]
GAMES: tuple[Variant, ...] = tuple(VARIANTS.values())


@dataclass(frozen=True)
class CardList:
    """One list of cards per player (a row, or the dealt cards): each card's code, the
    player holding it (ascending) and its text as read; per player, the list's length
    (-1 where absent)."""

    codes: Codes
    owner: Ints
    texts: pa.Array
    lengths: Ints

    @classmethod
    def read(cls, lists: pa.Array) -> CardList:
        texts, owner = children(lists)
        return cls(try_parse(texts), owner, texts, lengths(lists))

    def of(self, player: int) -> slice:
        """Where `player`'s cards are in `codes` and `texts`."""
        lo, hi = np.searchsorted(self.owner, [player, player + 1])
        return slice(int(lo), int(hi))

    def per_player(self, n_players: int, size: int) -> Codes:
        """The codes as (players, size); a player whose list has another length gets -1s."""
        fits = np.bincount(self.owner, minlength=n_players) == size
        if fits.all():  # the usual case: the codes are already player after player
            return self.codes.reshape(n_players, size)
        out = np.full((n_players, size), INVALID, dtype=np.int8)
        out[fits] = self.codes[fits[self.owner]].reshape(-1, size)
        return out


@dataclass(frozen=True)
class HandCards:
    """The cards of a batch of records that passed the schema, with their games."""

    game: Ints  # per hand: index into GAMES
    hand_of: Ints  # per player: index of the hand
    first_player: Ints  # per hand (and one past the last): its first player
    seat: Ints
    boards: CardList  # every board card of each hand, the hand as owner
    board_count: Ints  # per hand: how many boards it deals
    rows: dict[str, CardList]
    dealt: CardList
    declared_natural: Flags  # per player
    natural_unnamed: Flags
    streets: Streets  # open-face: each street's cards as codes, what the batch keeps
    street_cards: dict[str, CardList]  # the same per part of a street (owner: the player)
    without_streets: Flags  # per player: an open-face player whose streets are missing
    book: RuleBook  # the run's profiles
    profile: Ints  # per hand: its profile's code in `book` (its game's standard if unusable)
    profile_failed: Flags  # per hand: its profile cannot be used
    profile_why: dict[int, str]  # why, for those hands

    @classmethod
    def read(cls, table: pa.Table, book: RuleBook = CONTRACT) -> HandCards:
        n = table.num_rows
        resolved = resolve(table, book)
        players, hand_of = children(table["players"])
        boards, board_hand = children(table["boards"])
        board_texts, card_board = children(boards)
        names = pa.array([g.name for g in GAMES])
        streets, street_cards = _streets(field(players, "streets"))
        return cls(
            game=ints(pc.index_in(whole(table["variant"]), value_set=names)),
            hand_of=hand_of,
            first_player=np.searchsorted(hand_of, np.arange(n + 1)).astype(np.int64),
            seat=ints(field(players, "seat")),
            boards=CardList(
                try_parse(board_texts),
                board_hand[card_board],
                board_texts,
                np.bincount(board_hand[card_board], minlength=n),
            ),
            board_count=np.bincount(board_hand, minlength=n),
            rows={name: CardList.read(field(players, name)) for name in ROW_NAMES},
            dealt=CardList.read(field(players, "cards")),
            declared_natural=pc.fill_null(
                pc.equal(field(players, "declare"), "natural"), False
            ).to_numpy(zero_copy_only=False),
            natural_unnamed=is_null(field(players, "natural")),
            streets=streets,
            street_cards=street_cards,
            without_streets=_open_face(table)[hand_of] & (lengths(field(players, "streets")) <= 0),
            book=book,
            profile=resolved.profile,
            profile_failed=resolved.failed,
            profile_why=resolved.why,
        )

    def __len__(self) -> int:
        return len(self.game)

    def per_hand(self, count: Callable[[Variant], int]) -> Ints:
        """A count of each hand's game, such as its most players."""
        return np.array([count(g) for g in GAMES], dtype=np.int64)[self.game]

    def row_size(self, name: str) -> Ints:
        """Per hand, how many cards its game's row `name` holds."""
        return self.per_hand(lambda g: g.row(name).size)

    def players_of(self, hand: int) -> range:
        return range(int(self.first_player[hand]), int(self.first_player[hand + 1]))

    def setting_texts(self, player: int) -> list[str]:
        return [t for rows in self.rows.values() for t in rows.texts[rows.of(player)].to_pylist()]


@dataclass(frozen=True)
class Verdict:
    """Which records fail a rule, and why one of them does (a sentence)."""

    failed: Flags
    why: Callable[[int], str]


def rules_rule(h: HandCards) -> Verdict:
    """A profile the run holds, of the hand's game."""
    return Verdict(h.profile_failed, h.profile_why.__getitem__)


def boards_rule(h: HandCards) -> Verdict:
    """As many boards as the hand's profile deals (none in the Chinese family)."""
    want = h.book.boards[h.profile]

    def why(i: int) -> str:
        game = GAMES[h.game[i]]
        if want[i] == 0:
            return f"boards: a {game.name} hand has no boards, this one has {h.board_count[i]}"
        profile = h.book.profiles[h.profile[i]].name
        under = "" if profile == "standard" else f" under profile {profile}"
        return f"boards: a {game.name} hand deals {want[i]}{under}, this one {h.board_count[i]}"

    return Verdict(h.board_count != want, why)


def declaration_rule(h: HandCards) -> Verdict:
    """A declared natural names which."""
    unnamed = np.flatnonzero(h.declared_natural & h.natural_unnamed)
    failed = np.zeros(len(h), dtype=bool)
    failed[h.hand_of[unnamed]] = True

    def why(i: int) -> str:
        p = next(p for p in h.players_of(i) if h.declared_natural[p] and h.natural_unnamed[p])
        return f"natural: seat {h.seat[p]} declares a natural but does not name it"

    return Verdict(failed, why)


def players_rule(h: HandCards) -> Verdict:
    count = np.diff(h.first_player)
    # A seat is repeated when the hand's seats, as bits, are fewer than its players.
    seat_bits = np.left_shift(np.uint64(1), np.clip(h.seat, 0, 63).astype(np.uint64))
    repeated = np.bitwise_count(_or_by(h.hand_of, seat_bits, len(h))) < count
    least, most = h.per_hand(lambda g: g.min_players), h.per_hand(lambda g: g.max_players)

    def why(i: int) -> str:
        if repeated[i]:
            seats = h.seat[h.players_of(i)].tolist()
            twice = min(s for s in seats if seats.count(s) > 1)
            return f"seat {twice} is dealt twice; seats are unique in a hand"
        return f"{count[i]} players are dealt; a hand deals {least[i]} to {most[i]}"

    return Verdict((count < least) | (count > most) | repeated, why)


def card_rule(h: HandCards) -> Verdict:
    bad = np.zeros(len(h), dtype=bool)
    bad[h.boards.owner[h.boards.codes == INVALID]] = True
    lists = {**h.rows, "cards": h.dealt} | {
        f"streets' {part}": cards for part, cards in h.street_cards.items()
    }
    for cards in lists.values():
        bad[h.hand_of[cards.owner[cards.codes == INVALID]]] = True

    def why(i: int) -> str:
        mine = h.boards.of(i)
        size = GAMES[h.game[i]].board_size
        for k in np.flatnonzero(h.boards.codes[mine] == INVALID)[:1]:
            text = h.boards.texts[mine.start + int(k)].as_py()
            return f"board {k // size + 1} holds {text!r}, which is not a card"
        for p in h.players_of(i):
            for name, cards in lists.items():
                mine = cards.of(p)
                for k in np.flatnonzero(cards.codes[mine] == INVALID)[:1]:
                    text = cards.texts[mine.start + int(k)].as_py()
                    return (
                        f"seat {h.seat[p]} {name} holds {text!r}, which is not a card "
                        "(expected a rank of 23456789TJQKA then a suit of cdhs, or JK)"
                    )
        raise AssertionError("the card rule failed a hand without a bad card")

    return Verdict(bad, why)


def joker_rule(h: HandCards) -> Verdict:
    held = np.zeros(len(h), dtype=np.int64)
    for cards in h.rows.values():
        held += np.bincount(h.hand_of[cards.owner[cards.codes == JOKER]], minlength=len(h))
    on_board = np.zeros(len(h), dtype=bool)
    on_board[h.boards.owner[h.boards.codes == JOKER]] = True
    allowed = h.per_hand(lambda g: g.jokers)

    def why(i: int) -> str:
        if on_board[i]:
            return "a joker is on a board; jokers are dealt only to players"
        if allowed[i] == 0:
            return f"{held[i]} joker(s) dealt in {GAMES[h.game[i]].name}, which has none"
        return f"{held[i]} jokers dealt; the deck has {allowed[i]}"

    return Verdict(on_board | (held > allowed), why)


def duplicate_card_rule(h: HandCards) -> Verdict:
    # A card is dealt twice in a hand when the hand's cards, as bits, are fewer than its cards.
    n = len(h)
    hand_bits = np.zeros(n, dtype=np.uint64)
    hand_cards = np.zeros(n, dtype=np.int64)
    discards = h.street_cards["discard"]
    lists = [h.boards, *h.rows.values(), discards]  # discards too: cards no one else holds
    for cards, owner in [(c, h.hand_of[c.owner] if c is not h.boards else c.owner) for c in lists]:
        bits, standard = _card_bits(cards.codes)
        hand_bits |= _or_by(owner, bits, n)
        hand_cards += np.bincount(owner[standard], minlength=n)

    def why(i: int) -> str:
        size = max(GAMES[h.game[i]].board_size, 1)
        board = h.boards.codes[h.boards.of(i)]
        places = [
            (f"board {b + 1}", board[b * size : (b + 1) * size]) for b in range(len(board) // size)
        ]
        places += [
            (f"seat {h.seat[p]} {name}", cards.codes[cards.of(p)])
            for p in h.players_of(i)
            for name, cards in {**h.rows, "discards": discards}.items()
        ]
        seen: dict[int, str] = {}
        for where, codes in places:
            for code in codes[(codes >= 0) & (codes < JOKER)].tolist():
                if code in seen:
                    card = format_cards(np.array([code]))[0]
                    return f"{card} is dealt twice: in {seen[code]} and in {where}"
                seen[code] = where
        raise AssertionError("the duplicate_card rule failed a hand without a repeated card")

    return Verdict(np.bitwise_count(hand_bits) < hand_cards, why)


def setting_rule(h: HandCards) -> Verdict:
    """Rows of the game's sizes, holding the dealt cards when those are recorded."""
    n_players = len(h.hand_of)
    sizes = {name: h.row_size(name) for name in ROW_NAMES}
    shaped = np.ones(n_players, dtype=bool)
    for name, cards in h.rows.items():
        shaped &= cards.lengths == sizes[name][h.hand_of]
    dealt_size = h.per_hand(lambda g: g.cards_per_player)[h.hand_of]
    has_dealt = h.dealt.lengths >= 0
    wrong_count = has_dealt & (h.dealt.lengths != dealt_size)
    differs = np.zeros(n_players, dtype=bool)
    compare = np.flatnonzero(has_dealt & shaped & ~wrong_count)
    for size in np.unique(dealt_size[compare]):  # one size a game
        some = compare[dealt_size[compare] == size]
        setting = np.concatenate(
            [h.rows[r].per_player(n_players, int(sizes[r][h.hand_of[some[0]]])) for r in ROW_NAMES],
            axis=1,
        )
        dealt = h.dealt.per_player(n_players, int(size))
        differs[some] = (np.sort(setting[some], axis=1) != np.sort(dealt[some], axis=1)).any(axis=1)
    wrong = ~shaped | wrong_count | differs | h.without_streets

    def why(i: int) -> str:
        for p in h.players_of(i):
            if h.without_streets[p]:
                return f"seat {h.seat[p]} has no streets; an open-face hand records them"
            if not shaped[p]:
                got = ", ".join(f"{r} {max(c.lengths[p], 0)}" for r, c in h.rows.items())
                *most, last = (str(int(sizes[r][i])) for r in ROW_NAMES)
                return f"seat {h.seat[p]} set {got} cards; rows hold {', '.join(most)} and {last}"
        p = next(p for p in h.players_of(i) if wrong_count[p] or differs[p])
        dealt = h.dealt.texts[h.dealt.of(p)].to_pylist()
        return (
            f"seat {h.seat[p]} set {' '.join(h.setting_texts(p))}, which are not the cards "
            f"dealt ({' '.join(dealt)})"
        )

    failed = np.zeros(len(h), dtype=bool)
    failed[h.hand_of[wrong]] = True
    return Verdict(failed, why)


def _streets(streets: pa.Array) -> tuple[Streets, dict[str, CardList]]:
    """Every player's streets, each part's card texts parsed once: as the batch keeps
    them, and per part as lists of each player's cards (for the card checks)."""
    per_street, player = children(streets)
    parts, lists = {}, {}
    for name in STREET_PARTS:
        texts, street = children(field(per_street, name))
        codes = try_parse(texts)
        parts[name] = (codes, street)
        lists[name] = CardList(codes, player[street], texts, np.zeros(0, dtype=np.int64))
    return Streets(player, parts), lists


def _open_face(table: pa.Table) -> Flags:
    names = pa.array([g.name for g in GAMES if g.open_face])
    return pc.is_in(whole(table["variant"]), value_set=names).to_numpy(zero_copy_only=False)


# In order of precedence: a record is quarantined by the first rule it fails.
RULES: tuple[tuple[QuarantineCheck, Callable[[HandCards], Verdict]], ...] = (
    (QuarantineCheck.rules, rules_rule),
    (QuarantineCheck.schema, boards_rule),
    (QuarantineCheck.schema, declaration_rule),
    (QuarantineCheck.players, players_rule),
    (QuarantineCheck.card, card_rule),
    (QuarantineCheck.joker, joker_rule),
    (QuarantineCheck.duplicate_card, duplicate_card_rule),
    (QuarantineCheck.setting, setting_rule),
)


def _card_bits(codes: Codes) -> tuple[npt.NDArray[np.uint64], Flags]:
    """Each code as a bit of a 52-bit mask (0 for jokers and non-cards), and which are cards."""
    standard = (codes >= 0) & (codes < JOKER)
    shift = np.where(standard, codes, 0).astype(np.uint64)
    return np.where(standard, np.left_shift(np.uint64(1), shift), np.uint64(0)), standard


def _or_by(owner: Ints, bits: npt.NDArray[np.uint64], owners: int) -> Any:
    """The OR of each owner's bits; `owner` is in ascending order (a list column's parents)."""
    count = np.bincount(owner, minlength=owners)
    out = np.zeros(owners, dtype=np.uint64)
    some = count > 0
    if some.any():
        out[some] = np.bitwise_or.reduceat(bits, (np.cumsum(count) - count)[some])
    return out
