"""glibc malloc's mmap and trim thresholds, fixed once at start-up (setting malloc_mmap_threshold_bytes).

glibc's mmap threshold adapts: each time a block it had mmapped is freed, the threshold rises to that
block's size (up to 32 MiB), and the trim threshold to twice that. After a few large requests and
answers, blocks of that size are no longer mmapped and unmapped but carved from the heaps of the arenas
that gRPC's threads, the SQLite threads and the event loop allocate in, where what is freed stays
resident (a heap gives memory back only from its top). Setting the thresholds with mallopt turns the
adaptation off, so large buffers keep going back to the system when freed.

Measured with bench/fuzz_rpcs.py --requests 60000 --malloc-stats, runs with 0 and 128 KiB interleaved:
RSS grew +53 to +75 MiB with glibc's defaults (malloc kept 51-75 MiB free) and +18 to +41 MiB with 128 KiB
(16-45 MiB kept), the live heap alike. The price is paid by large requests only: every block over the
threshold is mmapped afresh, its pages faulted in and zeroed, so the fuzz run (many requests of 1-4 MiB)
cost the server 46-60 s of CPU instead of 37-40 s; small requests do not see it (bench/task_service_bench.py
RecordAction and GetTask CPU per request alike). The commit that added this module has every figure.
Off by default (0): the memory kept is bounded by the largest requests served, not a leak, while the CPU
price would fall on every deployment that takes large requests; memory-tight ones set 131072.
"""

from __future__ import annotations

import ctypes
import logging
import os
import sys
from collections.abc import Callable

log = logging.getLogger(__name__)

# mallopt parameters, from glibc's malloc.h.
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3

Mallopt = Callable[[int, int], int]


def glibc_mallopt() -> Mallopt | None:
    """glibc's mallopt, or None on any other C library or system."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION"):
            return None
    except (ValueError, OSError):  # the name is glibc's own: musl and others do not know it
        return None
    mallopt = ctypes.CDLL(None).mallopt
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return mallopt  # type: ignore[no-any-return]


def fix_malloc_thresholds(mmap_threshold_bytes: int, mallopt: Mallopt | None = None) -> bool:
    """Fix glibc's mmap and trim thresholds at mmap_threshold_bytes (config malloc_mmap_threshold_bytes);
    0 leaves glibc's adaptive defaults. True when they were set; off glibc it logs once and does nothing."""
    if not mmap_threshold_bytes:
        return False
    mallopt = mallopt or glibc_mallopt()
    if mallopt is None:
        log.info("malloc_mmap_threshold_bytes: not glibc, so left to this C library's defaults")
        return False
    for parameter, name in ((M_MMAP_THRESHOLD, "M_MMAP_THRESHOLD"), (M_TRIM_THRESHOLD, "M_TRIM_THRESHOLD")):
        if mallopt(parameter, mmap_threshold_bytes) != 1:
            log.warning("malloc_mmap_threshold_bytes: glibc refused %s=%d", name, mmap_threshold_bytes)
            return False
    return True
