"""pyarrow's conversions in the local audit do not import pandas; asked for, pandas still works."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest


@pytest.mark.skipif(importlib.util.find_spec("pandas") is None, reason="pandas is not installed")
def test_arrow_converts_without_importing_pandas_and_still_gives_it_when_asked() -> None:
    code = (
        "import sys\n"
        "import pyarrow as pa\n"
        "from pipeline.helpers.no_pandas import arrow_without_pandas\n"
        "arrow_without_pandas()\n"
        "pa.array(['Ah', 'Kd']); pa.table({'seat': [1, 2]})\n"
        "print('pandas' in sys.modules)\n"
        "print(len(pa.table({'seat': [1, 2]}).to_pandas()))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "2"]
