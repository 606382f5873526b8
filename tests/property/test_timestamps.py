"""Hypothesis: the column-wise RFC 3339 reader agrees with Python's datetime, time by time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.ingest.columns import utc_micros


@settings(max_examples=300, deadline=None)
@given(
    moment=st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2200, 12, 31)),
    offset=st.integers(-23 * 60 - 59, 23 * 60 + 59),
    fraction=st.booleans(),
)
def test_same_instant_as_datetime(moment: datetime, offset: int, fraction: bool) -> None:
    zone = timezone(timedelta(minutes=offset))
    local = moment.replace(tzinfo=zone)
    if not fraction:
        local = local.replace(microsecond=0)
    text = local.isoformat().replace("+00:00", "Z")
    micros, bad = utc_micros(pa.array([text]))
    assert not bad[0], text
    want = (local - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)
    assert micros[0] == want, text


@given(st.text(max_size=30))
def test_anything_else_is_refused_or_means_what_datetime_says(text: str) -> None:
    _, bad = utc_micros(pa.array([text]))
    if not bad[0]:
        datetime.fromisoformat(text.upper().replace("Z", "+00:00").replace(" ", "T"))
