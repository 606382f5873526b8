"""`rules infer`'s segments on a real pool: neighbouring segments of a table that came to
one profile are one segment, with its fits counted over all of its hands."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pipeline.core.inference import with_value
from pipeline.core.readings import natural_table
from pipeline.engine.infer import Segment, _Searcher, infer_tables, table_hands, told_apart
from pipeline.engine.inferred import Names, report
from pipeline.engine.pool import read_pool
from pipeline.engine.recorded import Recorded
from tests.cli.test_evaluate_command import handaudit
from tests.conftest import EXAMPLES


def test_neighbours_of_one_profile_are_one_segment(tmp_path: Path) -> None:
    history = tmp_path / "hands.jsonl"
    made = handaudit("generate", "--tables", "2", "--hands", "30", "--seed", "2",
                     "--out", str(history))  # fmt: skip
    assert made.returncode == 0, made.stderr
    pool = read_pool([history])
    searcher = _Searcher(pool, Recorded(pool), None)
    segments: list[Segment] = []
    for table_id, hands in table_hands(pool):
        (whole,) = searcher.segments(table_id, hands, [], depth=0)
        # The same table in two parts, each with the fit of its own hands.
        for part in (hands[:10], hands[10:]):
            fit = searcher.fit(part)
            fits = {d: (p, fit(p)) for d, (p, _) in whole.fit.fits.items()}
            segments.append(Segment(table_id, part, replace(whole.fit, fits=fits)))
    joined = searcher.joined(segments)
    assert [s.table_id for s in joined] == [t for t, _ in table_hands(pool)]
    for s, (_, hands) in zip(joined, table_hands(pool), strict=True):
        assert list(s.hands) == list(hands)
        assert s.fit.exact == searcher.fit(hands)(s.profile)[0] == len(hands)


def test_neighbours_whose_rules_differ_only_where_a_side_tells_nothing_are_one(
    tmp_path: Path,
) -> None:
    # A table cut in two, the second part's profile differing from the first's only in
    # an entry its hands leave undetermined: that is no change of rules, so one segment.
    history = tmp_path / "hands.jsonl"
    made = handaudit("generate", "--variant", "chinese", "--tables", "1", "--hands", "30",
                     "--seed", "2", "--out", str(history))  # fmt: skip
    assert made.returncode == 0, made.stderr
    pool = read_pool([history])
    searcher = _Searcher(pool, Recorded(pool), None)
    ((table_id, hands),) = table_hands(pool)
    (whole,) = searcher.segments(table_id, hands, [], depth=0)
    other = with_value(whole.profile, "naturals", {**natural_table(whole.profile), "dragon": 99})
    first = Segment(table_id, hands[:10], whole.fit)
    second = Segment(table_id, hands[10:], replace(whole.fit, best=other, fits={
        **whole.fit.fits, other.digest: (other, searcher.fit(hands[10:])(other))}))  # fmt: skip
    untold = searcher.untold([first, second])
    assert "naturals.dragon" in untold[1].fit.entries  # no player declared a dragon
    assert told_apart(*untold) == []
    (one,) = searcher.alike(untold)
    assert list(one.hands) == list(hands) and one.profile.digest == second.profile.digest
    told = [replace(s, fit=replace(s.fit, undetermined=(), entries=())) for s in untold]
    assert told_apart(*told) == ["naturals.dragon"]  # told by both: a change, kept
    assert len(searcher.alike(told)) == 2


def test_the_report_counts_exact_hands_as_the_search_scored_them() -> None:
    # Open-face hands dealt other Fantasyland cards than their previous hand earned are
    # not exact under a profile: the report's `exact` and `evidence` count them so.
    history = EXAMPLES / "house-rules" / "pineapple_prog-faults" / "hands.jsonl"
    pool = read_pool([history])
    found = infer_tables(pool)
    table = report(pool, found, Names.of(pool, found.segments, None)).splitlines()[2:]
    cells = {line.split("|")[1].strip(): line.split("|") for line in table if line.startswith("|")}
    for s in found.segments:
        assert int(cells[s.table_id][8]) == s.fit.exact, s.table_id
