"""What the hands recorded, gathered once for the readings of `rules infer`: the players'
stacks (the floor), the pairs decided by their rows (row points and the Home Run), each
row's royalty, the pairs in which a natural was declared, and the pairs' points (the
open-face cap).

Each is gathered over the whole pool on first use, in hand order, so that a table's
part is a few slices (`ranges`), never a pass over the pool per table.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from typing import ClassVar

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.core.audit import score
from pipeline.core.batch import HandBatch, Settlements
from pipeline.core.evaluator import Category, category_of, first_rank_of, parse_value, value_text
from pipeline.core.evaluator.values import low_only_values
from pipeline.core.games import Layout
from pipeline.core.games.chinese import NATURAL, NATURALS, PLAY, SURRENDER, as_low_middle
from pipeline.core.games.chinese import fouled as fouls
from pipeline.core.games.game import HOME_RUN, ROWS
from pipeline.core.games.pairs import Pairs
from pipeline.core.inference import RowPoints, candidate, read_row_points
from pipeline.core.readings import (
    NEVER_CATEGORY,
    Reading,
    Tops,
    agreed,
    entry_cards_by_top,
    fantasyland,
    fantasyland_digest,
    plain_text,
    read_fantasyland,
    read_naturals,
    read_royalties,
    read_surrender_points,
    royalty_keys,
    stay_categories,
)
from pipeline.core.rules import RANKS, Profile
from pipeline.core.showdown import Showdown
from pipeline.engine.pool import Pool, force, ranges
from pipeline.helpers.columns import ints

Flags = npt.NDArray[np.bool_]
Ints = npt.NDArray[np.int64]

CATEGORY_NAMES = pa.array([c.name for c in Category])
CATEGORY_COLUMNS = ("top_category", "middle_category", "bottom_category")  # as recorded
MADE_COLUMNS = ("made_top", "made_middle", "made_bottom")  # as the cards make them


@dataclass(frozen=True)
class Rows:
    """Records of the pool in hand order: `hand` (in the pool) of each, and `first`,
    where each hand's begin; the columns, by name."""

    hand: Ints
    first: Ints
    columns: dict[str, Ints]

    @classmethod
    def of(cls, pool: Pool, hand: list[Ints], columns: dict[str, list[Ints]]) -> Rows:
        h = np.concatenate(hand) if hand else np.zeros(0, np.int64)
        order = np.argsort(h, kind="stable")
        joined = {
            name: (np.concatenate(parts) if parts else np.zeros(0, np.int64))[order]
            for name, parts in columns.items()
        }
        h = h[order]
        return cls(h, np.searchsorted(h, np.arange(len(pool) + 1)), joined)

    def of_hands(self, hands: Ints) -> dict[str, Ints]:
        """The columns of the records of `hands` (in their order)."""
        at = ranges(self.first, hands)
        return {name: column[at] for name, column in self.columns.items()}


# The keys a hand shows only through some of its players, with how many it takes, and
# the scoop bonus, which only a scoop shows: a hand that shows none of them settles
# alike under either value (`showing`).
PLAYERS_SHOWING = {"surrender": 1, "surrender_points": 1, "naturals_between": 2, "wheel": 1}
KEYS_SHOWN = frozenset({*PLAYERS_SHOWING, "scoop_bonus"})


