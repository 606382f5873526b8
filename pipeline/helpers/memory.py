"""Freed memory kept for reuse while the process audits, not handed back and faulted in again.

Each block allocates and frees arrays of megabytes. By default glibc maps every large
array afresh and unmaps it when freed, and trims the heap's top; Arrow's mimalloc pool
purges freed pages after 10 ms. The next block then faults every page in again, which
on a virtual machine costs microseconds a page: 200,000 open-face hands took 440,000
page faults and 3 to 7 s of system time. Kept, the pages are reused.
"""

from __future__ import annotations

import ctypes
import sys

import pyarrow as pa

# mallopt(3) parameters.
_M_TRIM_THRESHOLD = -1
_M_TOP_PAD = -2
_M_MMAP_THRESHOLD = -3


def keep_freed_memory() -> None:
    """Have glibc keep freed memory for reuse (no mapping per large array, no trimming),
    and Arrow allocate through it. Elsewhere than glibc on Linux, nothing changes."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL("libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (musl, for one)
        return
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    if not mallopt(_M_MMAP_THRESHOLD, 32 << 20):  # glibc's largest: arrays up to 32 MB
        return
    mallopt(_M_TRIM_THRESHOLD, 1 << 30)
    mallopt(_M_TOP_PAD, 64 << 20)
    pa.set_memory_pool(pa.system_memory_pool())
