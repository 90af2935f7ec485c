"""BuildContext's read cache: a read is dropped by exactly the commits that could change it."""

from __future__ import annotations

from taskmem.core.events import Event, EventType
from taskmem.store.task_cache import ThreadReadCache


def _event(task_id: str, namespace: str = "default") -> Event:
    return Event(namespace, EventType.MESSAGE_POSTED, task_id, "corr", {}, 1)


def _filled() -> ThreadReadCache:
    cache = ThreadReadCache()
    for key in [("default", "tsk_a", "tsk_a", ""), ("default", "tsk_a", "tsk_a", "pgloader"),
                ("default", "tsk_b", "tsk_b", ""), ("default", "chat-1", "", ""), ("other", "tsk_a", "tsk_a", "")]:
        cache.put(key, cache.epoch, key)
    return cache


def test_an_event_of_a_task_drops_that_tasks_reads_in_its_namespace_only() -> None:
    cache = _filled()
    cache.invalidate([_event("tsk_a")], silent=False)
    assert cache.get(("default", "tsk_a", "tsk_a", "")) is None
    assert cache.get(("default", "tsk_a", "tsk_a", "pgloader")) is None
    assert cache.get(("default", "tsk_b", "tsk_b", "")) is not None
    assert cache.get(("default", "chat-1", "", "")) is not None
    assert cache.get(("other", "tsk_a", "tsk_a", "")) is not None


def test_an_event_of_no_task_drops_every_read_of_its_namespace() -> None:
    cache = _filled()
    cache.invalidate([_event("")], silent=False)
    assert [cache.get(k) for k in [("default", "tsk_b", "tsk_b", ""), ("default", "chat-1", "", "")]] == [None, None]
    assert cache.get(("other", "tsk_a", "tsk_a", "")) is not None


def test_a_write_without_events_drops_everything() -> None:
    cache = _filled()
    cache.invalidate([], silent=True)
    assert cache.get(("other", "tsk_a", "tsk_a", "")) is None


def test_a_read_that_began_before_a_commit_is_not_kept() -> None:
    cache = ThreadReadCache()
    began = cache.epoch
    cache.invalidate([_event("tsk_z")], silent=False)
    cache.put(("default", "tsk_a", "tsk_a", ""), began, "stale")
    assert cache.get(("default", "tsk_a", "tsk_a", "")) is None
