"""Hypothesis: the column-wise RFC 3339 reader agrees with Python's datetime, time by time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.helpers.columns import utc_micros


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


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(*(st.integers(0, 10**k - 1) for k in (4, 2, 2, 2, 2, 2))).map(
            lambda p: "{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}Z".format(*p)
        ),
        min_size=1,
        max_size=20,
    )
)
def test_plain_utc_read_from_bytes_agrees_with_the_regular_expression(texts: list[str]) -> None:
    # All in the plain shape: read from the bytes. One null more: the regular expression.
    plain_micros, plain_bad = utc_micros(pa.array(texts))
    micros, bad = utc_micros(pa.array([*texts, None]))
    assert plain_bad.tolist() == bad[:-1].tolist()
    assert plain_micros.tolist() == micros[:-1].tolist()
