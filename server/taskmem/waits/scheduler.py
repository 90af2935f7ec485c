"""The wait scheduler: one clock loop and one event-log watch drive every open wait.

An open wait costs a dict entry and a heap entry or two, never a task of its own:
- the clock loop sleeps until the earliest of all due times (timer due, deadline,
  next poll of an http or file target), so 10,000 idle timers cost no CPU;
- task_status and event targets are driven by the event log: one watch, indexed by
  (namespace, task id), hands each committed event to the waits that watch its task.
  A wait is checked against the database once when it is tracked (and again if the
  watch ever overflows), so an event committed before it was tracked is not missed;
- polls of each kind run a bounded number at a time: http looks asynchronously, each within
  a total deadline; file looks in a small thread pool of their own. So a slow kind (say,
  HTTP servers that trickle their bodies) never delays the other, nor any event or timer.
- a look that raises is retried with backoff (the poll interval doubling, at most
  PROBE_BACKOFF_MAX_US); after `probe_max_errors` errors in a row the wait ends FAILED
  with the last error. A polled wait is therefore always either due to be looked at,
  being looked at, or ended.

With replicas on one database (storage.shared), every replica tracks every open wait, and an http or
file target is looked at only by the replica holding the wait's claim (waits/claims.py): a replica
asks for the claims of the polled waits that come due, probes those it got, and asks again for the
others when their claims end, so a replica that dies has its waits taken over within the lease time.

Waits are rows. start() loads the WAITING ones; a wait whose timer or deadline passed
while the server was down ends TIMED_OUT at once. Ending a wait is one write
(store/waits.finish_wait) that carries the history message, the task metadata and
the events; the database status decides a race (a wait already ended is left alone).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import heapq
import itertools
import logging
from collections.abc import Callable, Coroutine, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from taskmem.core.errors import FailedPrecondition, NotFound
from taskmem.core.events import Event, EventFilter, EventType
from taskmem.core.ids import now_us
from taskmem.core.tasks import TaskStatus
from taskmem.core.waits import (
    END_EVENTS, EVENT_DRIVEN, EventTarget, FileTarget, HttpTarget, TaskStatusTarget, Wait, WaitStatus, event_matches,
    event_result, expired_while_down_result, format_duration, task_status_outcome, timeout_result,
)
from taskmem.store.waits import waits as wait_store
from taskmem.store.event_log import EventLogClosed
from taskmem.store.storage import Storage
from taskmem.store.storage import WriterClosed
from taskmem.waits.claims import WaitClaims
from taskmem.waits.file_access import WaitFileRoots
from taskmem.waits.probes import Observation, http_client, probe_file, probe_http

log = logging.getLogger(__name__)

Key = tuple[str, str]  # (namespace, wait id)
_DUE, _DEADLINE, _POLL = "due", "deadline", "poll"
_EVENT_PAGE = 500
_END_BATCH = 500  # most waits one mutation ends (or claims)
PROBE_BACKOFF_MAX_US = 60 * 1_000_000
FINISH_RETRY_SECONDS = 1.0


@dataclasses.dataclass(frozen=True)
class _WatchedTasks(EventFilter):
    """Matches events, of any namespace, of the tasks some open wait watches."""

    watched: Mapping[tuple[str, str], Any] = dataclasses.field(default_factory=dict, compare=False, hash=False)
    # Replicas on one database: every wait creation and ending, whichever replica wrote it (see _follow_wait).
    wait_events: frozenset[EventType] = frozenset()

    def matches(self, event: Event) -> bool:
        return (event.namespace, event.task_id) in self.watched or event.type in self.wait_events


class WaitScheduler:
    def __init__(self, storage: Storage, file_roots: WaitFileRoots, *, http_allowed_hosts: tuple[str, ...] = (),
                 http_probes: int = 32, file_probes: int = 4, probe_timeout_seconds: float = 10.0,
                 probe_max_errors: int = 5) -> None:
        self._storage = storage
        self._waits: dict[Key, Wait] = {}
        self._heap: list[tuple[int, int, Key, str]] = []
        self._order = itertools.count()
        self._by_task: dict[tuple[str, str], set[Key]] = {}
        self._last_seen: dict[Key, str] = {}
        self._probing: set[Key] = set()
        self._wake = asyncio.Event()
        self._due: list[tuple[Wait, WaitStatus, str]] = []  # handed from the clock to the ender
        self._due_signal = asyncio.Event()
        self._work: set[asyncio.Task[Any]] = set()
        self._loops: list[asyncio.Task[None]] = []
        self._watch = contextlib.ExitStack()
        self._probe_timeout = probe_timeout_seconds
        self._probe_max_errors = probe_max_errors
        self._errors: dict[Key, int] = {}  # consecutive failed looks
        self._file_roots = file_roots
        self._http_slots = asyncio.Semaphore(http_probes)
        self._file_slots = asyncio.Semaphore(file_probes)
        self._http = http_client(http_probes, http_allowed_hosts)
        self._executor = ThreadPoolExecutor(max_workers=file_probes, thread_name_prefix="taskmem-wait-file")
        self._stopping = False
        self._wait_events: frozenset[EventType] = frozenset()
        self._claims: WaitClaims | None = None  # replicas only: which polled waits this one looks at
        self._claiming: set[Key] = set()
        # Told (kind "http" | "file", outcome "matched" | "failed" | "error" | "waiting") after each poll.
        self.on_probe: Callable[[str, str], None] | None = None

    @property
    def open_count(self) -> int:
        return len(self._waits)

    # --- life ---------------------------------------------------------------------------------

    async def start(self) -> None:
        """Watch the event log, end the waits that expired while the server was down, track the rest."""
        wait_events = frozenset({EventType.WAIT_CREATED, *END_EVENTS.values()}) if self._storage.shared else frozenset()
        self._wait_events = wait_events
        if self._storage.shared:
            self._claims = WaitClaims(self._storage, self._storage.lease_seconds)
            self._claims.start()
        subscription = self._watch.enter_context(
            self._storage.events.watch(_WatchedTasks(namespace="*", watched=self._by_task, wait_events=wait_events)))
        started = now_us()
        waits = await self._storage.read(wait_store.open_waits)
        expired = [w for w in waits if w.expires_at is not None and w.expires_at <= started]
        await self._finish_all([(w, WaitStatus.TIMED_OUT, expired_while_down_result(w, w.expires_at or started, started))
                                for w in expired])
        if expired:
            log.info("%d waits expired while the server was down: timed out", len(expired))
        ended = {wait.id for wait in expired}
        for wait in waits:
            if wait.id not in ended:
                self.track(wait)
        self._loops = [asyncio.create_task(self._run_clock(), name="taskmem-wait-clock"),
                       asyncio.create_task(self._run_ender(), name="taskmem-wait-ender"),
                       asyncio.create_task(self._follow_events(subscription), name="taskmem-wait-events")]

    async def stop(self) -> None:
        """Stop watching; open waits stay WAITING in the database and resume at the next start."""
        self._stopping = True
        tasks = [*self._loops, *self._work]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._watch.close()
        if self._claims is not None:
            await self._claims.stop()
        self._executor.shutdown(wait=False, cancel_futures=True)
        await self._http.aclose()

    # --- tracking -----------------------------------------------------------------------------

    def track(self, wait: Wait) -> None:
        """Start driving a WAITING wait (idempotent: a wait already tracked is left as it is)."""
        key = (wait.namespace, wait.id)
        if self._stopping or wait.status is not WaitStatus.WAITING or key in self._waits:
            return
        self._waits[key] = wait
        if wait.due_at is not None:
            self._push(wait.due_at, key, _DUE)
        if wait.deadline_at is not None:
            self._push(wait.deadline_at, key, _DEADLINE)
        if isinstance(wait.target, (HttpTarget, FileTarget)):
            self._push(now_us(), key, _POLL)
        if isinstance(wait.target, EVENT_DRIVEN):
            self._by_task.setdefault((wait.namespace, wait.target.task_id), set()).add(key)
            self._spawn(self._check_stored(wait))

    def forget(self, namespace: str, wait_id: str) -> None:
        """Stop driving a wait (it ended through the API); its heap entries are skipped when they come up."""
        key = (namespace, wait_id)
        wait = self._waits.pop(key, None)
        self._last_seen.pop(key, None)
        self._errors.pop(key, None)
        if self._claims is not None:
            self._claims.drop(key)
        if wait is not None and isinstance(wait.target, EVENT_DRIVEN):
            watchers = self._by_task.get((namespace, wait.target.task_id))
            if watchers is not None:
                watchers.discard(key)
                if not watchers:
                    del self._by_task[(namespace, wait.target.task_id)]

    def _push(self, at: int, key: Key, what: str) -> None:
        wake = not self._heap or at < self._heap[0][0]
        heapq.heappush(self._heap, (at, next(self._order), key, what))
        if wake:
            self._wake.set()

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self._work.add(task)
        task.add_done_callback(self._work.discard)

    # --- the clock ----------------------------------------------------------------------------

    async def _run_clock(self) -> None:
        while True:
            self._wake.clear()
            now = now_us()
            ending: list[tuple[Wait, WaitStatus, str]] = []
            unclaimed: list[Key] = []
            while self._heap and self._heap[0][0] <= now:
                _, _, key, what = heapq.heappop(self._heap)
                wait = self._waits.get(key)
                if wait is None:
                    continue
                if what == _POLL:
                    if self._claims is None or self._claims.holds(key):
                        self._start_probe(key, wait)
                    elif key not in self._claiming:
                        unclaimed.append(key)
                    continue
                if what == _DUE:
                    assert wait.due_at is not None
                    ending.append((wait, WaitStatus.RESOLVED,
                                   f"{format_duration(wait.due_at - wait.created_at)} elapsed"))
                else:
                    ending.append((wait, WaitStatus.TIMED_OUT, timeout_result(wait, self._last_seen.get(key, ""))))
                self.forget(*key)
            if ending:
                self._due.extend(ending)
                self._due_signal.set()
            if unclaimed:
                self._claiming.update(unclaimed)
                for start in range(0, len(unclaimed), _END_BATCH):  # a statement's row list stays bounded
                    self._spawn(self._claim_then_probe(unclaimed[start:start + _END_BATCH]))
            self._compact_heap()
            delay = max(0.0, (self._heap[0][0] - now_us()) / 1_000_000) if self._heap else None
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(delay):
                    await self._wake.wait()

    def _compact_heap(self) -> None:
        """Drop the entries of ended waits once they outnumber the live ones."""
        if len(self._heap) > 2 * len(self._waits) + 1024:
            self._heap = [entry for entry in self._heap if entry[2] in self._waits]
            heapq.heapify(self._heap)

    async def _run_ender(self) -> None:
        """End what the clock found due: one write at a time, each taking everything due since the last."""
        while True:
            await self._due_signal.wait()
            self._due_signal.clear()
            ending, self._due = self._due, []
            await self._finish_all(ending)

    async def _finish_all(self, ending: list[tuple[Wait, WaitStatus, str]]) -> None:
        """End many waits at once: one mutation per namespace (a burst of timers is one write)."""
        by_namespace: dict[str, list[tuple[Wait, WaitStatus, str]]] = {}
        for entry in ending:
            self.forget(entry[0].namespace, entry[0].id)
            by_namespace.setdefault(entry[0].namespace, []).append(entry)
        await asyncio.gather(*(self._end_batch(namespace, batch[start:start + _END_BATCH])
                               for namespace, batch in by_namespace.items()
                               for start in range(0, len(batch), _END_BATCH)))

    async def _end_batch(self, namespace: str, batch: list[tuple[Wait, WaitStatus, str]]) -> None:
        try:
            await self._storage.write(lambda tx: wait_store.end_waits(tx, batch), namespace, batch[0][0].correlation_id)
        except WriterClosed:
            pass  # shutting down: they stay WAITING and are resumed at the next start
        except Exception:
            log.exception("ending %d waits together failed; ending them one by one", len(batch))
            await asyncio.gather(*(self._finish(wait, status, result) for wait, status, result in batch))

    async def _finish(self, wait: Wait, status: WaitStatus, result: str) -> None:
        self.forget(wait.namespace, wait.id)
        try:
            await self._storage.write(lambda tx: wait_store.finish_wait(tx, wait.id, status, result),
                                      wait.namespace, wait.correlation_id)
        except (FailedPrecondition, NotFound):
            pass  # ended meanwhile (cancelled or resolved by a caller): the first outcome stands
        except WriterClosed:
            pass  # shutting down: it stays WAITING and is resumed at the next start
        except Exception:
            # Never leave a wait WAITING with nobody driving it: track it again shortly, which retries the ending.
            log.exception("could not end wait %s as %s; trying again in %g s", wait.id, status.name,
                          FINISH_RETRY_SECONDS)
            asyncio.get_running_loop().call_later(FINISH_RETRY_SECONDS, self.track, wait)

    # --- polled targets -----------------------------------------------------------------------

    def _start_probe(self, key: Key, wait: Wait) -> None:
        if key not in self._probing:
            self._probing.add(key)
            self._spawn(self._probe(key, wait))

    async def _claim_then_probe(self, keys: list[Key]) -> None:
        """Replicas: probe the waits this one could claim; ask again for the others when their claims end."""
        assert self._claims is not None
        try:
            claimed, retry = await self._claims.claim(keys)
        except WriterClosed:
            return
        except Exception as error:  # the database is unreachable: ask again after a while
            log.warning("claiming %d polled waits failed (%s); asking again", len(keys), error)
            claimed, retry = [], {key: now_us() + int(self._storage.lease_seconds * 1_000_000 / 3) for key in keys}
        finally:
            self._claiming.difference_update(keys)
        for key in claimed:
            wait = self._waits.get(key)
            if wait is not None:
                self._start_probe(key, wait)
        for key, at in retry.items():
            if key in self._waits:
                self._push(at, key, _POLL)

    def _tell_probe(self, wait: Wait, observation: Observation | None) -> None:
        """on_probe(kind, outcome) for one look; a look that raised (None) is an error."""
        if self.on_probe is None:
            return
        if observation is None:
            outcome = "error"
        elif observation.matched:
            outcome = "matched"
        elif observation.failed:
            outcome = "failed"
        else:
            outcome = "error" if observation.error else "waiting"
        self.on_probe("http" if isinstance(wait.target, HttpTarget) else "file", outcome)

    async def _probe(self, key: Key, wait: Wait) -> None:
        interval = wait.poll_interval_us or 1_000_000
        failure = ""
        try:
            observation = await self._look(key, wait)
        except Exception as error:  # a defect or an unexpected OS error: retried, never left unpolled
            observation, failure = None, f"{type(error).__name__}: {error}"
            log.warning("looking at the target of wait %s failed: %s", wait.id, failure)
        finally:
            self._probing.discard(key)
        if key not in self._waits:
            return
        self._tell_probe(wait, observation)
        if observation is None:
            errors = self._errors[key] = self._errors.get(key, 0) + 1
            if errors >= self._probe_max_errors:
                await self._finish(wait, WaitStatus.FAILED,
                                   f"looking at the target failed {errors} times in a row; last error: {failure}")
            else:
                self._push(now_us() + min(interval << (errors - 1), max(interval, PROBE_BACKOFF_MAX_US)), key, _POLL)
            return
        self._errors.pop(key, None)
        self._last_seen[key] = observation.summary
        if observation.matched:
            await self._finish(wait, WaitStatus.RESOLVED, observation.summary)
        elif observation.failed:
            await self._finish(wait, WaitStatus.FAILED, observation.summary)
        else:
            self._push(now_us() + interval, key, _POLL)

    async def _look(self, key: Key, wait: Wait) -> Observation | None:
        """One look at a polled target, in its kind's slots; None when the wait ended meanwhile."""
        target = wait.target
        if isinstance(target, HttpTarget):
            async with self._http_slots:
                if key not in self._waits:
                    return None
                interval = (wait.poll_interval_us or 1_000_000) / 1_000_000
                return await probe_http(self._http, target, min(self._probe_timeout, max(1.0, interval)))
        assert isinstance(target, FileTarget)
        async with self._file_slots:
            if key not in self._waits:
                return None
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(self._executor, probe_file, self._file_roots.of(wait.namespace), target)

    # --- event-driven targets -----------------------------------------------------------------

    async def _follow_events(self, subscription: Any) -> None:
        """Hand every committed event of a watched task to its waits; on overflow re-check from the database."""
        while True:
            event = await subscription.queue.get()
            if event is None:
                if subscription.closed:
                    return
                subscription.overflowed = False
                for wait in [w for w in self._waits.values() if isinstance(w.target, EVENT_DRIVEN)]:
                    self._spawn(self._check_stored(wait))
                continue
            self._on_event(event)

    def _on_event(self, event: Event) -> None:
        if event.type in self._wait_events:
            self._follow_wait(event)
        for key in list(self._by_task.get((event.namespace, event.task_id), ())):
            wait = self._waits.get(key)
            if wait is None:
                continue
            outcome = self._outcome_of(wait, event)
            if outcome is not None:
                self.forget(*key)
                self._spawn(self._finish(wait, *outcome))

    def _follow_wait(self, event: Event) -> None:
        """With replicas on one database, every replica drives every open wait, so a wait outlives the replica
        that created it: one created elsewhere is tracked here too, one ended elsewhere is dropped. Ending a
        wait locks its row and skips a wait already ended, so each wait still ends once."""
        key = (event.namespace, str(event.payload.get("id", "")))
        if event.type is not EventType.WAIT_CREATED:
            self.forget(*key)
        elif key not in self._waits:
            self._spawn(self._track_stored(*key))

    async def _track_stored(self, namespace: str, wait_id: str) -> None:
        try:
            self.track(await self._storage.read(wait_store.load_wait, namespace, wait_id))
        except (NotFound, EventLogClosed):
            return

    @staticmethod
    def _outcome_of(wait: Wait, event: Event) -> tuple[WaitStatus, str] | None:
        target = wait.target
        if isinstance(target, TaskStatusTarget):
            if event.type is not EventType.TASK_STATUS_CHANGED or event.cursor <= wait.start_cursor:
                return None
            return task_status_outcome(target, TaskStatus(event.payload["to"]))
        if isinstance(target, EventTarget) and event_matches(wait, event):
            return WaitStatus.RESOLVED, event_result(event)
        return None

    async def _check_stored(self, wait: Wait) -> None:
        """Check an event-driven wait against the database: the status now, or events since its creation."""
        key = (wait.namespace, wait.id)
        target = wait.target
        outcome: tuple[WaitStatus, str] | None = None
        try:
            if isinstance(target, TaskStatusTarget):
                status = await self._storage.read(wait_store.task_status_of, wait.namespace, target.task_id)
                outcome = task_status_outcome(target, TaskStatus(status)) if status else None
            elif isinstance(target, EventTarget):
                event_filter = EventFilter(wait.namespace, frozenset({target.task_id}), frozenset({target.type}))
                after = wait.start_cursor
                while outcome is None and key in self._waits:
                    page = await self._storage.events.list(event_filter, after, _EVENT_PAGE)
                    match = next((e for e in page if event_matches(wait, e)), None)
                    if match is not None:
                        outcome = WaitStatus.RESOLVED, event_result(match)
                    if len(page) < _EVENT_PAGE:
                        break
                    after = page[-1].cursor
        except EventLogClosed:
            return
        if outcome is not None and key in self._waits:
            await self._finish(wait, *outcome)
