"""Rendered views of tasks kept in memory, dropped the moment a change to the task commits.

GetTask of a task with a long plan spends far more time turning rows into
messages than gRPC spends sending them; between changes the answer is the same,
so it is kept. A reader that started before a commit must not store what it
read, so a view is stored only if no commit happened since its read began
(the epoch check).
"""

from __future__ import annotations

import collections
from typing import Any

from taskmem.core.events import Event

Key = tuple[str, str]  # (namespace, task id)


class TaskViewCache:
    def __init__(self, capacity: int = 10_000) -> None:
        self._capacity = capacity
        self._views: collections.OrderedDict[Key, Any] = collections.OrderedDict()
        self.epoch = 0

    def get(self, key: Key) -> Any | None:
        view = self._views.get(key)
        if view is not None:
            self._views.move_to_end(key)
        return view

    def put(self, key: Key, read_epoch: int, view: Any) -> None:
        """Keep view unless something committed after the read that made it began."""
        if read_epoch != self.epoch:
            return
        self._views[key] = view
        if len(self._views) > self._capacity:
            self._views.popitem(last=False)

    def invalidate(self, events: list[Event]) -> None:
        self.epoch += 1
        for event in events:
            self._views.pop((event.namespace, event.task_id), None)


ThreadKey = tuple[str, str, str, str]  # (namespace, thread id, task id or "", query)


class ThreadReadCache:
    """What BuildContext reads for a thread (its record, its task's view, the namespace's knowledge, the
    task's memories), kept until a commit that could change it: an event of the thread's task, an event
    of no task (knowledge, standalone threads), or a write that emitted no event at all (its reach is
    unknown, so everything goes). The epoch check keeps a read that raced a commit from being stored."""

    # A read holds up to 200 messages and its task's view, so the bound is modest.
    def __init__(self, capacity: int = 256) -> None:
        self._capacity = capacity
        self._reads: collections.OrderedDict[ThreadKey, Any] = collections.OrderedDict()
        self.epoch = 0

    def get(self, key: ThreadKey) -> Any | None:
        read = self._reads.get(key)
        if read is not None:
            self._reads.move_to_end(key)
        return read

    def put(self, key: ThreadKey, read_epoch: int, read: Any) -> None:
        if read_epoch != self.epoch:
            return
        self._reads[key] = read
        if len(self._reads) > self._capacity:
            self._reads.popitem(last=False)

    def invalidate(self, events: list[Event], silent: bool) -> None:
        self.epoch += 1
        if silent:
            self._reads.clear()
            return
        touched = {(e.namespace, e.task_id) for e in events}
        if touched and self._reads:
            whole = {namespace for namespace, task_id in touched if not task_id}
            for key in [k for k in self._reads if k[0] in whole or (k[0], k[1]) in touched
                        or (k[0], k[2]) in touched]:
                del self._reads[key]