@dataclass
class Recorded:
    """The pool's records the readings use, each gathered on first use."""

    pool: Pool
    _made: dict[object, Rows] = field(default_factory=dict)
    _misses: dict[str, npt.NDArray[np.int16]] = field(default_factory=dict)
    _judged_rows: dict[int, Ints] = field(default_factory=dict)  # `_judged`
    _lands: dict[tuple[bytes, str], Reading | None] = field(default_factory=dict)
    _reads: dict[str, Flags] = field(default_factory=dict)  # `reads`
    # `floor_returns`, by the hands asked about
    _returns: dict[bytes, tuple[Ints, Ints, Ints]] = field(default_factory=dict)
    # Each recorded row's royalty entry (`_royalty_rows`): its index in `_key_names`, -1
    # where it names none.
    _key_codes: Ints | None = None
    _key_names: list[str] = field(default_factory=list)
    _ids: pa.Array | None = None  # the players' ids, by code
    _naturals: Ints | None = None  # per hand, the naturals declared (`_declared`)
    _made_rows: tuple[Ints, Ints] | None = None  # `_made_keys`
    _shown: dict[tuple[str, bool], Flags | None] = field(default_factory=dict)  # `showing`
    # Whether `showing` narrows a trial to the hands that may show its entry (else every
    # hand may: the same fits, found at more cost; a test compares the two).
    narrowed: ClassVar[bool] = True

    def floor_returns(self, hands: Ints) -> tuple[Ints, Ints, Ints]:
        """Per player of `hands` (one table's, in order) dealt in again, in points: the
        stack they ended their previous hand at the table with (a quarantined one's too,
        as the table rules read it), and what they were dealt in with, the more of that
        and their starting stack. A floor above the second is contradicted (rules.md
        section 7); one between the two was kept (they added on to reach it). Third, the
        hand they were dealt in again (an index into `hands`). Kept: a segment's floor
        is read in several steps (`infer.py: floors`)."""
        key = hands.tobytes()
        if key not in self._returns:
            self._returns[key] = self._floor_returns(hands)
        return self._returns[key]

    def _floor_returns(self, hands: Ints) -> tuple[Ints, Ints, Ints]:
        rows = self._players()
        f = rows.of_hands(hands)
        at = np.repeat(np.arange(len(hands)), rows.first[hands + 1] - rows.first[hands])
        aside = self.pool.set_aside.get(self.pool.table_id[int(hands[0])], [])
        player, no, start, end = f["player"], f["hand_no"], f["start"], f["end"]
        judged, known = np.ones(len(player), bool), np.ones(len(player), bool)
        if aside:  # the players of its quarantined records, between theirs
            assert self._ids is not None
            code = ints(
                pc.index_in(pa.array([a[1] for a in aside], pa.string()), value_set=self._ids)
            )
            ends = np.array([-1 if a[2] is None else a[2] for a in aside], dtype=np.int64)
            player = np.concatenate([player, code])
            no = np.concatenate([no, np.array([a[0] for a in aside], dtype=np.int64)])
            start = np.concatenate([start, np.zeros(len(aside), np.int64)])
            end = np.concatenate([end, ends])
            judged = np.concatenate([judged, np.zeros(len(aside), bool)])
            known = np.concatenate([known, ends >= 0])
            at = np.concatenate([at, np.full(len(aside), -1)])  # (never dealt in again)
        order = np.lexsort((no, player))  # each player's appearances in hand order
        player, start, end = player[order], start[order], end[order]
        judged, known = judged[order], known[order]
        again = np.r_[False, player[1:] == player[:-1]] & np.r_[False, known[:-1]] & judged
        ended = np.r_[0, end[:-1]][again]
        worth = np.maximum(ended, start[again])
        value = np.maximum(
            np.concatenate([f["point_value"], np.ones(len(aside), np.int64)])[order][again], 1
        )
        return ended // value, worth // value, at[order][again]

    def row_points(self, hands: Ints, game: int, boards: int) -> RowPoints:
        """Row points and Home Run bonus read from the recorded points of `hands`' pairs
        decided by their rows."""
        p = self._decided(game, boards).of_hands(hands)
        return read_row_points(p["won"], p["lost"], boards, p["points"])

    def royalties(self, hands: Ints, base: Profile) -> Reading | None:
        """The royalty tables `hands`' recorded rows give, onto `base`'s."""
        rows = self._royalty_rows()
        at = ranges(rows.first, hands)
        assert self._key_codes is not None
        keep = rows.columns["counted"][at].astype(bool)
        codes = self._key_codes[at[keep]]
        return read_royalties(codes, self._key_names, rows.columns["royalty"][at][keep], base)

    def reads(self, table: str) -> Flags:
        """Per hand of the pool, whether its records give a reading of `table`
        (`royalties`, `naturals`, `fantasyland`): the reading of a run of hands none of
        which does is None, onto any base."""
        if table not in self._reads:
            if table == "royalties":
                rows, given = self._royalty_rows(), "counted"
            elif table == "naturals":
                rows, given = self._pairs(), "alone"
            else:
                rows, given = self._tops(), "judged"
            if given == "alone":
                mine, theirs = rows.columns["natural"], rows.columns["opponent_natural"]
                flags = ((mine > 0) != (theirs > 0)).astype(np.int64)
            else:
                flags = rows.columns[given].astype(bool).astype(np.int64)
            counts = np.r_[0, np.cumsum(flags)]
            self._reads[table] = counts[rows.first[1:]] > counts[rows.first[:-1]]
        return self._reads[table]

    def naturals(self, hands: Ints, base: Profile) -> Reading | None:
        """The naturals table of `hands`' pairs in which one side declared a natural."""
        p = self._pairs().of_hands(hands)
        declared = np.concatenate([p["natural"], p["opponent_natural"]])
        against = np.concatenate([p["opponent_natural"], p["natural"]])
        points = np.concatenate([p["points"], -p["points"]])  # the declaring side's
        return read_naturals(declared, against, points, base)

    def surrender_points(self, hands: Ints) -> int | None:
        """What a surrendered player paid a playing one, in `hands` that do not give
        their own surrender points."""
        p = self._pairs().of_hands(hands)
        by_table = p["own_surrender"] == 0
        alone = by_table & (p["declared"] == SURRENDER) & (p["opponent_declared"] == PLAY)
        other = by_table & (p["opponent_declared"] == SURRENDER) & (p["declared"] == PLAY)
        return read_surrender_points(np.concatenate([p["points"][alone], -p["points"][other]]))

    def fantasyland(self, hands: Ints, base: Profile) -> Reading | None:
        """The Fantasyland `hands`' open-face players earned and were dealt (read once
        per hands and base: a segment's is asked each time what it leaves undetermined is
        found)."""
        key = (hands.tobytes(), fantasyland_digest(base))
        if key not in self._lands:
            self._lands[key] = self._fantasyland(hands, base)
        return self._lands[key]

    def _fantasyland(self, hands: Ints, base: Profile) -> Reading | None:
        f = self._tops().of_hands(hands)
        keep = f["judged"].astype(bool)
        tops = Tops(
            in_fantasyland=f["in_fantasyland"][keep].astype(bool),
            category=np.column_stack([f[column][keep] for column in CATEGORY_COLUMNS]),
            top_rank=f["top_rank"][keep],
            earned=f["earned"][keep].astype(bool),
            next_cards=np.where(f["next_read"] == 1, f["next_cards"], -1)[keep],
        )
        return read_fantasyland(tops, base)

    def fantasyland_misses(self, profile: Profile) -> npt.NDArray[np.int16]:
        """Per hand of the pool: its players whose Fantasyland is not what `profile` says
        their previous hand at the table earned, in it or not, and the cards it deals
        (the rule across hands, which verify's table rules run and the candidates' audits
        do not): a rule that lets a player go where a fault records that they left fits
        that hand, and misses the next, which deals them Fantasyland all the same. What a
        player earned is judged as a verify judges it, on the rows the cards make."""
        if profile.digest in self._misses:  # (by profile: a Fantasyland digest costs more)
            return self._misses[profile.digest]
        key = fantasyland_digest(profile)
        if key not in self._misses:
            f = self._tops().columns
            judged = self._judged(profile.game)
            land = fantasyland(profile)
            top = f["made_top"][judged]
            trips = top == Category.three_of_a_kind
            rank = np.where(trips, 13, np.clip(f["made_top_rank"][judged], 0, 12))
            entry = np.where(trips | (top == Category.pair), entry_cards_by_top(profile)[rank], -1)
            rows = np.column_stack([f[column][judged] for column in MADE_COLUMNS])
            stays = ((rows >= stay_categories(land["stay"])) & (rows < NEVER_CATEGORY)).any(1)
            in_land = f["in_fantasyland"][judged].astype(bool)
            want = np.where(in_land, np.where(stays, land["stay_cards"], -1), entry)  # -1: none
            want = np.where(f["made_foul"][judged].astype(bool), -1, want)  # (a foul earns none)
            dealt = f["next_cards"][judged]  # (0: not in Fantasyland)
            missed = judged[np.where(want >= 0, want != dealt, dealt > 0)]
            misses = np.bincount(f["next_hand"][missed], minlength=len(self.pool))
            self._misses[key] = misses.astype(np.int16)  # (a few players a hand)
        self._misses[profile.digest] = self._misses[key]
        return self._misses[key]

    def _judged(self, game: int) -> Ints:
        """The open-face players of `game` (rows of `_tops`) whose next Fantasyland is
        judged (recorded, not fouled, at a table that plays it) and whose next hand at
        the table is held: where a profile may miss the next hand."""
        if game not in self._judged_rows:
            f = self._tops().columns
            judged = (f["game"] == game) & f["judged"].astype(bool)
            self._judged_rows[game] = np.flatnonzero(judged & (f["next_cards"] >= 0))
        return self._judged_rows[game]

    def scoop_bonus(self, hands: Ints, game: int) -> int | None:
        """The open-face scoop bonus that `hands`' recorded scoops give: a scooping
        side's recorded points less its three rows and the royalties both sides recorded;
        read when more than half of the scoops agree (a capped one, or a fault, is
        outvoted)."""
        bonus = self._scoops(game).of_hands(hands)["bonus"]
        if not len(bonus):
            return None
        value, n = Counter(bonus.tolist()).most_common(1)[0]
        return int(value) if agreed(n, len(bonus)) and value >= 0 else None

    def showing(self, entry: str, surely: bool = False) -> Flags | None:
        """Per hand of the pool, whether the entry of a table (`royalties.middle.flush`,
        `naturals.dragon`) may settle some part of it: a row recorded with the royalty's
        category (a straight flush's entry pays a royal flush the row's table leaves
        out), or a player who declared the natural; a hand with no row recorded may show
        any royalty; a key some players show (`_key_showing`); an entry of Fantasyland
        (`_land_showing`). None: any hand may (another key). Under another value of the
        entry, a hand that shows none of it settles alike.
        `surely`: only the hands whose records show it (a row recorded with its category
        and a royalty, of a player who did not foul)."""
        if not (surely or self.narrowed):
            return None
        if (entry, surely) not in self._shown:
            self._shown[entry, surely] = self._showing(entry, surely)
        return self._shown[entry, surely]

    def _showing(self, entry: str, surely: bool) -> Flags | None:
        key, _, path = entry.partition(".")
        if key in KEYS_SHOWN and not surely:
            return self._key_showing(key)
        if key == "fantasyland" and not surely:
            return self._land_showing(path)
        if key == "naturals":
            code = 1 + NATURALS.index(path)
            declared = self._declared()
            return (declared & (1 << code)) != 0
        if key != "royalties":
            return None
        part, _, name = path.partition(".")
        names = [f"{part}:{name}"] + ([f"{part}:royal_flush"] if name == "straight_flush" else [])
        known = _royalty_codes()[1]
        if not name:  # a whole row's table (a profile that leaves the row out): any entry
            names = [n for n in known if n.startswith(f"{part}:")]
        flags = np.zeros(len(self.pool), dtype=bool)
        if not surely:  # the rows the cards make, whatever their records say
            hand, made = self._made_keys()
            flags[hand[np.isin(made, [known.index(n) for n in names if n in known])]] = True
            return flags
        rows = self._royalty_rows()
        assert self._key_codes is not None
        wanted = [k for k, name in enumerate(self._key_names) if name in names]
        shown = np.isin(self._key_codes, wanted)
        flags[rows.hand[shown & rows.columns["counted"].astype(bool)]] = True
        return flags

    def _key_showing(self, key: str) -> Flags:
        """Per hand of the pool, whether a key may settle it (`KEYS_SHOWN`): a player
        who surrendered (`surrender`, `surrender_points`), two who declared a natural
        (`naturals_between`), a row the cards make a 5432A straight or straight flush
        (`wheel`), a scoop (`scoop_bonus`, `_scooped`)."""
        if key == "scoop_bonus":
            return self._scooped()
        counts = np.zeros(len(self.pool), dtype=np.int64)
        wheels = parse_value(["straight:5432A", "straight_flush:5432A"])
        for (batch, _, offset), shown in zip(self.pool.batches, self.pool.shown, strict=True):
            players = batch.players
            if key == "wheel":
                mine = np.isin(shown.value.reshape(len(players), -1), wheels).any(axis=1)
            else:
                mine = players.declared == (NATURAL if key == "naturals_between" else SURRENDER)
            np.add.at(counts, players.hand[mine] + offset, 1)
        return counts >= PLAYERS_SHOWING[key]

    def _land_showing(self, path: str) -> Flags:
        """Per hand of the pool, whether an entry of Fantasyland's table (`entry`,
        `entry_cards.KK`, `stay.middle`, `stay_cards`) may settle it: a player in
        Fantasyland (their stay, and the cards their street deals, which the entries
        bound); the hand after one whose record earned it, or who was in it, or for the
        entry's keys whose top the cards make a pair or trips (whether they are in it there,
        and the cards it deals: `fantasyland_misses`); and for `entry` a player whose top
        the cards make a pair or trips (whether it earns an entry)."""
        f = self._tops()
        in_land = f.columns["in_fantasyland"].astype(bool)
        flags = np.zeros(len(self.pool), dtype=bool)
        flags[f.hand[in_land]] = True
        before = in_land | f.columns["earned"].astype(bool)
        if not path or path.startswith("entry"):
            made = f.columns["made_top"]  # (as `fantasyland_misses` judges the entry)
            before |= (made == Category.pair) | (made == Category.three_of_a_kind)
        after = f.columns["next_hand"][before]
        flags[after[after >= 0]] = True
        if path in ("", "entry"):
            for (batch, _, offset), shown in zip(self.pool.batches, self.pool.shown, strict=True):
                players = batch.players
                if not batch.hands.open_face().any():
                    continue
                top = category_of(shown.value.reshape(len(players), 3)[:, 0])
                made = (top == Category.pair) | (top == Category.three_of_a_kind)
                flags[players.hand[made & batch.hands.open_face()[players.hand]] + offset] = True
        return flags

    def _scooped(self) -> Flags:
        """Per hand of the pool, whether a player of an open-face hand won all three rows
        from another (audited under the contract: who wins a row does not depend on the
        points, nor a foul on them)."""
        flags = np.zeros(len(self.pool), dtype=bool)
        for (batch, own, offset), shown in zip(self.pool.batches, self.pool.shown, strict=True):
            if not batch.hands.open_face().any():
                continue
            probe = candidate(int(batch.hands.game[0]), {})  # a batch is of one game
            pairs = score(force(batch, own, probe), shown).pairs
            assert pairs.decision is not None  # every scorer says how it decided
            won, lost = pairs.decision.rows_won, pairs.decision.rows_lost
            swept = (np.bitwise_count(won) == 3) | (np.bitwise_count(lost) == 3)
            swept &= batch.hands.open_face()[pairs.hand]
            flags[pairs.hand[swept] + offset] = True
        return flags

    def cap(self, hands: Ints) -> int | None:
        """The most points recorded between two players of `hands`, when more than one
        pair reached it (a cap leaves its mark); None otherwise."""
        points = np.abs(self._pairs().of_hands(hands)["points"])
        if not len(points):
            return None
        most = int(points.max())
        return most if most > 0 and int((points == most).sum()) > 1 else None

    # --- gathered once ------------------------------------------------------------------

    def _players(self) -> Rows:
        if "players" not in self._made:
            hand, player, start, end, value, no = [], [], [], [], [], []
            ids: list[pa.Array] = []
            for batch, _, offset in self.pool.batches:
                players = batch.players
                hand.append(players.hand + offset)
                ids.append(players.player_id)
                start.append(players.stack_start)
                end.append(players.stack_end)
                value.append(batch.hands.point_value[players.hand])
                no.append(batch.hands.hand_no[players.hand])
            every = pa.chunked_array(ids, pa.string())
            self._ids = pc.unique(every)
            code = ints(pc.index_in(every, value_set=self._ids))
            player = [code]
            columns = {"player": player, "start": start, "end": end, "point_value": value}
            columns["hand_no"] = no
            self._made["players"] = Rows.of(self.pool, hand, columns)
        return self._made["players"]

    def _decided(self, game: int, boards: int) -> Rows:
        """The pairs of every hand of `game` dealt `boards` boards decided by their rows
        (a Home Run included),
        audited once under the contract's values (which rows each player won does not
        depend on the points): the rows' bits and the recorded points."""
        key = ("decided", game, boards)
        if key in self._made:
            return self._made[key]
        probe = candidate(game, {"boards": boards})
        hand, won, lost, points = [], [], [], []
        for (batch, own, offset), shown in zip(self.pool.batches, self.pool.shown, strict=True):
            mine = (batch.hands.game == game) & (own.boards == boards)
            if not mine.any():
                continue
            pairs = score(force(batch, own, probe), shown).pairs
            decided = pairs.decision
            assert decided is not None  # every scorer says how it decided
            by_rows = np.isin(decided.decided, (ROWS, HOME_RUN))
            at, found = _recorded_pair(batch.settlements, batch.players.seat, pairs)
            keep = by_rows & found & mine[pairs.hand]
            hand.append(pairs.hand[keep] + offset)
            won.append(decided.rows_won[keep].astype(np.int64))
            lost.append(decided.rows_lost[keep].astype(np.int64))
            points.append(batch.settlements.points[at[keep]])
        columns = {"won": won, "lost": lost, "points": points}
        self._made[key] = Rows.of(self.pool, hand, columns)
        return self._made[key]

    def _scoops(self, game: int) -> Rows:
        """The recorded pairs of `game`'s hands in which one side won all three rows
        (audited once under the contract: who won a row does not depend on the points),
        with the bonus each says was paid."""
        key = ("scoops", game)
        if key in self._made:
            return self._made[key]
        probe = candidate(game, {})
        hand, bonus = [], []
        for (batch, own, offset), shown in zip(self.pool.batches, self.pool.shown, strict=True):
            mine = batch.hands.game == game
            if not mine.any():
                continue
            pairs = score(force(batch, own, probe), shown).pairs
            assert pairs.decision is not None  # every scorer says how it decided
            won = np.bitwise_count(pairs.decision.rows_won) == 3
            lost = np.bitwise_count(pairs.decision.rows_lost) == 3
            at, found = _recorded_pair(batch.settlements, batch.players.seat, pairs)
            rows, players = batch.rows, batch.players
            royalty = np.bincount(
                rows.player, np.where(rows.has_royalty, rows.royalty, 0), len(players)
            ).astype(np.int64)
            side = np.where(won, 1, -1)
            points = batch.settlements.points[at]
            paid = side * (points - royalty[pairs.a] + royalty[pairs.b]) - 3
            keep = (won | lost) & found & mine[pairs.hand]
            hand.append(pairs.hand[keep] + offset)
            bonus.append(paid[keep])
        self._made[key] = Rows.of(self.pool, hand, {"bonus": bonus})
        return self._made[key]

    def _royalty_rows(self) -> Rows:
        """Every recorded row with a royalty, of a player not recorded as fouled."""
        if "royalties" not in self._made:
            hand, royalty, counted = [], [], []
            keys: list[pa.Array] = []
            for batch, _, offset in self.pool.batches:
                rows, players = batch.rows, batch.players
                fouled = players.has_fouled & players.fouled
                open_face = batch.hands.open_face()[players.hand[rows.player]]
                hand.append(players.hand[rows.player] + offset)
                royalty.append(rows.royalty)
                counted.append((rows.has_royalty & ~fouled[rows.player]).astype(np.int64))
                keys.append(royalty_keys(rows.value, rows.row, open_face))
            made = Rows.of(self.pool, hand, {"royalty": royalty, "counted": counted})
            every = pa.chunked_array(keys, pa.string()).combine_chunks()
            h = np.concatenate(hand) if hand else np.zeros(0, np.int64)
            encoded = every.take(pa.array(np.argsort(h, kind="stable"))).dictionary_encode()
            self._key_codes = ints(encoded.indices, -1)
            self._key_names = encoded.dictionary.to_pylist()
            self._made["royalties"] = made
        return self._made["royalties"]

    def _made_keys(self) -> tuple[Ints, Ints]:
        """Every row the cards make in the games without boards, as its hand and the
        index of its royalty entry (`_royalty_codes`; -1: none); a middle also as Low in
        the Middle values it."""
        if self._made_rows is None:
            hand, key = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
            for (batch, _, offset), shown in zip(self.pool.batches, self.pool.shown, strict=True):
                if batch.game.boards:
                    continue
                players = batch.players
                value = shown.value.reshape(len(players), 3)
                open_face = batch.hands.open_face()[players.hand].astype(np.int64)
                low = as_low_middle(value, np.ones(len(players), bool))  # as Low in the Middle
                for made in (value, low):  # values it, too
                    at = (np.arange(3)[None, :], open_face[:, None], made.astype(np.int64))
                    hand.append(np.repeat(players.hand + offset, 3))
                    key.append(_royalty_codes()[0][at].ravel())
            self._made_rows = (np.concatenate(hand), np.concatenate(key))
        return self._made_rows

    def _declared(self) -> Ints:
        """Per hand of the pool, the naturals its players declared, as bits (1 << code,
        the code 1 + the natural's index in NATURALS)."""
        if self._naturals is None:
            bits = np.zeros(len(self.pool), dtype=np.int64)
            for batch, _, offset in self.pool.batches:
                players = batch.players
                mine = players.declared == NATURAL
                hand = players.hand[mine] + offset
                np.bitwise_or.at(bits, hand, np.int64(1) << players.natural[mine])
            self._naturals = bits
        return self._naturals

    def _pairs(self) -> Rows:
        """Every recorded pair: its points, and the natural each side declared (1 + its
        index in NATURALS; 0: none)."""
        if "pairs" not in self._made:
            hand, points, natural, opponent = [], [], [], []
            declared, opponent_declared, own_surrender = [], [], []
            for batch, own, offset in self.pool.batches:
                rec, players = batch.settlements, batch.players
                code = np.where(players.declared == NATURAL, players.natural, 0)
                key = players.hand * 8 + players.seat
                seat = _find(key, rec.hand * 8 + rec.seat)
                opp = _find(key, rec.hand * 8 + rec.opponent)
                hand.append(rec.hand + offset)
                points.append(rec.points)
                natural.append(np.where(seat >= 0, code[seat], 0))
                opponent.append(np.where(opp >= 0, code[opp], 0))
                declared.append(np.where(seat >= 0, players.declared[seat], -1))
                opponent_declared.append(np.where(opp >= 0, players.declared[opp], -1))
                own_surrender.append(own.has_surrender[rec.hand].astype(np.int64))
            columns = {
                "points": points,
                "natural": natural,
                "opponent_natural": opponent,
                "declared": declared,
                "opponent_declared": opponent_declared,
                "own_surrender": own_surrender,
            }
            self._made["pairs"] = Rows.of(self.pool, hand, columns)
        return self._made["pairs"]

    def _tops(self) -> Rows:
        """Every open-face player whose next Fantasyland is recorded, with their rows'
        categories as recorded and as the cards make them (and whether those foul), and
        the cards their next hand at the table dealt."""
        if "tops" in self._made:
            return self._made["tops"]
        keys = ("in_fantasyland", "top_rank", "earned", "judged", "player", "dealt", "game")
        made = ("made_top_rank", "made_foul", *MADE_COLUMNS)  # as the cards make them
        names: dict[str, list[Ints]] = {k: [] for k in (*keys, *CATEGORY_COLUMNS, *made)}
        hand: list[Ints] = []
        ids: list[pa.Array] = []
        pool = self.pool
        for (batch, _, offset), fixed, shown in zip(
            pool.batches, pool.unruled, pool.shown, strict=True
        ):
            players, rows = batch.players, batch.rows
            n = len(players)
            category = np.full((n, 3), NEVER_CATEGORY, np.int64)
            rank = np.full(n, -1, np.int64)
            parts = pc.split_pattern(plain_text(rows.value), ":", max_splits=1)
            named = pc.index_in(pc.list_element(parts, 0), value_set=CATEGORY_NAMES)
            category[rows.player, rows.row] = ints(named, NEVER_CATEGORY)
            first = pc.utf8_slice_codeunits(pc.list_element(parts, 1), 0, 1)
            ranked = ints(pc.index_in(first, value_set=pa.array(list(RANKS))), -1)
            top = rows.row == 0
            rank[rows.player[top]] = ranked[top]
            open_face = batch.hands.open_face()[players.hand]
            fouled = players.has_fouled & players.fouled
            hand.append(players.hand + offset)
            ids.append(players.player_id)
            names["in_fantasyland"].append(players.fantasyland.astype(np.int64))
            names["earned"].append(players.fantasyland_next.astype(np.int64))
            plays = batch.hands.fantasyland_rule[players.hand]  # the table plays Fantasyland
            judged = open_face & plays & players.has_fantasyland_next & ~fouled
            names["judged"].append(judged.astype(np.int64))
            names["top_rank"].append(rank)
            names["dealt"].append(fixed.cards)  # (the held batches have no streets)
            names["game"].append(batch.hands.game[players.hand])
            for r, column in enumerate(CATEGORY_COLUMNS):
                names[column].append(category[:, r])
            categories, top_rank, foul = _made_rows(batch, shown)
            names["made_foul"].append(foul)
            names["made_top_rank"].append(top_rank)
            for r, column in enumerate(MADE_COLUMNS):
                names[column].append(categories[:, r])
        every = pa.chunked_array(ids, pa.string())
        names["player"] = [ints(pc.index_in(every, value_set=pc.unique(every)))] if ids else []
        tops = Rows.of(pool, hand, names)
        tops.columns["next_hand"], tops.columns["next_cards"] = _next_hands(pool, tops)
        tops.columns["next_read"] = _next_read(pool, tops, every).astype(np.int64)
        self._made["tops"] = tops
        return tops


