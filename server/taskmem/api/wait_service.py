"""WaitService: validate the request, write through store/waits/waits.py, hand the wait to the scheduler, convert."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

import grpc
from taskmem.api import validate, wait_convert
from taskmem.api.idempotent import write_once
from taskmem.api.list_page import SortKey, list_page
from taskmem.api.scope import current_scope
from taskmem.core.destinations import host_allowed, parse_allowed_hosts, port_refusal
from taskmem.core.errors import AdminRequired, InvalidArgument, NotConfigured
from taskmem.core.events import Event, EventFilter, EventType
from taskmem.core.ids import new_id
from taskmem.core.tasks import TaskStatus
from taskmem.core.waits import (
    POLLED, WAIT_EVENTS, EventTarget, ExternalKind, ExternalTarget, FileTarget, HttpTarget, TaskStatusTarget, Target,
    TimerTarget, Wait, WaitStatus, describe_target,
)
from taskmem.settings import WaitSettings
from taskmem.store.waits import waits as wait_store
from taskmem.store.storage import Storage
from taskmem.store.access import Transaction
from taskmem.v1 import event_pb2, task_pb2, wait_pb2, wait_service_pb2 as pb, wait_service_pb2_grpc
from taskmem.waits.file_access import WaitFileRoots
from taskmem.waits.scheduler import WaitScheduler

CRITERIA_MAX, TEXT_MATCH_MAX, FIELD_PATH_MAX, RESOLVER_MAX, URL_MAX, PATH_MAX = 1_000, 1_000, 200, 200, 2_048, 4_096
QUESTION_MAX = 2_000
STATUSES_MAX = 20
US = 1_000_000


@dataclasses.dataclass(frozen=True)
class _OneWait(EventFilter):
    """The change events of one wait."""

    wait_id: str = ""

    def matches(self, event: Event) -> bool:
        return super().matches(event) and event.payload.get("id") == self.wait_id


def _positive_duration(field: str, message: Any, present: bool, *, required: bool = False) -> int | None:
    if required and not present:
        raise InvalidArgument(field, "is required")
    us = validate.duration_us(field, message, present)
    if us is not None and us <= 0:
        raise InvalidArgument(field, "must be more than 0")
    return us


def _http_target(field: str, t: wait_pb2.HttpTarget, allowed_hosts: tuple[str, ...]) -> HttpTarget:
    url = validate.text(f"{field}.url", t.url, URL_MAX, required=True)
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        parts.port  # noqa: B018 (raises ValueError on a bad port)
    except ValueError as error:
        raise InvalidArgument(f"{field}.url", f"is not a valid URL: {error}") from None
    if parts.scheme not in ("http", "https") or not host:
        raise InvalidArgument(f"{field}.url", "must be an http or https URL with a host")
    if not allowed_hosts:
        raise NotConfigured("wait_http_allowed_hosts", "http waits are off until the hosts they may poll are listed")
    allowed = parse_allowed_hosts(allowed_hosts)
    if not host_allowed(host, allowed):
        raise InvalidArgument(f"{field}.url", f"host {host!r} is not in the server's wait_http_allowed_hosts"
                                              f" ({', '.join(allowed_hosts) or 'none'})")
    refusal = port_refusal(host, parts.port or (443 if parts.scheme == "https" else 80), allowed)
    if refusal:
        raise InvalidArgument(f"{field}.url", f"{refusal} in the server's wait_http_allowed_hosts")
    if t.expect_status and not 100 <= t.expect_status <= 599:
        raise InvalidArgument(f"{field}.expect_status", "must be an HTTP status code (100..599), or 0 for 200")
    return HttpTarget(url, t.expect_status or 200,
                      validate.text(f"{field}.body_contains", t.body_contains, TEXT_MATCH_MAX))


def _target(request: pb.CreateWaitRequest, settings: WaitSettings) -> Target:
    """The validated target of exactly one kind; errors name the field, for example "target.http.url"."""
    kind = request.target.WhichOneof("kind") if request.HasField("target") else None
    if kind is None:
        raise InvalidArgument("target", "is required: set one of timer, task_status, event, http, file, external")
    field, t = f"target.{kind}", request.target
    if kind == "timer":
        duration = _positive_duration(f"{field}.duration", t.timer.duration, t.timer.HasField("duration"),
                                      required=True)
        assert duration is not None
        return TimerTarget(duration)
    if kind == "task_status":
        validate.count(f"{field}.statuses", t.task_status.statuses, STATUSES_MAX, required=True)
        statuses = [validate.enum(f"{field}.statuses", s, task_pb2.TaskStatus, TaskStatus)
                    for s in dict.fromkeys(t.task_status.statuses)]
        if None in statuses:
            raise InvalidArgument(f"{field}.statuses", "TASK_STATUS_UNSPECIFIED is not a status")
        return TaskStatusTarget(validate.identifier(f"{field}.task_id", t.task_status.task_id),
                                [s for s in dict.fromkeys(statuses) if s is not None])
    if kind == "event":
        e = t.event
        event_type = validate.enum(f"{field}.type", e.type, event_pb2.EventType, EventType)
        if event_type is None:
            raise InvalidArgument(f"{field}.type", "is required")
        path = validate.text(f"{field}.payload_field", e.payload_field, FIELD_PATH_MAX)
        if path and not e.HasField("payload_value"):
            raise InvalidArgument(f"{field}.payload_value", "is required when payload_field is set")
        value = validate.value(f"{field}.payload_value", e.payload_value) if path else None
        return EventTarget(validate.identifier(f"{field}.task_id", e.task_id), event_type, path, value)
    if kind == "http":
        return _http_target(field, t.http, settings.http_allowed_hosts)
    if kind == "file":
        if not settings.file_roots:
            raise NotConfigured("wait_file_roots", "file waits are off until the folders they may read are listed")
        path = validate.text(f"{field}.path", t.file.path, PATH_MAX, required=True)
        if "\0" in path:
            raise InvalidArgument(f"{field}.path", "must not contain NUL")
        return FileTarget(path, validate.text(f"{field}.contains", t.file.contains, TEXT_MATCH_MAX))
    return _external_target(field, t.external, request.task_id)


def _external_target(field: str, t: wait_pb2.ExternalTarget, task_id: str) -> ExternalTarget:
    """A plain external wait, or a wait on a person (kind INPUT or AUTH: a task and a question required)."""
    resolver = validate.text(f"{field}.resolver", t.resolver, RESOLVER_MAX)
    kind = validate.enum(f"{field}.kind", t.kind, wait_pb2.ExternalWaitKind, ExternalKind) or ExternalKind.UNSPECIFIED
    if kind is ExternalKind.UNSPECIFIED:
        for name in ("question", "plan_item_id"):
            if getattr(t, name):
                raise InvalidArgument(f"{field}.{name}", "is only for a wait on a person (kind INPUT or AUTH)")
        return ExternalTarget(resolver)
    if not task_id:
        raise InvalidArgument("task_id", "is required for a wait on a person (the task that waits)")
    question = validate.text(f"{field}.question", t.question, QUESTION_MAX, required=True).strip()
    if not question:
        raise InvalidArgument(f"{field}.question", "is required")
    item_id = validate.identifier(f"{field}.plan_item_id", t.plan_item_id, required=False)
    return ExternalTarget(resolver, kind, question, item_id)


def _poll_interval_us(request: pb.CreateWaitRequest, target: Target, settings: WaitSettings) -> int | None:
    if not isinstance(target, POLLED):
        return None
    asked = _positive_duration("poll_interval", request.poll_interval, request.HasField("poll_interval"))
    seconds = asked / US if asked is not None else settings.default_poll_interval_seconds
    return int(max(seconds, settings.min_poll_interval_seconds) * US)


class WaitService(wait_service_pb2_grpc.WaitServiceServicer):
    def __init__(self, storage: Storage, scheduler: WaitScheduler, settings: WaitSettings,
                 file_roots: WaitFileRoots) -> None:
        self._storage = storage
        self._file_roots = file_roots
        self._scheduler = scheduler
        self._settings = settings

    async def CreateWait(self, request: pb.CreateWaitRequest, context: grpc.aio.ServicerContext) -> pb.CreateWaitResponse:
        task_id = validate.identifier("task_id", request.task_id, required=False)
        criteria = validate.text("criteria", request.criteria, CRITERIA_MAX).strip()
        target = _target(request, self._settings)
        timeout_us = _positive_duration("timeout", request.timeout, request.HasField("timeout"))
        poll_interval_us = _poll_interval_us(request, target, self._settings)
        created: list[Wait] = []

        def create(tx: Transaction) -> pb.CreateWaitResponse:
            wait = Wait(namespace=tx.namespace, id=new_id("wai"), criteria=criteria or describe_target(target),
                        target=target, created_at=tx.now, correlation_id=tx.correlation_id, task_id=task_id,
                        timeout_us=timeout_us, poll_interval_us=poll_interval_us)
            created.append(wait_store.create_wait(tx, wait, self._file_roots.of(tx.namespace).roots))
            return pb.CreateWaitResponse(wait=wait_convert.wait(wait))

        response = await write_once(self._storage, request, pb.CreateWaitResponse, create)
        for wait in created:  # none when a retried request_id returned the first response
            self._scheduler.track(wait)
        return response

    async def GetWait(self, request: pb.GetWaitRequest, context: grpc.aio.ServicerContext) -> pb.GetWaitResponse:
        wait_id = validate.identifier("wait_id", request.wait_id)
        wait = await self._storage.read(wait_store.load_wait, current_scope().namespace, wait_id)
        return pb.GetWaitResponse(wait=wait_convert.wait(wait))

    async def ListWaits(self, request: pb.ListWaitsRequest, context: grpc.aio.ServicerContext) -> pb.ListWaitsResponse:
        scope = current_scope()
        task_id = validate.identifier("task_id", request.task_id, required=False)
        wanted = sorted(validate.enum_filter("statuses", request.statuses, wait_pb2.WaitStatus, WaitStatus))
        page, token = await list_page(
            request, [task_id, wanted], SortKey((int, str), lambda w: [w.created_at, w.id]),
            lambda before, limit: self._storage.read(wait_store.list_waits, scope.namespace, task_id, wanted, before,
                                                     limit))
        return pb.ListWaitsResponse(waits=[wait_convert.wait(w) for w in page], next_page_token=token)

    async def CancelWait(self, request: pb.CancelWaitRequest, context: grpc.aio.ServicerContext) -> pb.CancelWaitResponse:
        wait_id = validate.identifier("wait_id", request.wait_id)
        reason = validate.text("reason", request.reason, CRITERIA_MAX).strip() or "cancelled by a caller"

        def cancel(tx: Transaction) -> pb.CancelWaitResponse:
            wait = wait_store.finish_wait(tx, wait_id, WaitStatus.CANCELLED, reason)
            return pb.CancelWaitResponse(wait=wait_convert.wait(wait))

        response = await write_once(self._storage, request, pb.CancelWaitResponse, cancel)
        self._scheduler.forget(current_scope().namespace, wait_id)
        return response

    async def ResolveWait(self, request: pb.ResolveWaitRequest,
                          context: grpc.aio.ServicerContext) -> pb.ResolveWaitResponse:
        scope = current_scope()
        wait_id = validate.identifier("wait_id", request.wait_id)
        result = validate.text("result", request.result, CRITERIA_MAX, required=True).strip()
        status = validate.enum("status", request.status, wait_pb2.WaitStatus, WaitStatus, WaitStatus.RESOLVED)
        if status not in (WaitStatus.RESOLVED, WaitStatus.FAILED):
            raise InvalidArgument("status", "must be WAIT_STATUS_RESOLVED or WAIT_STATUS_FAILED")
        # A wait's kind never changes, so reading it before the write is safe.
        wait = await self._storage.read(wait_store.load_wait, scope.namespace, wait_id)
        forced = not isinstance(wait.target, ExternalTarget)
        if forced and not self._settings.admin_keys_configured:
            raise NotConfigured("admin_keys", f"wait {wait_id} is a {wait.kind} wait; forcing it needs an admin key")
        if forced and not scope.admin:
            # Raised, not aborted here: GuardInterceptor aborts outside its except block with the request let go.
            raise AdminRequired(
                f"wait {wait_id} is a {wait.kind} wait, which resolves by itself; forcing it needs an admin key",
                field="wait_id")

        def resolve(tx: Transaction) -> pb.ResolveWaitResponse:
            ended = wait_store.finish_wait(tx, wait_id, status, result, forced=forced)
            return pb.ResolveWaitResponse(wait=wait_convert.wait(ended))

        response = await write_once(self._storage, request, pb.ResolveWaitResponse, resolve)
        self._scheduler.forget(scope.namespace, wait_id)
        return response

    async def WatchWait(self, request: pb.WatchWaitRequest,
                        context: grpc.aio.ServicerContext) -> AsyncIterator[pb.WatchWaitResponse]:
        scope = current_scope()
        wait_id = validate.identifier("wait_id", request.wait_id)
        read = self._storage.read
        # Watch first, then read: a change committed in between is in the row or wakes us.
        with self._storage.events.watch(_OneWait(scope.namespace, types=WAIT_EVENTS, wait_id=wait_id)) as changes:
            last: wait_pb2.Wait | None = None
            while True:
                wait = await read(wait_store.load_wait, scope.namespace, wait_id)
                current = wait_convert.wait(wait)
                if current != last:
                    yield pb.WatchWaitResponse(wait=current)
                    last = current
                if wait.status is not WaitStatus.WAITING:
                    return
                await changes.wait()
