"""A player's cards and values packed into words read back by the store's SQL, item by item."""

from __future__ import annotations

import duckdb
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.helpers.packing import CARDS, VALUES, Packing


@settings(max_examples=60, deadline=None)
@given(
    packing=st.sampled_from([CARDS, VALUES]),
    shape=st.tuples(st.integers(1, 4), st.integers(1, 13)),
    data=st.data(),
)
def test_what_is_packed_is_read_back(
    packing: Packing, shape: tuple[int, int], data: st.DataObject
) -> None:
    items = np.array(
        data.draw(
            st.lists(
                st.lists(
                    st.integers(0, (1 << packing.bits) - 1), min_size=shape[1], max_size=shape[1]
                ),
                min_size=shape[0],
                max_size=shape[0],
            )
        )
    )
    words = packing.pack(items)
    assert list(words) == packing.columns(shape[1])
    con = duckdb.connect()
    name, parameters, body = packing.macro  # as every audit holds it
    con.execute(f"CREATE MACRO {name}({parameters}) AS ({body})")
    con.register("packed", pa.table({name: pa.array(word) for name, word in words.items()}))
    for i in range(shape[1]):
        read = con.execute(
            f"SELECT {packing.unpacked_sql('p', str(i), len(words))}::BIGINT FROM packed p"
        ).fetchall()
        assert [r[0] for r in read] == items[:, i].tolist()


@pytest.mark.parametrize("item", [-1, 64])
def test_an_item_that_does_not_fit_is_refused(item: int) -> None:
    with pytest.raises(ValueError, match=r"outside 0 \.\. 63"):
        CARDS.pack(np.array([[1, item]]))