def _made_rows(batch: HandBatch, shown: Showdown) -> tuple[Ints, Ints, Ints]:
    """Per player of `batch`: their rows' categories (NEVER_CATEGORY: none), their top's
    first rank (-1: none) and whether they foul (1), as the cards make them; none in a
    game of boards. (No open-face profile changes a foul: none plays a low middle or the
    wheel second.)"""
    n = len(batch.players)
    if batch.game.layout is not Layout.chinese:
        none = np.full((n, 3), NEVER_CATEGORY, np.int64)
        return none, np.full(n, -1, np.int64), np.zeros(n, np.int64)
    values = shown.value[:, 0, :]
    categories = np.where(values < 0, NEVER_CATEGORY, category_of(values)).astype(np.int64)
    top_rank = first_rank_of(values[:, 0]).astype(np.int64)
    return categories, top_rank, fouls(values).astype(np.int64)


@cache
def _royalty_codes() -> tuple[Ints, tuple[str, ...]]:
    """Each value's royalty entry (`royalty_keys`), by row and whether the game is open
    face, as an index into the entries (second); shape (3, 2, values + 1), the last for
    no value (-1), and -1 where it names none."""
    text = pa.array(value_text(np.arange(-1, low_only_values()[1] + 1)), pa.string())
    text = pa.concat_arrays([text[1:], text[:1]])  # value -1 (none) last: indexed by -1
    keys = [
        royalty_keys(text, np.full(len(text), row), np.full(len(text), open_face))
        for row in range(3)
        for open_face in (False, True)
    ]
    names = pc.unique(pa.chunked_array(keys).drop_null())
    codes = [ints(pc.index_in(k, value_set=names), -1) for k in keys]
    return np.stack(codes).reshape(3, 2, len(text)), tuple(names.to_pylist())


