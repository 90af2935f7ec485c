"""TaskService: validate the request, run the core/store operation, convert the result."""

from __future__ import annotations

import collections
import json
import dataclasses
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc

from taskmem.api import task_convert, validate
from taskmem.api.idempotent import write_once
from taskmem.api.list_page import SortKey, list_page
from taskmem.api.scope import AGENT_ID_MAX, CallScope, current_scope
from taskmem.core import claims
from taskmem.core.actions import Action, ActionStatus, ActionType, Completion
from taskmem.core.errors import InvalidArgument, NotFound, OutOfRange
from taskmem.core.events import Event, EventFilter, EventType
from taskmem.core.ids import is_id_of, new_id, now_us
from taskmem.core.messages import ContextSnapshot, Kind, Message, NewSessionItem, Role
from taskmem.core.plans import ITEM_AWAITING_PERSON, SUMMARY_MAX, ItemStatus, PlanItem, validate_plan
from taskmem.core.retention import Cap as RetentionCap
from taskmem.core.retention import Retention, check_expiry, message_capped
from taskmem.core.tasks import (
    SERVER_METADATA_KEYS, UPDATABLE_FIELDS, ApprovalMode, ErrorSummary, MetadataChange, Task, TaskStatus,
    client_metadata,
)
from taskmem.core.webhooks import DeliveryState, secret_overlap_us
from taskmem.plan_judge import PlanJudge
from taskmem.store import retention_caps
from taskmem.store.tasks import actions as action_store
from taskmem.store.tasks import forks as fork_store
from taskmem.store.tasks import messages as message_store
from taskmem.store.tasks import plan_claims as claim_store
from taskmem.store.tasks import plan_progress
from taskmem.store.tasks import task_access
from taskmem.store.tasks import session_items as session_store
from taskmem.store.state.view_reads import task_progress
from taskmem.store.tasks import tasks as task_store
from taskmem.store.usage import model_calls
from taskmem.store.webhooks import webhooks as webhook_store
from taskmem.store.storage import Storage
from taskmem.store.access import Transaction
from taskmem.v1 import event_pb2, task_pb2, task_service_pb2 as pb, task_service_pb2_grpc, webhook_pb2


NAME_MAX, GOAL_MAX, TITLE_MAX, NARRATIVE_MAX = 200, 20_000, 500, 5_000
PLAN_MAX, DEPENDS_MAX, LOG_LINES_MAX, STREAM_MAX = 500, 50, 1_000, 32
SUMMARY_ACTION_MAX, ERROR_MAX, CONTENT_MAX, LINE_MAX = 1_000, 100_000, 100_000, 65_536
ANSWER_MAX, SNAPSHOT_MAX, LABEL_MAX, PATH_MAX, FILTER_MAX = 1_000_000, 1_000_000, 100, 4_096, 100
KEY_MAX = 200
KEY_ID_MAX = 64
SESSION_ADD_MAX, SESSION_LIST_MAX, SESSION_ITEM_MAX = 100, 10_000, 1 << 20


def _plan_items(field: str, specs: Any) -> list[PlanItem]:
    validate.count(field, specs, PLAN_MAX)
    items = []
    for position, spec in enumerate(specs):
        at = f"{field}[{position}]"
        validate.identifier(f"{at}.id", spec.id)
        validate.count(f"{at}.depends_on", spec.depends_on, DEPENDS_MAX)
        for dependency in spec.depends_on:
            validate.identifier(f"{at}.depends_on", dependency)
        items.append(PlanItem(
            id=spec.id, ordinal=position, stage=validate.text(f"{at}.stage", spec.stage, NAME_MAX),
            title=validate.text(f"{at}.title", spec.title, TITLE_MAX, required=True),
            depends_on=list(spec.depends_on), tool_name=validate.text(f"{at}.tool_name", spec.tool_name, NAME_MAX),
            input=validate.struct(f"{at}.input", spec.input, spec.HasField("input")),
            narrative=validate.text(f"{at}.narrative", spec.narrative, NARRATIVE_MAX),
        ))
    validate_plan(items, field)
    return items


