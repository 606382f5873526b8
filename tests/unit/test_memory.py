"""The command line keeps freed memory for reuse: Arrow allocates through glibc, tuned."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the setting is glibc's")
def test_arrow_allocates_through_the_tuned_glibc_heap() -> None:
    code = (
        "import pyarrow as pa\n"
        "from pipeline.helpers.memory import keep_freed_memory\n"
        "before = pa.default_memory_pool().backend_name\n"
        "keep_freed_memory()\n"
        "print(before, pa.default_memory_pool().backend_name)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    before, after = out.stdout.split()
    assert after == "system" and before != "system"
