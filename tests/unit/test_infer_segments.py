"""`rules infer`'s segments on a real pool: neighbouring segments of a table that came to
one profile are one segment, with its fits counted over all of its hands."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pipeline.engine.infer import Segment, _Searcher, table_hands
from pipeline.engine.pool import read_pool
from pipeline.engine.recorded import Recorded
from tests.cli.test_evaluate_command import handaudit


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
