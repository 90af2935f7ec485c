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
