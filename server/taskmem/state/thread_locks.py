"""A lock per key that exists only while someone holds it or waits for it.

A long-running server sees threads without end; keeping one asyncio.Lock per thread it ever touched (a
defaultdict) grows forever. Here each key's entry counts its holder and waiters, and the last one out
removes it, so the map holds only keys in use:

    async with locks.hold((namespace, thread_id)):
        ...

Exclusion stays exact: an entry leaves the map only when its count is zero, so nobody can still hold or
wait on a lock a newcomer no longer sees; a newcomer then makes a fresh lock that no one else holds. All of
this runs on one event loop with no await between finding an entry and counting oneself in it. A waiter
cancelled while it waits is handled by asyncio.Lock (it leaves the queue and, if the lock was just handed
to it, passes it on) and still counts itself out.
"""

from __future__ import annotations

import asyncio
from collections.abc import Hashable
from types import TracebackType
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)


class _Entry:
    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.users = 0  # the holder and the waiters


class KeyedLocks(Generic[K]):
    """Mutual exclusion per key; different keys never wait for each other."""

    def __init__(self) -> None:
        self._entries: dict[K, _Entry] = {}

    def hold(self, key: K) -> _Hold[K]:
        """An async context manager that holds the key's lock for its body."""
        return _Hold(self, key)

    def __len__(self) -> int:
        """How many keys are held or waited for now."""
        return len(self._entries)

    def _enter(self, key: K) -> _Entry:
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = _Entry()
        entry.users += 1
        return entry

    def _leave(self, key: K, entry: _Entry) -> None:
        entry.users -= 1
        if entry.users == 0:
            assert self._entries.get(key) is entry, "a key's entry is replaced only after its last user left"
            del self._entries[key]


class _Hold(Generic[K]):
    __slots__ = ("_locks", "_key", "_entry")

    def __init__(self, locks: KeyedLocks[K], key: K) -> None:
        self._locks = locks
        self._key = key
        self._entry: _Entry | None = None

    async def __aenter__(self) -> None:
        entry = self._locks._enter(self._key)
        try:
            await entry.lock.acquire()
        except BaseException:  # cancelled while waiting: count out, and let the exception go on
            self._locks._leave(self._key, entry)
            raise
        self._entry = entry

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        traceback: TracebackType | None) -> None:
        entry = self._entry
        assert entry is not None, "exit without a successful enter"
        self._entry = None
        entry.lock.release()
        self._locks._leave(self._key, entry)
