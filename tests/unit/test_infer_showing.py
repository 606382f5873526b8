"""`rules infer` scores a trial entry (`naturals.dragon`) only on the hands that may show
it (`Recorded.showing`), in its search and for what is undetermined: what it finds is
what scoring every hand finds, on the public house-rules sets, clean and faulty, read
together."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from pipeline.core.inference import (
    CATALOGUE,
    TABLES,
    Search,
    candidate,
    changes,
    one_changed,
    with_value,
)
from pipeline.core.rules import Profile
from pipeline.engine.infer import Segment, _Searcher, infer_tables, table_hands
from pipeline.engine.pool import read_pool
from pipeline.engine.recorded import Recorded
from pipeline.ingest.house_rules import read_rules
from tests.cli.test_evaluate_command import handaudit
from tests.cli.test_rules_infer import _dealt
from tests.conftest import EXAMPLES

SETS = sorted((EXAMPLES / "house-rules").glob("*/hands.jsonl"))
HOUSE_RULES = EXAMPLES / "house-rules" / "house.toml"


def untold(found: object) -> list[tuple[str, str, tuple[str, ...], tuple[str, ...]]]:
    segments = found.segments  # type: ignore[attr-defined]
    return [(s.table_id, s.profile.digest, s.fit.undetermined, s.fit.entries) for s in segments]


def test_entries_scored_where_they_show_are_undetermined_as_when_scored_everywhere(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert len(SETS) == 12
    shown = untold(infer_tables(read_pool(SETS)))
    assert any(entries for *_, entries in shown)  # entries were named
    monkeypatch.setattr(Recorded, "narrowed", False)
    assert untold(infer_tables(read_pool(SETS))) == shown


def test_a_trial_scored_where_its_entry_shows_fits_as_scored_everywhere() -> None:
    # The search scores a profile that differs from a scored one in one entry only on
    # the hands that may show it: as many hands are exact as when it scores them all.
    pool = read_pool(SETS)
    searcher = _Searcher(pool, Recorded(pool), None)
    narrowed = 0
    for _, hands in table_hands(pool):
        base, *others = searcher.seeds(hands)
        left_out = set(CATALOGUE[base.variant.name])
        for other in others:
            for what, trial in one_changed(base, other, left_out):
                beside = searcher.fit_beside(hands)(trial, base)
                narrowed += searcher.recorded.showing(what) is not None
                assert beside[0] == searcher.fit(hands)(trial)[0], what
    assert narrowed > 50


def test_an_entry_no_record_of_a_table_shows_is_undetermined_there() -> None:
    # asia pays a middle royal flush 20 and the contract pays it as a straight flush: a
    # table where no middle royal flush was recorded cannot tell, and every entry of a
    # natural no player of the table declared is as untold.
    history = EXAMPLES / "house-rules" / "asia" / "hands.jsonl"
    shown: dict[str, set[str]] = {}
    for line in history.read_text().splitlines():
        hand = json.loads(line)
        for player in hand["players"]:
            mine = shown.setdefault(hand["table_id"], set())
            mine |= {f"naturals.{player['natural']}"} if player.get("natural") else set()
            for row in player.get("rows") or []:
                if row["value"].startswith("straight_flush:AKQJT") and row["royalty"]:
                    mine.add(f"royalties.{row['row']}.royal_flush")
    found = infer_tables(read_pool([history]))
    for s in found.segments:
        for entry in ("royalties.middle.royal_flush", "naturals.dragon", "naturals.twelve_royals"):
            told = entry in shown[s.table_id]
            assert (entry in s.fit.entries) != told, (s.table_id, entry, s.fit.entries)


def test_a_stay_no_player_made_is_undetermined(tmp_path: Path) -> None:
    # Fantasyland kept only by a bottom straight flush: where no player in Fantasyland
    # stayed, nothing tells that rule from the contract's, which is written.
    _, history = _dealt(
        tmp_path,
        'game = "pineapple_ofc"\n[profiles.deal.fantasyland]\nentry = "AA"\n'
        'entry_cards = { AA = 13, trips = 17 }\nstay = ["bottom:straight_flush"]\n'
        "stay_cards = 17\n",
        *("--tables", "3", "--hands", "60", "--seed", "5"),
    )
    stayed: dict[str, bool] = {}
    for line in history.read_text().splitlines():
        hand = json.loads(line)
        kept = any(p.get("fantasyland") and p.get("fantasyland_next") for p in hand["players"])
        stayed[hand["table_id"]] = stayed.get(hand["table_id"], False) or kept
    found = infer_tables(read_pool([history]))
    assert not all(stayed.values())
    rows = {f"fantasyland.stay.{row}" for row in ("top", "middle", "bottom")}
    for s in found.segments:
        if not stayed[s.table_id]:  # (where a player stayed, each row is told on its own)
            assert rows <= set(s.fit.entries), (s.table_id, s.fit.entries)


def test_a_key_or_a_whole_table_scored_where_it_shows_fits_as_scored_everywhere(
    tmp_path: Path,
) -> None:
    # Beside a scored profile, a catalogue key that only some players show (a surrender,
    # two naturals, a 5432A) and a whole table read elsewhere are scored only on the
    # hands that may show them: the fits (exact hands and divergences) are those of
    # scoring every hand. A faulty table gives surrenders where none is allowed and
    # naturals declared that the cards do not make.
    rules, history = tmp_path / "deal.toml", tmp_path / "deal.jsonl"
    rules.write_text(
        '[profiles.deal]\ngame = "chinese"\nsurrender = false\nnaturals_between = "sum"\n'
        'wheel = "second"\nhome_run = true\n[[tables]]\nmatch = "*"\nprofile = "deal"\n'
    )  # the hands' own `rules` field is not believed by the search: left in
    made = handaudit("generate", "--rules", str(rules), "--profile", "deal",
                     "--out", str(history), "--tables", "2", "--hands", "300",
                     "--seed", "8", "--faults", "0.1")  # fmt: skip
    assert made.returncode == 0, made.stderr
    land = tmp_path / "land.jsonl"  # Fantasyland's entries, with faults
    made = handaudit("generate", "--rules", str(HOUSE_RULES), "--profile", "pineapple_prog",
                     "--out", str(land), "--tables", "2", "--hands", "300",
                     "--seed", "8", "--faults", "0.1")  # fmt: skip
    assert made.returncode == 0, made.stderr
    pool = read_pool([*SETS, history, land])
    searcher = _Searcher(pool, Recorded(pool), None)
    narrowed: Counter[str] = Counter()
    house = read_rules(HOUSE_RULES).house  # low_middle leaves the middle's royalties out
    for _, hands in table_hands(pool):
        base, *others = searcher.seeds(hands)
        others += [candidate(p.game, p.values) for p in house if p.game == base.game]
        trials = changed_keys(base)
        trials += [(key, with_value(base, key, other.values.get(key)))
                   for other in others for key in TABLES if key in other.values]  # fmt: skip
        trials += [one for other in others for one in one_changed(base, other, set(CATALOGUE))]
        for what, trial in trials:
            shown = [searcher.recorded.showing(w) for w in changes(base, trial)]
            narrowed[what] += bool(shown) and all(flags is not None for flags in shown)
            assert searcher.fit_beside(hands)(trial, base) == searcher.fit(hands)(trial), what
    keys = {"surrender", "naturals_between", "wheel", "scoop_bonus", "royalties", "naturals"}
    keys |= {"fantasyland", "fantasyland.entry", "fantasyland.stay", "fantasyland.stay_cards"}
    keys |= {"royalties.middle"}  # a whole row
    assert keys <= set(+narrowed)


def changed_keys(base: Profile) -> list[tuple[str, Profile]]:
    """`base` with one catalogue key set to each of its values."""
    catalogue = CATALOGUE[base.variant.name]
    return [(key, with_value(base, key, value)) for key, values in catalogue.items()
            for value in values]  # fmt: skip


def test_fantasyland_shows_where_a_player_sits_in_it_or_is_dealt_after_earning_it(
    tmp_path: Path,
) -> None:
    # A Fantasyland entry is scored on the hands with a player in it (their stay, their
    # street's cards) and the hand after one whose record earned it (the cards dealt
    # there). The two are mostly the same hands; here they part: the hand where the first
    # player in Fantasyland earned it is missing from the export, and a player who earned
    # it is recorded out of it in the next hand (a fault).
    made = tmp_path / "land.jsonl"
    dealt = handaudit("generate", "--rules", str(HOUSE_RULES), "--profile", "pineapple_prog",
                      "--out", str(made), "--tables", "1", "--hands", "300",
                      "--seed", "12")  # fmt: skip
    assert dealt.returncode == 0, dealt.stderr
    hands = [json.loads(line) for line in made.read_text().splitlines()]
    first = next(i for i, h in enumerate(hands) if any(p.get("fantasyland") for p in h["players"]))
    lands = {p["player_id"] for p in hands[first]["players"] if p.get("fantasyland")}
    hands.pop(max(i for i in range(first) if lands & {p["player_id"] for p in hands[i]["players"]}))
    later = next(  # the next hand of a player entering Fantasyland (by a pair of kings,
        i + 1  # which an entry of aces would not earn), where no top is a pair or trips
        for i, h in enumerate(hands[:-1])  # (which would show an entry as it is)
        for p in h["players"]
        if p.get("fantasyland_next") and not p.get("fantasyland")
        and p["rows"][0]["value"].startswith("pair:KK")
        and p["player_id"] in {q["player_id"] for q in hands[i + 1]["players"]}
        and not any(q["rows"][0]["value"].startswith(("pair", "three"))
                    for q in hands[i + 1]["players"])
    )  # fmt: skip
    for player in hands[later]["players"]:
        player["fantasyland"] = False  # dealt the cards earned, recorded out of it
    history = tmp_path / "cut.jsonl"
    history.write_text("".join(json.dumps(h) + "\n" for h in hands))
    pool = read_pool([history])
    searcher = _Searcher(pool, Recorded(pool), None)
    ((_, table),) = table_hands(pool)
    true = next(p for p in read_rules(HOUSE_RULES).house if p.name == "pineapple_prog")
    base = candidate(true.game, true.values)
    others = [candidate(true.game, {}), *(candidate(true.game, {"fantasyland": land}) for land in (
        {"entry": "QQ"}, {"entry": "AA"}, {"entry_cards": {"KK": 15, "AA": 15, "trips": 17}},
        {"stay": ["bottom:four_of_a_kind"]}, {"stay_cards": 15}))]  # fmt: skip
    tried = 0
    for other in others:
        for what, trial in one_changed(base, other, set(CATALOGUE)):
            if what.startswith("fantasyland"):
                assert searcher.fit_beside(table)(trial, base) == searcher.fit(table)(trial), what
                tried += 1
    assert tried >= 5


def test_a_trial_scored_over_many_segments_at_once_fits_each_as_scored_alone() -> None:
    # A merge of profiles is tried over every segment of both (hundreds of small tables):
    # the segments of one profile are scored as one run of hands, and each segment's fit
    # (exact hands, divergences) is the one scoring it alone gives. Runs of 1 to 9 hands
    # of every table of the public sets, under the profiles each table is seeded with.
    pool = read_pool(SETS)
    searcher = _Searcher(pool, Recorded(pool), None)
    runs: list[Segment] = []
    trials: dict[int, list[Profile]] = {}
    for n, (table_id, hands) in enumerate(table_hands(pool)):
        seeds = searcher.seeds(hands)
        trials.setdefault(seeds[0].game, []).extend(seeds)
        cuts = np.cumsum([1 + (n + k) % 9 for k in range(len(hands))])
        for k, run in enumerate(np.split(hands, cuts[cuts < len(hands)])):
            best = seeds[k % len(seeds)]
            fit = Search(best, {best.digest: (best, searcher.fit(run)(best))}, ())
            runs.append(Segment(table_id, run, fit))
    checked, refused = 0, 0
    for game, tried in trials.items():
        mine = [s for s in runs if s.profile.game == game]
        assert len({s.profile.digest for s in mine}) > 1  # several bases at once
        for trial in tried:
            alone = [searcher.fit_beside(s.hands)(trial, s.profile) for s in mine]
            assert searcher.fits_beside(trial, mine) == alone
            checked += len(mine)
            # Scored part by part, a merge stops at the first part a segment fits worse
            # in: the fits are the same where none does; else none, wherever it is.
            for worse in (None, 0, len(mine) // 2, len(mine) - 1):
                owns = [(a[0] + (n == worse), a[1]) for n, a in enumerate(alone)]
                segments = [replace(s, fit=replace(s.fit, best=s.profile,
                                                   fits={s.profile.digest: (s.profile, own)}))
                            for s, own in zip(mine, owns, strict=True)]  # fmt: skip
                assert searcher.fits_each(trial, segments) == (None if worse is not None else alone)
                refused += worse is not None
    assert checked > 5000
    assert refused > 10


def test_a_run_reads_a_table_where_one_of_its_hands_gives_it() -> None:
    # A segment's tables that none of its records shows are undetermined (`unrecorded`):
    # read per hand once, a run reads a table where one of its hands gives it, as its
    # reading says, for runs of 1 to 5 hands of every table of the public sets.
    pool = read_pool(SETS)
    recorded = Recorded(pool)
    checked: Counter[tuple[str, bool]] = Counter()
    for n, (_, hands) in enumerate(table_hands(pool)):
        base = candidate(pool.game[int(hands[0])], {})
        if base.variant.boards:
            continue
        cuts = np.cumsum([1 + (n + k) % 5 for k in range(len(hands))])
        for run in np.split(hands, cuts[cuts < len(hands)]):
            readings = {"royalties": recorded.royalties(run, base)}
            if base.variant.open_face:
                readings["fantasyland"] = recorded.fantasyland(run, base)
            else:
                readings["naturals"] = recorded.naturals(run, base)
            for table, reading in readings.items():
                assert bool(recorded.reads(table)[run].any()) == (reading is not None), table
                checked[table, reading is None] += 1
    assert checked["royalties", False], checked  # (every run here shows a royalty)
    for table in ("naturals", "fantasyland"):
        assert checked[table, True] and checked[table, False], checked


def test_a_profile_renamed_for_a_pass_keeps_the_digest_it_would_make() -> None:
    # A pass names each candidate anew; the digest (game and values, not the name) is
    # carried over rather than made again, and is the one made from scratch.
    for profile in read_rules(EXAMPLES / "house-rules" / "house.toml").house:
        renamed = profile.named("candidate 7")
        assert renamed.name == "candidate 7" and renamed.values == profile.values
        assert renamed.digest == profile.digest == Profile("x", profile.game, profile.values).digest