def _task_changes(request: pb.UpdateTaskRequest) -> dict[str, Any]:
    """The validated new values of the fields named by update_mask (or set in task, when it is empty)."""
    t = request.task
    paths = list(request.update_mask.paths) or [
        f.name for f, _ in t.ListFields() if f.name in UPDATABLE_FIELDS]
    if not paths:
        raise InvalidArgument("update_mask", "names no field to change")
    changes: dict[str, Any] = {}
    metadata_paths = [path for path in paths if path == "metadata" or path.startswith("metadata.")]
    if metadata_paths:
        changes["metadata"] = _metadata_change(t, metadata_paths)
    for path in paths:
        if path in metadata_paths:
            continue
        if path not in UPDATABLE_FIELDS:
            raise InvalidArgument("update_mask", f"{path!r} cannot be updated; one of {sorted(UPDATABLE_FIELDS)}")
        field = f"task.{path}"
        if path == "status":
            changes[path] = validate.enum(field, t.status, task_pb2.TaskStatus, TaskStatus)
            if changes[path] is None:
                raise InvalidArgument(field, "is required when named in update_mask")
        elif path == "approval_mode":
            changes[path] = validate.enum(field, t.approval_mode, task_pb2.ApprovalMode, ApprovalMode,
                                          ApprovalMode.AUTO)
        elif path == "context":
            changes[path] = validate.struct(field, t.context, t.HasField(path))
        elif path == "error_summary":
            e = t.error_summary
            changes[path] = ErrorSummary(validate.text(f"{field}.failed_stage", e.failed_stage, NAME_MAX),
                                         validate.text(f"{field}.failed_step", e.failed_step, NARRATIVE_MAX),
                                         validate.text(f"{field}.message", e.message, ERROR_MAX))
        elif path == "callback_url":
            changes[path] = validate.url(field, t.callback_url)
        elif path == "plan_inference_disabled":
            changes[path] = t.plan_inference_disabled
        elif path == "webhook_event_types":
            changes[path] = _webhook_event_types(field, t.webhook_event_types)
        else:
            limits = {"name": NAME_MAX, "goal": GOAL_MAX, "workspace": PATH_MAX, "final_answer": ANSWER_MAX}
            changes[path] = validate.text(field, getattr(t, path), limits[path], required=path == "name")
    return changes


def _session_items(request: pb.AddSessionItemsRequest) -> list[NewSessionItem]:
    validate.count("items", request.items, SESSION_ADD_MAX, required=True)
    items = []
    for position, spec in enumerate(request.items):
        at = f"items[{position}]"
        role = validate.enum(f"{at}.role", spec.role, task_pb2.MessageRole, Role)
        if role is None:
            raise InvalidArgument(f"{at}.role", "is required")
        if len(spec.item_json.encode()) > SESSION_ITEM_MAX:
            raise InvalidArgument(f"{at}.item_json", f"is larger than {SESSION_ITEM_MAX} bytes")
        try:
            parsed = json.loads(spec.item_json)
        except ValueError as error:
            raise InvalidArgument(f"{at}.item_json", f"is not JSON: {error}") from None
        if not isinstance(parsed, dict):
            raise InvalidArgument(f"{at}.item_json", "is not a JSON object")
        items.append(NewSessionItem(role, validate.text(f"{at}.content", spec.content, CONTENT_MAX,
                                                                      required=True), spec.item_json))
    return items


def _webhook_event_types(field: str, types: Any) -> list[str]:
    return sorted(k.value for k in validate.enum_filter(field, types, event_pb2.EventType, EventType))
def _metadata_change(t: task_pb2.Task, paths: list[str]) -> MetadataChange:
    """update_mask "metadata" replaces the client's keys; "metadata.<key>" sets or (absent) removes one key."""
    metadata = validate.struct("task.metadata", t.metadata, t.HasField("metadata"))
    replacement = metadata if "metadata" in paths else None
    keys = [path.removeprefix("metadata.") for path in paths if path != "metadata"]
    for key in keys:
        if not key or "." in key or len(key) > KEY_MAX:
            raise InvalidArgument("update_mask", f"metadata.{key}: name one top-level key of at most {KEY_MAX}"
                                                 " characters, without dots")
        if key in SERVER_METADATA_KEYS:
            raise InvalidArgument("update_mask", f"metadata.{key} is kept by the server; clients cannot change it")
    return MetadataChange(replacement, {key: metadata[key] for key in keys if key in metadata},
                          frozenset(key for key in keys if key not in metadata))


def _event_filter(scope: CallScope, task_ids: Any, types: Any, key_ids: Any, agent_ids: Any) -> EventFilter:
    validate.count("key_ids", key_ids, FILTER_MAX)
    validate.count("agent_ids", agent_ids, FILTER_MAX)
    for key_id in key_ids:
        validate.text("key_ids", key_id, KEY_ID_MAX, required=True)
    for agent_id in agent_ids:
        validate.text("agent_ids", agent_id, AGENT_ID_MAX, required=True)
    validate.count("task_ids", task_ids, FILTER_MAX)
    for task_id in task_ids:
        validate.identifier("task_ids", task_id)
        if not is_id_of("tsk", task_id):  # no task can have it, so a stream of it would wait forever
            raise InvalidArgument("task_ids", f"{task_id!r} is not a task id (tsk_ and 24 hex digits)")
    kinds = validate.enum_filter("types", types, event_pb2.EventType, EventType)
    return EventFilter(scope.namespace, frozenset(task_ids), frozenset(kinds), frozenset(key_ids), frozenset(agent_ids))


