"""Time-ordered ids: a prefix, 48 bits of milliseconds and 48 random bits, in hex.

Ids made later sort later (to the millisecond), which keeps (created_at, id)
orders stable and index inserts local.
"""

from __future__ import annotations

import os
import time


def new_id(prefix: str) -> str:
    millis = time.time_ns() // 1_000_000
    return f"{prefix}_{millis:012x}{os.urandom(6).hex()}"


def now_us() -> int:
    """The current time in integer microseconds since the epoch."""
    return time.time_ns() // 1_000
