"""Waiting in tests for what the server does in its own time, with one hang guard for the whole suite.

A bounded poll ("try 100 times, 50 ms apart") or a short timeout on a read is a timing threshold in disguise:
on a busy machine the background work outlasts the window and the test fails though nothing is wrong (issue
45). Tests wait with `eventually` and `HANG_GUARD_SECONDS` instead: the guard only turns a hang into a
failure, it never judges how fast anything was.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")

# Long enough that no load this suite meets (two busy loops beside it on two cores, CI) trips it.
HANG_GUARD_SECONDS = 120.0


async def eventually(check: Callable[[], T | Awaitable[T]], what: str, interval: float = 0.05) -> T:
    """check()'s first truthy result (check may be a plain or an async function), polled every `interval`;
    AssertionError naming `what` and the last result when none comes within the hang guard."""
    deadline = time.monotonic() + HANG_GUARD_SECONDS
    while True:
        result = check()
        if inspect.isawaitable(result):
            result = await result
        if result:
            return result  # type: ignore[return-value]
        assert time.monotonic() < deadline, f"{what}: not within the {HANG_GUARD_SECONDS:g} s hang guard " \
                                            f"(last seen {result!r})"
        await asyncio.sleep(interval)