def _next_hands(pool: Pool, rows: Rows) -> tuple[Ints, Ints]:
    """Per player row: the player's next hand at the table (in the pool) and the cards
    Fantasyland dealt in it (-1 and -1: none; 0: the player was not in Fantasyland
    there, which no rule deals: a pineapple player outside it is dealt 17 cards over the
    streets, as many as some Fantasylands deal at once)."""
    table = np.unique(np.array(pool.table_id, dtype=object), return_inverse=True)[1]
    hand_no = np.array(pool.hand_no)[rows.hand]
    key = table[rows.hand].astype(np.int64) * (1 << 32) + rows.columns["player"]
    order = np.lexsort((hand_no, key))
    cards = np.full(len(key), -1, np.int64)
    hand = np.full(len(key), -1, np.int64)
    same = key[order][1:] == key[order][:-1]
    landed = rows.columns["in_fantasyland"].astype(bool)
    dealt = np.where(landed, rows.columns["dealt"], 0)
    cards[order[:-1][same]] = dealt[order[1:][same]]
    hand[order[:-1][same]] = rows.hand[order[1:][same]]
    return hand, cards


def _next_read(pool: Pool, rows: Rows, ids: pa.ChunkedArray) -> Flags:
    """Per player row with a next hand: whether that hand is the player's next
    appearance at the table, with none in a quarantined record between (where they may
    have played the Fantasyland earned, and stayed: the next hand then deals the stay's
    cards, which say nothing of the entry's)."""
    read = rows.columns["next_hand"] >= 0
    aside = [(t, *a[:2]) for t, appearances in pool.set_aside.items() for a in appearances]
    if not aside or not read.any():
        return read
    tables = np.array(pool.table_id, dtype=object)
    at_table = np.array([a[0] for a in aside], dtype=object)
    names = np.unique(np.concatenate([tables, at_table]))
    named = pa.array([a[2] for a in aside], pa.string())
    player = ints(pc.index_in(named, value_set=pc.unique(ids)), -1)
    seen = player >= 0  # a player of a quarantined record who plays no hand kept: none
    ours = np.searchsorted(names, tables[rows.hand]) * (1 << 32) + rows.columns["player"]
    theirs = np.searchsorted(names, at_table[seen]) * (1 << 32) + player[seen]
    who = np.unique(np.concatenate([ours, theirs]), return_inverse=True)[1]
    numbers = np.array(pool.hand_no, dtype=np.int64)
    span = int(max(numbers.max(), max(a[1] for a in aside))) + 2
    mine, other = who[: len(ours)] * span, who[len(ours) :] * span
    quarantined = np.sort(other + np.array([a[1] for a in aside], dtype=np.int64)[seen])
    now = mine + numbers[rows.hand]
    after = mine + numbers[np.maximum(rows.columns["next_hand"], 0)]
    # set-aside appearances of the player at the table after this hand, before the next
    between = np.searchsorted(quarantined, after) - np.searchsorted(quarantined, now, "right")
    return read & (between == 0)


def _recorded_pair(rec: Settlements, seat: Ints, pairs: Pairs) -> tuple[Ints, Flags]:
    """Where each scored pair is among the recorded ones, and whether it is there."""
    ours = pairs.hand * 64 + seat[pairs.a] * 8 + seat[pairs.b]
    at = _find(rec.hand * 64 + rec.seat * 8 + rec.opponent, ours)
    return np.maximum(at, 0), at >= 0


def _find(keys: Ints, wanted: Ints) -> Ints:
    """Where each wanted key is among `keys` (-1: not there; a pair recorded for a
    seat that was not dealt in)."""
    if not len(keys):
        return np.full(len(wanted), -1, np.int64)
    order = np.argsort(keys)
    at = order[np.minimum(np.searchsorted(keys, wanted, sorter=order), len(keys) - 1)]
    return np.where(keys[at] == wanted, at, -1)
