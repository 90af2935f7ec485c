"""The webhook sender: POSTs each hooked task's events to its callback_url, in cursor order.

Why a delivery cursor rather than an outbox row per event: the event log is already the
durable, ordered record of what to send, written in the same transaction as each change.
An outbox row per event would add a write (and a task lookup) to every mutation's
transaction, hooked or not; a cursor per task costs nothing on the write path, and what
to send next is "the task's events after its cursor, of its selected types".

Per task, one event at a time: the next is sent only once the last was delivered (2xx) or
dead-lettered, so a receiver sees a task's events in cursor order. Tasks are served
concurrently (webhook_concurrency attempts at once). A failed attempt is stored before
the sender sleeps (attempts, last status, next attempt time), so a restart resumes the
back-off where it was; retries follow core.webhooks.RetryPolicy until
webhook_retry_period_seconds after the first attempt, then the event is dead-lettered
and the task's later events go on. Successes are stored in coalesced writes: after a
crash, a delivery whose success was not yet stored is sent again — with the same
webhook-id, which is the receiver's idempotency key (at-least-once).

Nothing is sent to a host outside webhook_allowed_hosts (empty by default: webhooks off);
such a task's events stay unsent, not dropped, until its host is allowed. A listed host on a
port not allowed, or whose name resolves to a loopback, private or link-local address that is
not itself listed, is refused at each attempt (last_error says why; see core.destinations).
Redirects are not followed (a 3xx is a failed attempt) and each attempt has a total deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from typing import Any
from urllib.parse import urlsplit

import httpx

from taskmem.api import task_convert
from taskmem.core.errors import StorageFull
from taskmem.core.events import Event, EventFilter
from taskmem.core.ids import now_us
from taskmem.core.destinations import host_allowed, parse_allowed_hosts
from taskmem.core.webhooks import (
    TASK_EVENTS, Delivery, DeliveryState, Hook, RetryPolicy, SigningSecrets, hook_from_task_payload, hook_of,
    is_success, request_body, signed_headers,
)
from taskmem.metrics import Metrics
from taskmem.outbound_http import GuardedTransport
from taskmem.settings import WebhookSettings
from taskmem.store.webhooks import webhooks as webhook_store
from taskmem.store.event_log import list_events
from taskmem.store.storage import Storage
from taskmem.store.storage import WriterClosed

log = logging.getLogger(__name__)

Key = tuple[str, str]  # (namespace, task id)
_PAGE = 200
_ANSWER_LIMIT = 64 * 1024
_LIVE_MAX = 1_000  # events buffered for a task that is behind; past this it reads the database again
_CORRELATION_ID = "webhooks"
# While the database's disk is full, a task's delivery (and the storing of successes) pauses this long,
# doubling up to the last figure, then resumes where it stopped: nothing sent is forgotten.
_FULL_FIRST_PAUSE_SECONDS = 0.5
_FULL_MAX_PAUSE_SECONDS = 30.0


@dataclasses.dataclass(frozen=True)
class _HookedTasks(EventFilter):
    """Matches, in every namespace, events that carry a task (a callback_url may appear) and any
    event of a hooked task."""

    hooks: dict[Key, Hook] = dataclasses.field(default_factory=dict, compare=False, hash=False)

    def matches(self, event: Event) -> bool:
        return event.type in TASK_EVENTS or (event.namespace, event.task_id) in self.hooks


class WebhookSender:
    def __init__(self, storage: Storage, settings: WebhookSettings, metrics: Metrics | None = None) -> None:
        self._storage = storage
        self._allowed_entries = settings.allowed_hosts
        self._allowed = parse_allowed_hosts(settings.allowed_hosts)
        self._policy = RetryPolicy(settings.backoff_initial_seconds, settings.backoff_max_seconds,
                                   settings.retry_period_seconds)
        self._attempt_timeout = settings.attempt_timeout_seconds
        self._slots = asyncio.Semaphore(settings.concurrency)
        self._metrics = metrics
        self._hooks: dict[Key, Hook] = {}
        self._refused: set[Key] = set()  # hooked to a host not allowed: logged once
        self._sent_up_to: dict[Key, int] = {}  # in memory: the last cursor each task's drain has passed
        # A task caught up with the database takes its next events from the watch instead of a read.
        self._live: dict[Key, list[Event]] = {}
        self._draining: dict[Key, asyncio.Task[None]] = {}
        self._more: set[Key] = set()  # new events arrived while draining
        self._finished: list[Delivery] = []  # delivered, not yet stored
        self._flush_signal = asyncio.Event()
        self._loops: list[asyncio.Task[None]] = []
        self._watch = contextlib.ExitStack()
        self._client: httpx.AsyncClient | None = None

    @property
    def enabled(self) -> bool:
        return bool(self._allowed)

    # --- life ---------------------------------------------------------------------------------

    async def start(self) -> None:
        """Watch the event log, load every hooked task and catch each one up."""
        if not self.enabled:
            return
        # Only allowed hosts, ports and resolved addresses, at the address checked (outbound_http); no proxies
        # from the environment, no redirects.
        self._client = httpx.AsyncClient(transport=GuardedTransport(self._allowed_entries, "webhook_allowed_hosts"),
                                         follow_redirects=False, trust_env=False)
        subscription = self._watch.enter_context(self._storage.events.watch(_HookedTasks("*", hooks=self._hooks)))
        await self._load_hooks()
        self._loops = [asyncio.create_task(self._follow(subscription), name="taskmem-webhook-events"),
                       asyncio.create_task(self._flush_loop(), name="taskmem-webhook-flush")]
        for key in list(self._hooks):
            self._kick(key)

    async def stop(self) -> None:
        """Stop sending; store what was delivered. Unsent events are sent after the next start."""
        tasks = [*self._loops, *self._draining.values()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._watch.close()
        with contextlib.suppress(WriterClosed):
            await self._flush()
        if self._client is not None:
            await self._client.aclose()

    # --- which tasks ----------------------------------------------------------------------------

    async def _load_hooks(self) -> None:
        for namespace, task_id, url, types in await self._storage.read(webhook_store.hooked_tasks):
            self._set_hook((namespace, task_id), hook_of(url, types))

    def _set_hook(self, key: Key, hook: Hook | None) -> None:
        if hook is not None and not host_allowed(urlsplit(hook.url).hostname or "", self._allowed):
            if key not in self._refused:
                self._refused.add(key)
                log.warning("task %s: callback_url host %r is not in webhook_allowed_hosts; its events are held",
                            key[1], urlsplit(hook.url).hostname)
            hook = None
        if hook is None:
            self._hooks.pop(key, None)
            self._live.pop(key, None)  # its events stop being buffered: read them from the database again
        else:
            self._refused.discard(key)
            if self._hooks.get(key) != hook:
                # New types may select events the buffer already passed over: read them from the database.
                self._live.pop(key, None)
            self._hooks[key] = hook

    async def _follow(self, subscription: Any) -> None:
        while True:
            event = await subscription.queue.get()
            if event is None:
                if subscription.closed:
                    return
                subscription.overflowed = False  # fell behind: reload from the database, look at every task
                self._live.clear()
                await self._load_hooks()
                for key in list(self._hooks):
                    self._kick(key)
                continue
            key = (event.namespace, event.task_id)
            if event.type in TASK_EVENTS:
                self._set_hook(key, hook_from_task_payload(event.payload))
            if key in self._hooks:
                live = self._live.get(key)
                if live is not None:
                    if len(live) < _LIVE_MAX:
                        live.append(event)
                    else:
                        del self._live[key]
                self._kick(key)

    def _kick(self, key: Key) -> None:
        if key in self._draining:
            self._more.add(key)
            return
        task = asyncio.create_task(self._drain(key), name=f"taskmem-webhook-{key[1]}")
        self._draining[key] = task
        task.add_done_callback(lambda _: self._draining.pop(key, None))

    # --- one task -----------------------------------------------------------------------------

    async def _drain(self, key: Key) -> None:
        """Send the task's events after its cursor until none is left; a full disk pauses it, not ends it."""
        pause = _FULL_FIRST_PAUSE_SECONDS
        while True:
            try:
                await self._drain_once(key)
                return
            except StorageFull as error:
                log.warning("webhook delivery of task %s paused for %.1f s: %s", key[1], pause,
                            error.metadata["detail"])
                self._sent_up_to.pop(key, None)  # read the stored position again: resume exactly there
                self._live.pop(key, None)
                await asyncio.sleep(pause)
                pause = min(pause * 2, _FULL_MAX_PAUSE_SECONDS)

    async def _drain_once(self, key: Key) -> None:
        namespace, task_id = key
        try:
            while True:
                self._more.discard(key)
                hook = self._hooks.get(key)
                if hook is None:
                    return
                if key not in self._sent_up_to:
                    delivered, pending = await self._storage.read(webhook_store.delivery_position, namespace, task_id)
                    self._sent_up_to[key] = delivered
                    if pending is not None:  # resume its back-off where the last run left it
                        await self._resume(pending)
                        self._sent_up_to[key] = pending.cursor
                        continue
                live = self._live.get(key)
                if live is not None:  # caught up: what the watch saw since is exactly what is left
                    self._live[key] = []
                    events = [e for e in live if e.cursor > self._sent_up_to[key] and e.type in hook.types]
                    caught_up = True
                else:
                    self._live[key] = []  # buffer from before the read: nothing can fall between the two
                    events = await self._storage.read(webhook_store.events_to_send, namespace, task_id,
                                                      self._sent_up_to[key], hook.types, _PAGE)
                    caught_up = len(events) < _PAGE
                    if not caught_up:
                        self._live.pop(key, None)
                for event in events:
                    if event.cursor <= self._sent_up_to[key]:
                        continue
                    await self._send(Delivery(namespace, task_id, event.cursor, event.type.value, hook.url), event)
                    self._sent_up_to[key] = event.cursor
                if caught_up and not self._live.get(key) and key not in self._more:
                    return
        except WriterClosed:
            pass  # shutting down: what is not stored is sent again after the next start
        except StorageFull:
            raise
        except Exception:
            log.exception("webhook delivery of task %s stopped; it resumes with the task's next event", task_id)
            self._sent_up_to.pop(key, None)
            self._live.pop(key, None)

    async def _resume(self, pending: Delivery) -> None:
        found = await self._storage.read(list_events, EventFilter(pending.namespace, frozenset({pending.task_id})),
                                         pending.cursor - 1, 1)
        if found and found[0].cursor == pending.cursor:
            await self._send(pending, found[0])

    async def _send(self, delivery: Delivery, event: Event) -> None:
        """Attempt until delivered or dead-lettered; each failure is stored before the back-off sleep."""
        key = (delivery.namespace, delivery.task_id)
        body = request_body(delivery.task_id, event.cursor, task_convert.event_json(event))
        while True:
            if delivery.next_attempt_at is not None:
                await asyncio.sleep(max(0.0, (delivery.next_attempt_at - now_us()) / 1_000_000))
            hook = self._hooks.get(key)
            if hook is None:  # callback_url cleared (or its host no longer allowed) while retrying
                delivery.last_attempt_at = delivery.last_attempt_at or now_us()
                delivery.first_attempt_at = delivery.first_attempt_at or delivery.last_attempt_at
                await self._store_failure(delivery, DeliveryState.DEAD_LETTERED, 0, "callback_url was removed")
                return
            delivery.url = hook.url
            secrets = await self._signing_secrets(delivery.namespace)
            async with self._slots:
                started = now_us()
                status, error = await self._post(delivery.url, signed_headers(
                    secrets.signing(started), event.cursor, started // 1_000_000, body), body)
            delivery.attempts += 1
            delivery.first_attempt_at = delivery.first_attempt_at or started
            delivery.last_attempt_at = started
            if is_success(status):
                delivery.state, delivery.last_status_code, delivery.last_error = DeliveryState.DELIVERED, status, ""
                delivery.next_attempt_at = None
                self._count("delivered")
                self._finished.append(delivery)
                self._flush_signal.set()
                return
            delivery.next_attempt_at = self._policy.next_attempt_at(delivery.first_attempt_at, delivery.attempts,
                                                                    now_us())
            if delivery.next_attempt_at is None:
                await self._store_failure(delivery, DeliveryState.DEAD_LETTERED, status, error)
                log.warning("webhook for task %s event %d dead-lettered after %d attempts: %s", delivery.task_id,
                            delivery.cursor, delivery.attempts, error)
                return
            await self._store_failure(delivery, DeliveryState.PENDING, status, error)

    async def _store_failure(self, delivery: Delivery, state: str, status: int, error: str) -> None:
        delivery.state, delivery.last_status_code, delivery.last_error = state, status, error
        if state == DeliveryState.DEAD_LETTERED:
            delivery.next_attempt_at = None
        self._count("dead_lettered" if state == DeliveryState.DEAD_LETTERED else "failed")
        # The successes before it go in the same write, so the stored cursor never passes a gap.
        batch, self._finished = [*self._finished, delivery], []
        await self._storage.write(lambda tx: webhook_store.save_attempts(tx, batch), delivery.namespace,
                                  _CORRELATION_ID)

    async def _post(self, url: str, headers: dict[str, str], body: bytes) -> tuple[int, str]:
        """(HTTP status, why it failed); status 0 when there was no answer."""
        assert self._client is not None
        started = time.perf_counter()
        try:
            async with asyncio.timeout(self._attempt_timeout):
                async with self._client.stream("POST", url, content=body, headers=headers,
                                               timeout=self._attempt_timeout) as response:
                    # The answer's body means nothing to us: read a little (so the connection can be
                    # reused), never all of what a receiver might send.
                    read = 0
                    async for chunk in response.aiter_raw():
                        read += len(chunk)
                        if read > _ANSWER_LIMIT:
                            break
        except TimeoutError:
            return 0, f"no answer within {self._attempt_timeout} s"
        except httpx.HTTPError as error:
            return 0, f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        finally:
            if self._metrics is not None:
                self._metrics.webhook_seconds.observe(time.perf_counter() - started)
        if is_success(response.status_code):
            return response.status_code, ""
        if response.is_redirect:
            return response.status_code, f"HTTP {response.status_code}: redirects are not followed"
        return response.status_code, f"HTTP {response.status_code}"

    async def _signing_secrets(self, namespace: str) -> SigningSecrets:
        """Read at each attempt, not kept: a rotation (on any replica) signs the very next attempt."""
        found = await self._storage.read(webhook_store.signing_secrets, namespace)
        if found is None:
            found = SigningSecrets(await self._storage.write(webhook_store.ensure_secret, namespace, _CORRELATION_ID))
        return found

    def _count(self, outcome: str) -> None:
        if self._metrics is not None:
            self._metrics.webhook_deliveries.labels(outcome).inc()

    # --- storing successes ------------------------------------------------------------------------

    async def _flush_loop(self) -> None:
        pause = _FULL_FIRST_PAUSE_SECONDS
        while True:
            await self._flush_signal.wait()
            self._flush_signal.clear()
            try:
                await self._flush()
                pause = _FULL_FIRST_PAUSE_SECONDS
            except WriterClosed:
                return
            except StorageFull as error:  # the successes were put back: stored once there is room
                log.warning("storing webhook deliveries paused for %.1f s: %s", pause, error.metadata["detail"])
                await asyncio.sleep(pause)
                pause = min(pause * 2, _FULL_MAX_PAUSE_SECONDS)
                self._flush_signal.set()
            except Exception:
                log.exception("storing webhook deliveries failed; they may be sent again after a restart")

    async def _flush(self) -> None:
        batch, self._finished = self._finished, []
        if batch:
            try:
                await self._storage.write(lambda tx: webhook_store.save_attempts(tx, batch), batch[0].namespace,
                                          _CORRELATION_ID)
            except StorageFull:
                self._finished = [*batch, *self._finished]
                raise

