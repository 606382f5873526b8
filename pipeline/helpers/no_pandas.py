"""pyarrow told once that there is no pandas to look for, in a process that gives it none.

pyarrow's first conversion of Python values (any `pa.array([...])`) checks whether
they are pandas objects, and to check, imports pandas when it is installed (as it is
beside the Spark extra): 0.3 s of a run's start, a tenth of auditing 100,000 Parquet
hands. The local audit never hands pyarrow a pandas object, so the command line has
pyarrow try that import once while it cannot succeed; pyarrow remembers the answer.
Asking pyarrow for pandas outright (`Table.to_pandas`) still imports it.
"""

from __future__ import annotations

import importlib.abc
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

import pyarrow as pa


class _NoPandas(importlib.abc.MetaPathFinder):
    """Finds no pandas: importing it raises ImportError."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname.partition(".")[0] == "pandas":
            raise ImportError("pandas is left out of this process's Arrow conversions")
        return None


def arrow_without_pandas() -> None:
    """Have pyarrow settle, without importing pandas, that no value it converts is one of
    pandas'. Nothing changes when pandas is already imported (someone uses it)."""
    if "pandas" in sys.modules:
        return
    finder = _NoPandas()
    sys.meta_path.insert(0, finder)
    try:
        pa.array([0])  # pyarrow's one try at importing pandas
    finally:
        sys.meta_path.remove(finder)