class TaskService(task_service_pb2_grpc.TaskServiceServicer):
    def __init__(self, storage: Storage, retention: Retention = Retention(),
                 budget_tokens: Callable[[str], int | None] = lambda namespace: None,
                 judge: PlanJudge | None = None) -> None:
        self._storage = storage
        self._judge = judge  # answers "may be finished" questions when a model is configured (plan_judge)
        self._retention = retention  # the configured TTLs, stamped on the messages PostMessage writes
        self._budget_tokens = budget_tokens  # a namespace's model token budget (None: it has none)
        self._event_replies = _EventReplies()

    # --- tasks -------------------------------------------------------------------------------

    async def CreateTask(self, request: pb.CreateTaskRequest, context: grpc.aio.ServicerContext) -> pb.CreateTaskResponse:
        items = _plan_items("plan", request.plan)
        fields = dict(
            name=validate.text("name", request.name, NAME_MAX, required=True),
            goal=validate.text("goal", request.goal, GOAL_MAX),
            workspace=validate.text("workspace", request.workspace, PATH_MAX),
            context=validate.struct("context", request.context, request.HasField("context")),
            metadata=client_metadata(validate.struct("metadata", request.metadata, request.HasField("metadata"))),
            approval_mode=validate.enum("approval_mode", request.approval_mode, task_pb2.ApprovalMode,
                                        ApprovalMode, ApprovalMode.AUTO),
            callback_url=validate.url("callback_url", request.callback_url),
            plan_inference_disabled=request.plan_inference_disabled,
            webhook_event_types=_webhook_event_types("webhook_event_types", request.webhook_event_types),
        )

        def create(tx: Transaction) -> pb.CreateTaskResponse:
            task = Task(namespace=tx.namespace, id=new_id("tsk"), status=TaskStatus.PENDING,
                        created_at=tx.now, updated_at=tx.now, **fields)  # type: ignore[arg-type]
            task, plan = task_store.create_task(tx, task, items)
            return pb.CreateTaskResponse(task=task_convert.task(task), plan=task_convert.plan(plan))

        return await write_once(self._storage, request, pb.CreateTaskResponse, create)

    async def GetTask(self, request: pb.GetTaskRequest, context: grpc.aio.ServicerContext) -> bytes:
        """The reply serialized (GuardInterceptor sends bytes as they are): kept so until the task changes."""
        scope = current_scope()
        key = (scope.namespace, validate.identifier("task_id", request.task_id))
        views = self._storage.task_views
        cached = await self._storage.views_current()
        response: bytes | None = views.get(key) if cached else None
        if response is None:
            epoch = views.epoch
            task, plan = await self._storage.read(task_store.load_task_with_plan, *key, 0)
            response = pb.GetTaskResponse(task=task_convert.task(task), plan=task_convert.plan(plan)).SerializeToString()
            if cached:
                views.put(key, epoch, response)
        return response

    async def ListTasks(self, request: pb.ListTasksRequest, context: grpc.aio.ServicerContext) -> pb.ListTasksResponse:
        scope = current_scope()
        wanted = validate.enum_filter("statuses", request.statuses, task_pb2.TaskStatus, TaskStatus)
        updated_after = validate.timestamp_us("updated_after", request.updated_after,
                                              request.HasField("updated_after"))
        awaiting = request.awaiting_person
        task_scope = scope.key.scope if scope.key is not None else None

        async def read(after: list[Any] | None, limit: int) -> list[Task]:
            if task_scope is None:
                return await self._storage.read(task_store.list_tasks, scope.namespace, wanted, updated_after,
                                                after, limit, awaiting)
            return await self._storage.read(task_access.visible_tasks, scope.namespace, wanted, updated_after,
                                            after, limit, awaiting, task_scope, scope.key_id)

        page, token = await list_page(  # the filter without awaiting_person binds tokens as before it existed
            request, [sorted(wanted), updated_after, *([awaiting] if awaiting else [])], SortKey((int, str), lambda t: [t.updated_at, t.id]),
            read)
        return pb.ListTasksResponse(tasks=[task_convert.task(t) for t in page], next_page_token=token)

    async def UpdateTask(self, request: pb.UpdateTaskRequest, context: grpc.aio.ServicerContext) -> pb.UpdateTaskResponse:
        task_id = validate.identifier("task.id", request.task.id)
        changes = _task_changes(request)

        def update(tx: Transaction) -> pb.UpdateTaskResponse:
            task = task_store.update_task(tx, task_id, changes, request.task.etag)
            return pb.UpdateTaskResponse(task=task_convert.task(task))

        return await write_once(self._storage, request, pb.UpdateTaskResponse, update)

    async def ForkTask(self, request: pb.ForkTaskRequest, context: grpc.aio.ServicerContext) -> pb.ForkTaskResponse:
        task_id = validate.identifier("task_id", request.task_id)
        cursor = validate.non_negative("at_cursor", request.at_cursor, 2**63 - 1)
        name = validate.text("name", request.name, NAME_MAX)

        def fork(tx: Transaction) -> pb.ForkTaskResponse:
            task, plan = fork_store.fork_task(tx, task_id, cursor, name, NAME_MAX)
            return pb.ForkTaskResponse(task=task_convert.task(task), plan=task_convert.plan(plan))

        return await write_once(self._storage, request, pb.ForkTaskResponse, fork)

    # --- plans -------------------------------------------------------------------------------

    async def ReplacePlan(self, request: pb.ReplacePlanRequest, context: grpc.aio.ServicerContext) -> pb.ReplacePlanResponse:
        task_id = validate.identifier("task_id", request.task_id)
        validate.count("items", request.items, PLAN_MAX, required=True)
        items = _plan_items("items", request.items)
        reason = validate.text("reason", request.reason, NARRATIVE_MAX)

        def replace(tx: Transaction) -> pb.ReplacePlanResponse:
            return pb.ReplacePlanResponse(plan=task_convert.plan(task_store.replace_plan(tx, task_id, items, reason)))

        return await write_once(self._storage, request, pb.ReplacePlanResponse, replace)

    async def GetPlan(self, request: pb.GetPlanRequest, context: grpc.aio.ServicerContext) -> pb.GetPlanResponse:
        scope = current_scope()
        task_id = validate.identifier("task_id", request.task_id)
        version = validate.non_negative("version", request.version)
        task, plan = await self._storage.read(task_store.load_task_with_plan, scope.namespace, task_id, version)
        if plan is None:
            raise NotFound("plan version", f"{task.id}/{version or task.plan_version}")
        return pb.GetPlanResponse(plan=task_convert.plan(plan))

    async def UpdatePlanItem(self, request: pb.UpdatePlanItemRequest,
                             context: grpc.aio.ServicerContext) -> pb.UpdatePlanItemResponse:
        task_id = validate.identifier("task_id", request.task_id)
        item_id = validate.identifier("item_id", request.item_id)
        status = validate.enum("status", request.status, task_pb2.PlanItemStatus, ItemStatus)
        if status in ITEM_AWAITING_PERSON:
            raise InvalidArgument("status", f"{status.name} is entered only by a wait on a person"
                                            " (WaitService.CreateWait, target.external.plan_item_id)")
        summary = validate.text("summary", request.summary, SUMMARY_MAX) if request.HasField("summary") else None
        issue = validate.text("active_issue", request.active_issue, NARRATIVE_MAX) \
            if request.HasField("active_issue") else None
        if status is None and summary is None and issue is None and not request.dismiss_question:
            raise InvalidArgument("status", "nothing to change: set status, summary, active_issue or dismiss_question")
        holder = validate.identifier("holder_id", request.holder_id, required=False)

        def update(tx: Transaction) -> pb.UpdatePlanItemResponse:
            item = claim_store.update_plan_item(tx, task_id, item_id, status, summary, issue, holder,
                                                request.dismiss_question)
            return pb.UpdatePlanItemResponse(item=task_convert.plan_item(item))

        return await write_once(self._storage, request, pb.UpdatePlanItemResponse, update)

    # --- claims ------------------------------------------------------------------------------

    async def ClaimPlanItem(self, request: pb.ClaimPlanItemRequest,
                            context: grpc.aio.ServicerContext) -> pb.ClaimPlanItemResponse:
        task_id = validate.identifier("task_id", request.task_id)
        holder = validate.identifier("holder_id", request.holder_id)
        lease = claims.lease_us("lease", validate.duration_us("lease", request.lease, request.HasField("lease")))
        validate.count("stages", request.stages, FILTER_MAX)
        validate.count("tool_names", request.tool_names, FILTER_MAX)
        wanted = claims.ClaimFilter(validate.identifier("item_id", request.item_id, required=False),
                                    frozenset(request.stages), frozenset(request.tool_names))

        def claim(tx: Transaction) -> pb.ClaimPlanItemResponse:
            item, lease_held, remaining = claim_store.claim_plan_item(tx, task_id, holder, lease, wanted)
            if item is None or lease_held is None:
                return pb.ClaimPlanItemResponse(remaining_count=remaining)
            return pb.ClaimPlanItemResponse(item=task_convert.plan_item(item), claim=task_convert.claim(lease_held),
                                            remaining_count=remaining)

        return await write_once(self._storage, request, pb.ClaimPlanItemResponse, claim)

    async def RenewClaim(self, request: pb.RenewClaimRequest, context: grpc.aio.ServicerContext) -> pb.RenewClaimResponse:
        task_id = validate.identifier("task_id", request.task_id)
        item_id = validate.identifier("item_id", request.item_id)
        holder = validate.identifier("holder_id", request.holder_id)
        lease = claims.lease_us("lease", validate.duration_us("lease", request.lease, request.HasField("lease")))
        scope = current_scope()
        renewed = await self._storage.write(
            lambda tx: claim_store.renew_claim(tx, task_id, item_id, holder, lease), scope.namespace,
            scope.correlation_id)
        return pb.RenewClaimResponse(claim=task_convert.claim(renewed))

    async def ReleaseClaim(self, request: pb.ReleaseClaimRequest,
                           context: grpc.aio.ServicerContext) -> pb.ReleaseClaimResponse:
        task_id = validate.identifier("task_id", request.task_id)
        item_id = validate.identifier("item_id", request.item_id)
        holder = validate.identifier("holder_id", request.holder_id)

        def release(tx: Transaction) -> pb.ReleaseClaimResponse:
            item = claim_store.release_claim(tx, task_id, item_id, holder)
            return pb.ReleaseClaimResponse(item=task_convert.plan_item(item))

        return await write_once(self._storage, request, pb.ReleaseClaimResponse, release)

    # --- actions -----------------------------------------------------------------------------

    async def RecordAction(self, request: pb.RecordActionRequest,
                           context: grpc.aio.ServicerContext) -> pb.RecordActionResponse:
        task_id = validate.identifier("task_id", request.task_id)
        status = validate.enum("status", request.status, task_pb2.ActionStatus, ActionStatus, ActionStatus.RUNNING)
        assert status is not None
        fields = dict(
            plan_item_id=validate.identifier("plan_item_id", request.plan_item_id, required=False),
            type=validate.enum("type", request.type, task_pb2.ActionType, ActionType, ActionType.OTHER),
            tool_name=validate.text("tool_name", request.tool_name, NAME_MAX),
            summary=validate.text("summary", request.summary, SUMMARY_ACTION_MAX, required=True),
            input=validate.struct("input", request.input, request.HasField("input")),
            output=validate.struct("output", request.output, request.HasField("output")),
            error=validate.text("error", request.error, ERROR_MAX),
            duration_us=validate.duration_us("duration", request.duration, request.HasField("duration")),
            tokens_in=validate.non_negative("tokens_in", request.tokens_in),
            tokens_out=validate.non_negative("tokens_out", request.tokens_out),
        )

        def record(tx: Transaction) -> pb.RecordActionResponse:
            action = Action(namespace=tx.namespace, id=new_id("act"), task_id=task_id, status=status,
                            created_at=tx.now, completed_at=None if status is ActionStatus.RUNNING else tx.now,
                            **fields)  # type: ignore[arg-type]
            return pb.RecordActionResponse(action=task_convert.action(action_store.record_action(tx, action)))

        return await write_once(self._storage, request, pb.RecordActionResponse, record)

    async def CompleteAction(self, request: pb.CompleteActionRequest,
                             context: grpc.aio.ServicerContext) -> pb.CompleteActionResponse:
        action_id = validate.identifier("action_id", request.action_id)
        status = validate.enum("status", request.status, task_pb2.ActionStatus, ActionStatus)
        if status is None or status is ActionStatus.RUNNING:
            raise InvalidArgument("status", "must be SUCCEEDED, FAILED or SKIPPED")
        completion = Completion(
            status=status, output=validate.struct("output", request.output, request.HasField("output")),
            error=validate.text("error", request.error, ERROR_MAX),
            duration_us=validate.duration_us("duration", request.duration, request.HasField("duration")),
            tokens_in=validate.non_negative("tokens_in", request.tokens_in),
            tokens_out=validate.non_negative("tokens_out", request.tokens_out),
        )

        def complete(tx: Transaction) -> pb.CompleteActionResponse:
            action = action_store.finish_action(tx, action_id, completion)
            return pb.CompleteActionResponse(action=task_convert.action(action))

        return await write_once(self._storage, request, pb.CompleteActionResponse, complete)

    async def ListActions(self, request: pb.ListActionsRequest,
                          context: grpc.aio.ServicerContext) -> pb.ListActionsResponse:
        scope = current_scope()
        task_id = validate.identifier("task_id", request.task_id)
        item_id = validate.identifier("plan_item_id", request.plan_item_id, required=False)
        wanted = sorted(validate.enum_filter("statuses", request.statuses, task_pb2.ActionStatus, ActionStatus),
                        key=lambda s: s.value)
        page, token = await list_page(
            request, [task_id, item_id, [s.value for s in wanted]], SortKey((int, str), lambda a: [a.created_at, a.id]),
            lambda after, limit: self._storage.read(fork_store.list_task_actions, scope.namespace, task_id, item_id,
                                                    after, limit, wanted))
        return pb.ListActionsResponse(actions=[task_convert.action(a) for a in page], next_page_token=token)

    async def AppendActionLog(self, request: pb.AppendActionLogRequest,
                              context: grpc.aio.ServicerContext) -> pb.AppendActionLogResponse:
        action_id = validate.identifier("action_id", request.action_id)
        validate.count("lines", request.lines, LOG_LINES_MAX, required=True)
        lines = [(validate.text(f"lines[{i}].stream", line.stream, STREAM_MAX) or "stdout",
                  validate.text(f"lines[{i}].content", line.content, LINE_MAX))
                 for i, line in enumerate(request.lines)]

        def append(tx: Transaction) -> pb.AppendActionLogResponse:
            first, last = action_store.append_log(tx, action_id, lines)
            return pb.AppendActionLogResponse(first_sequence=first, last_sequence=last)

        return await write_once(self._storage, request, pb.AppendActionLogResponse, append)

    async def TailActionLog(self, request: pb.TailActionLogRequest,
                            context: grpc.aio.ServicerContext) -> AsyncIterator[pb.TailActionLogResponse]:
        scope = current_scope()
        action_id = validate.identifier("action_id", request.action_id)
        after = validate.non_negative("after_sequence", request.after_sequence)
        read = self._storage.read
        action = await read(action_store.load_action, scope.namespace, action_id)
        event_filter = EventFilter(scope.namespace, frozenset({action.task_id}),
                                   frozenset({EventType.ACTION_LOG_APPENDED, EventType.ACTION_COMPLETED}))
        # Watch first, then read: a line appended in between is in the table or wakes us.
        with self._storage.events.watch(event_filter) as changes:
            while True:
                # A running action's lines never expire; a finished one's past the namespace's TTL have.
                finished = action.status is not ActionStatus.RUNNING
                cutoff = self._retention.log_cutoff(scope.namespace, now_us()) if finished else None
                lines = await read(action_store.list_log_lines, scope.namespace, action_id, after, 500, cutoff)
                for line in lines:
                    after = line.sequence
                    yield pb.TailActionLogResponse(line=task_convert.log_line(line))
                if finished and len(lines) < 500:
                    return  # a finished action gets no more lines: every unexpired one has been sent
                action = await read(action_store.load_action, scope.namespace, action_id)
                if action.status is not ActionStatus.RUNNING and after >= action.log_lines:
                    return
                if after >= action.log_lines:
                    await changes.wait()

    # --- transcript and snapshots ------------------------------------------------------------

    async def PostMessage(self, request: pb.PostMessageRequest,
                          context: grpc.aio.ServicerContext) -> pb.PostMessageResponse:
        thread_id = validate.thread(request.task_id, request.thread_id)
        role = validate.enum("role", request.role, task_pb2.MessageRole, Role)
        if role is None:
            raise InvalidArgument("role", "is required")
        kind = validate.enum("kind", request.kind, task_pb2.MessageKind, Kind, Kind.TEXT)
        content = validate.text("content", request.content, CONTENT_MAX, required=True)
        expires_at = validate.timestamp_us("expire_time", request.expire_time, request.HasField("expire_time"))
        check_expiry("expire_time", expires_at, request.pinned, now_us())

        def post(tx: Transaction) -> pb.PostMessageResponse:
            expiry = self._retention.message_expiry(tx.namespace, kind, expires_at, request.pinned,  # type: ignore[arg-type]
                                                    tx.now)
            message = Message(tx.namespace, new_id("msg"), thread_id, role, kind, content,  # type: ignore[arg-type]
                              tx.now, request.task_id, expiry)
            message = message_store.post_message(tx, message, message_capped(kind, request.pinned))  # type: ignore[arg-type]
            if message.id in retention_caps.enforce_cap(tx, "messages",
                                                        self._retention.cap(tx.namespace, RetentionCap.MESSAGES)):
                message = dataclasses.replace(message, expires_at=tx.now)
            inferred = plan_progress.infer_plan_progress(tx, message)
            return pb.PostMessageResponse(message=task_convert.message(message),
                                          inferred_items=[task_convert.plan_item(i) for i in inferred.completed],
                                          plan_item_questions=[task_convert.step_question(i) for i in inferred.asked])

        response = await write_once(self._storage, request, pb.PostMessageResponse, post)
        if self._judge is not None and response.plan_item_questions:
            await self._settle_questions(response, role)
        return response

    async def _settle_questions(self, response: pb.PostMessageResponse, role: Role) -> None:
        """The configured model answers the message's "may be finished" questions (plan_judge); the response
        then lists the items it completed and only the questions it left open."""
        assert self._judge is not None
        scope, message = current_scope(), response.message
        asked = [(q.item_id, q.evidence, q.reason) for q in response.plan_item_questions]
        said_by = "user" if role is Role.USER else "agent"
        completed, settled = await self._judge.settle(self._storage, scope.namespace, scope.correlation_id,
                                                      message.task_id, message.id, message.content, said_by, asked)
        response.inferred_items.extend(task_convert.plan_item(i) for i in completed)
        open_questions = [q for q in response.plan_item_questions if q.item_id not in settled]
        del response.plan_item_questions[:]
        response.plan_item_questions.extend(open_questions)

    # --- session items (a framework's conversation in the transcript) ------------------------------

    async def AddSessionItems(self, request: pb.AddSessionItemsRequest,
                              context: grpc.aio.ServicerContext) -> pb.AddSessionItemsResponse:
        task_id = validate.identifier("task_id", request.task_id)
        items = _session_items(request)

        def add(tx: Transaction) -> pb.AddSessionItemsResponse:
            stored = session_store.add_items(tx, task_id, items, self._retention)
            return pb.AddSessionItemsResponse(items=[task_convert.session_item(item) for item in stored])

        return await write_once(self._storage, request, pb.AddSessionItemsResponse, add)

    async def ListSessionItems(self, request: pb.ListSessionItemsRequest,
                               context: grpc.aio.ServicerContext) -> pb.ListSessionItemsResponse:
        task_id = validate.identifier("task_id", request.task_id)
        limit = validate.non_negative("limit", request.limit, SESSION_LIST_MAX)
        items = await self._storage.read(session_store.list_items, current_scope().namespace, task_id, limit, now_us())
        return pb.ListSessionItemsResponse(items=[task_convert.session_item(item) for item in items])

    async def PopSessionItem(self, request: pb.PopSessionItemRequest,
                             context: grpc.aio.ServicerContext) -> pb.PopSessionItemResponse:
        task_id = validate.identifier("task_id", request.task_id)

        def pop(tx: Transaction) -> pb.PopSessionItemResponse:
            popped = session_store.pop_item(tx, task_id)
            return pb.PopSessionItemResponse(item=task_convert.session_item(popped) if popped else None)

        return await write_once(self._storage, request, pb.PopSessionItemResponse, pop)

    async def ClearSessionItems(self, request: pb.ClearSessionItemsRequest,
                                context: grpc.aio.ServicerContext) -> pb.ClearSessionItemsResponse:
        task_id = validate.identifier("task_id", request.task_id)
        return await write_once(self._storage, request, pb.ClearSessionItemsResponse, lambda tx: (
            pb.ClearSessionItemsResponse(retracted_count=session_store.clear_items(tx, task_id))))

    async def ListMessages(self, request: pb.ListMessagesRequest,
                           context: grpc.aio.ServicerContext) -> pb.ListMessagesResponse:
        scope = current_scope()
        thread_id = validate.thread(request.task_id, request.thread_id)
        kinds = validate.enum_filter("kinds", request.kinds, task_pb2.MessageKind, Kind)
        page, token = await list_page(
            request, [thread_id, sorted(kinds)], SortKey((int, str), lambda m: [m.created_at, m.id]),
            lambda after, limit: self._storage.read(fork_store.list_task_messages, scope.namespace, request.task_id,
                                                    thread_id, kinds, after, limit))
        return pb.ListMessagesResponse(messages=[task_convert.message(m) for m in page], next_page_token=token)

    async def RecordContextSnapshot(self, request: pb.RecordContextSnapshotRequest,
                                    context: grpc.aio.ServicerContext) -> pb.RecordContextSnapshotResponse:
        task_id = validate.identifier("task_id", request.task_id)
        label = validate.text("label", request.label, LABEL_MAX, required=True)
        content = validate.text("content", request.content, SNAPSHOT_MAX)

        def record(tx: Transaction) -> pb.RecordContextSnapshotResponse:
            snapshot = ContextSnapshot(tx.namespace, new_id("ctx"), task_id, 0, label, content, request.summarized,
                                       tx.now)
            snapshot = message_store.record_snapshot(tx, snapshot)
            return pb.RecordContextSnapshotResponse(snapshot=task_convert.snapshot(snapshot))

        return await write_once(self._storage, request, pb.RecordContextSnapshotResponse, record)

    async def ListContextSnapshots(self, request: pb.ListContextSnapshotsRequest,
                                   context: grpc.aio.ServicerContext) -> pb.ListContextSnapshotsResponse:
        scope = current_scope()
        task_id = validate.identifier("task_id", request.task_id)
        page, token = await list_page(
            request, [task_id], SortKey((int,), lambda s: [s.sequence]),
            lambda after, limit: self._storage.read(message_store.list_snapshots, scope.namespace, task_id,
                                                    after[0] if after else -1, limit))
        return pb.ListContextSnapshotsResponse(snapshots=[task_convert.snapshot(s) for s in page], next_page_token=token)

    # --- events and progress -----------------------------------------------------------------

    async def SubscribeEvents(self, request: pb.SubscribeEventsRequest,
                              context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
        event_filter = _event_filter(current_scope(), request.task_ids, request.types, request.key_ids,
                                     request.agent_ids)
        if request.after_cursor < -1:
            raise InvalidArgument("after_cursor", "must be -1 (live only), 0 (everything) or a cursor")
        await self._check_cursor(event_filter.namespace, request.after_cursor)
        events = self._storage.events.subscribe(event_filter, request.after_cursor)
        try:
            async for event in events:
                yield self._event_replies.reply(event)
        finally:
            await events.aclose()

    async def ListEvents(self, request: pb.ListEventsRequest, context: grpc.aio.ServicerContext) -> pb.ListEventsResponse:
        event_filter = _event_filter(current_scope(), request.task_ids, request.types, request.key_ids,
                                     request.agent_ids)
        after = validate.non_negative("after_cursor", request.after_cursor)
        await self._check_cursor(event_filter.namespace, after)
        page, token = await list_page(
            request, [sorted(event_filter.task_ids), sorted(event_filter.types), after,
                      *([sorted(event_filter.key_ids), sorted(event_filter.agent_ids)]
                        if event_filter.key_ids or event_filter.agent_ids else [])],
            SortKey((int,), lambda e: [e.cursor]),
            lambda token_key, limit: self._storage.events.list(event_filter, token_key[0] if token_key else after,
                                                               limit))
        return pb.ListEventsResponse(events=[task_convert.event(e) for e in page], next_page_token=token)

    async def _check_cursor(self, namespace: str, after: int) -> None:
        """OUT_OF_RANGE for a cursor beyond the namespace's last event: it came from another database (or
        was made up), and following it would skip events without saying so. The head is in the metadata."""
        if after > 0:
            head = await self._storage.events.last_cursor(namespace)
            if after > head:
                raise OutOfRange("after_cursor", f"{after} is beyond the last event's cursor {head}; resume from"
                                 " a cursor this server gave (or 0 to replay everything)", head_cursor=str(head))

    async def GetProgress(self, request: pb.GetProgressRequest, context: grpc.aio.ServicerContext) -> pb.GetProgressResponse:
        scope = current_scope()
        task_id = validate.identifier("task_id", request.task_id)
        count = validate.non_negative("recent_message_count", request.recent_message_count, 50) or 5
        return task_convert.progress(await self._storage.read(task_progress, scope.namespace, task_id, count))

    async def GetTaskUsage(self, request: pb.GetTaskUsageRequest,
                           context: grpc.aio.ServicerContext) -> pb.GetTaskUsageResponse:
        namespace = current_scope().namespace
        task_id = validate.identifier("task_id", request.task_id)
        usage = await self._storage.read(model_calls.task_usage, namespace, task_id, self._budget_tokens(namespace))
        return task_convert.task_usage(usage)


    # --- webhooks ----------------------------------------------------------------------------

    async def ListWebhookDeliveries(self, request: pb.ListWebhookDeliveriesRequest,
                                    context: grpc.aio.ServicerContext) -> pb.ListWebhookDeliveriesResponse:
        scope = current_scope()
        task_id = validate.identifier("task_id", request.task_id, required=False)
        states = sorted(s.value for s in validate.enum_filter("states", request.states,
                                                              webhook_pb2.WebhookDeliveryState, DeliveryState))
        page, token = await list_page(
            request, [task_id, states], SortKey((int, str), lambda d: [d.cursor, d.task_id]),
            lambda after, limit: self._storage.read(webhook_store.list_deliveries, scope.namespace, task_id, states,
                                                    after, limit))
        return pb.ListWebhookDeliveriesResponse(deliveries=[task_convert.webhook_delivery(d) for d in page],
                                                next_page_token=token)

    async def GetWebhookSecret(self, request: pb.GetWebhookSecretRequest,
                               context: grpc.aio.ServicerContext) -> pb.GetWebhookSecretResponse:
        namespace = current_scope().namespace
        secret = await self._storage.read(webhook_store.find_secret, namespace)
        if secret is None:
            secret = await self._storage.write(webhook_store.ensure_secret, namespace, current_scope().correlation_id)
        return pb.GetWebhookSecretResponse(secret=secret)

    async def RotateWebhookSecret(self, request: pb.RotateWebhookSecretRequest,
                                  context: grpc.aio.ServicerContext) -> pb.RotateWebhookSecretResponse:
        overlap = secret_overlap_us("overlap", validate.duration_us("overlap", request.overlap,
                                                                    request.HasField("overlap")))

        def rotate(tx: Transaction) -> pb.RotateWebhookSecretResponse:
            rotated = webhook_store.rotate_secret(tx, overlap)
            return pb.RotateWebhookSecretResponse(secret=rotated.current, previous_secret_expire_time=(
                task_convert.timestamp(rotated.previous_until) if rotated.previous else None))
        return await write_once(self._storage, request, pb.RotateWebhookSecretResponse, rotate)


class _EventReplies:
    """The reply for each recent event, built and serialized once however many subscribers are sent it
    (GuardInterceptor sends the bytes as they are).

    An event never changes once committed and its cursor is unique, so a reply kept by cursor
    is always right; live subscribers all ask for the newest few.
    """

    def __init__(self, capacity: int = 1024) -> None:
        self._capacity = capacity
        self._replies: collections.OrderedDict[int, bytes] = collections.OrderedDict()

    def reply(self, event: Event) -> bytes:
        reply = self._replies.get(event.cursor)
        if reply is None:
            reply = pb.SubscribeEventsResponse(event=task_convert.event(event)).SerializeToString()
            self._replies[event.cursor] = reply
            if len(self._replies) > self._capacity:
                self._replies.popitem(last=False)
        return reply
