"""Time-ordered ids: a prefix, 48 bits of milliseconds and 48 random bits, in hex.

Ids made later sort later (to the millisecond), which keeps (created_at, id)
orders stable and index inserts local.
"""

from __future__ import annotations

import random
import time

# Ids need uniqueness, not secrecy: a PRNG seeded from the OS is far cheaper than urandom per id.
_random = random.Random()


def new_id(prefix: str) -> str:
    millis = time.time_ns() // 1_000_000
    return f"{prefix}_{millis:012x}{_random.getrandbits(48):012x}"


def now_us() -> int:
    """The current time in integer microseconds since the epoch."""
    return time.time_ns() // 1_000


def is_id_of(prefix: str, value: str) -> bool:
    """Whether value has the shape of an id new_id(prefix) makes."""
    head, _, tail = value.partition("_")
    return head == prefix and len(tail) == 24 and all(c in "0123456789abcdef" for c in tail)
