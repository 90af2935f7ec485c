"""TaskService end to end: every RPC's success and error paths against a real server."""

from __future__ import annotations

import asyncio
import math

import grpc
import pytest
from google.protobuf import field_mask_pb2, struct_pb2, timestamp_pb2

from taskmem.v1 import event_pb2, task_pb2
from taskmem.v1 import task_service_pb2 as pb
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from tests.support.rpc_errors import assert_rpc_error
from tests.support.eventually import HANG_GUARD_SECONDS

INVALID, NOT_FOUND = grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND


def spec(item_id: str, *depends_on: str, title: str = "") -> task_pb2.PlanItemSpec:
    return task_pb2.PlanItemSpec(id=item_id, title=title or f"do {item_id}", depends_on=depends_on)


async def create(tasks: TaskServiceStub, *plan: task_pb2.PlanItemSpec, **fields: object) -> pb.CreateTaskResponse:
    fields.setdefault("name", "Deploy coursefolio")
    return await tasks.CreateTask(pb.CreateTaskRequest(plan=plan, **fields))  # type: ignore[arg-type]


async def expect_error(call: object, code: grpc.StatusCode, reason: str, field: str | None = None) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await call  # type: ignore[misc]
    assert_rpc_error(raised.value, code, reason, field)


# --- CreateTask / GetTask / ListTasks --------------------------------------------------------

async def test_create_task_stores_every_field_and_the_first_plan(tasks: TaskServiceStub) -> None:
    context = struct_pb2.Struct()
    context.update({"repo": "coursefolio", "replicas": 2})
    created = await create(tasks, spec("build"), spec("push", "build"), goal="ship v1.2.3", workspace="/srv/app",
                           context=context, approval_mode=task_pb2.APPROVAL_MODE_PLAN,
                           callback_url="http://127.0.0.1:9/hook")
    task = created.task
    assert task.id.startswith("tsk_") and task.status == task_pb2.TASK_STATUS_PENDING
    assert (task.goal, task.workspace, task.approval_mode) == ("ship v1.2.3", "/srv/app", task_pb2.APPROVAL_MODE_PLAN)
    assert task.context["repo"] == "coursefolio" and task.plan_version == 1 and task.etag
    assert task.HasField("plan_generate_time") and task.HasField("create_time")
    assert [i.id for i in created.plan.items] == ["build", "push"]
    fetched = await tasks.GetTask(pb.GetTaskRequest(task_id=task.id))
    assert fetched.task == task and fetched.plan == created.plan


async def test_create_task_rejects_bad_fields_naming_them(tasks: TaskServiceStub) -> None:
    await expect_error(tasks.CreateTask(pb.CreateTaskRequest()), INVALID, "ERROR_REASON_INVALID_FIELD", "name")
    await expect_error(create(tasks, name="x" * 201), INVALID, "ERROR_REASON_LIMIT_EXCEEDED", "name")
    await expect_error(create(tasks, spec("a"), spec("b", "nope")), INVALID,
                       "ERROR_REASON_PLAN_UNKNOWN_DEPENDENCY", "plan[1].depends_on")
    await expect_error(create(tasks, spec("a", "b"), spec("b", "a")), INVALID, "ERROR_REASON_PLAN_CYCLE",
                       "plan[0].depends_on")
    await expect_error(create(tasks, task_pb2.PlanItemSpec(id="a")), INVALID, "ERROR_REASON_INVALID_FIELD",
                       "plan[0].title")
    await expect_error(create(tasks, spec("has space")), INVALID, "ERROR_REASON_INVALID_FIELD", "plan[0].id")
    await expect_error(create(tasks, callback_url="ftp://x"), INVALID, "ERROR_REASON_INVALID_FIELD",
                       "callback_url")
    await expect_error(create(tasks, approval_mode=99), INVALID, "ERROR_REASON_INVALID_FIELD",  # type: ignore[arg-type]
                       "approval_mode")


async def test_numbers_json_cannot_hold_are_rejected(tasks: TaskServiceStub) -> None:
    context = struct_pb2.Struct()
    context.update({"ratio": math.nan})
    await expect_error(create(tasks, context=context), INVALID, "ERROR_REASON_INVALID_FIELD", "context.ratio")
    big = struct_pb2.Struct()
    big.update({"blob": "x" * 300_000})
    await expect_error(create(tasks, context=big), INVALID, "ERROR_REASON_LIMIT_EXCEEDED", "context")


async def test_get_task_of_an_unknown_id_is_not_found(tasks: TaskServiceStub) -> None:
    await expect_error(tasks.GetTask(pb.GetTaskRequest(task_id="tsk_missing")), NOT_FOUND, "ERROR_REASON_NOT_FOUND")
    await expect_error(tasks.GetTask(pb.GetTaskRequest()), INVALID, "ERROR_REASON_INVALID_FIELD", "task_id")


async def test_list_tasks_pages_by_update_time_and_filters_by_status(tasks: TaskServiceStub) -> None:
    before = timestamp_pb2.Timestamp()
    before.GetCurrentTime()
    made = [(await create(tasks, name=f"page {i}")).task.id for i in range(5)]
    await tasks.UpdateTask(pb.UpdateTaskRequest(task=task_pb2.Task(id=made[0], status=task_pb2.TASK_STATUS_PLANNING)))
    seen: list[str] = []
    token = ""
    while True:
        page = await tasks.ListTasks(pb.ListTasksRequest(updated_after=before, page_size=2, page_token=token))
        assert len(page.tasks) <= 2
        seen += [t.id for t in page.tasks]
        token = page.next_page_token
        if not token:
            break
    assert seen[0] == made[0] and sorted(seen) == sorted(made)
    planning = await tasks.ListTasks(pb.ListTasksRequest(statuses=[task_pb2.TASK_STATUS_PLANNING],
                                                         updated_after=before))
    assert [t.id for t in planning.tasks] == [made[0]]
    await expect_error(tasks.ListTasks(pb.ListTasksRequest(page_size=501)), INVALID, "ERROR_REASON_INVALID_FIELD",
                       "page_size")
    await expect_error(tasks.ListTasks(pb.ListTasksRequest(page_token="garbage")), INVALID,
                       "ERROR_REASON_INVALID_FIELD", "page_token")


# --- UpdateTask ------------------------------------------------------------------------------

async def test_update_task_walks_the_lifecycle_stamping_each_phase(tasks: TaskServiceStub) -> None:
    task_id = (await create(tasks)).task.id
    stamps = {}
    for status, stamp in [(task_pb2.TASK_STATUS_PLANNING, ""), (task_pb2.TASK_STATUS_EXECUTING, "execution_start_time"),
                          (task_pb2.TASK_STATUS_SYNTHESIZING, "synthesis_start_time"),
                          (task_pb2.TASK_STATUS_COMPLETED, "complete_time")]:
        task = (await tasks.UpdateTask(pb.UpdateTaskRequest(
            task=task_pb2.Task(id=task_id, status=status), update_mask=field_mask_pb2.FieldMask(paths=["status"])))).task
        assert task.status == status
        if stamp:
            assert task.HasField(stamp)
            stamps[stamp] = getattr(task, stamp).ToMicroseconds()
    assert stamps["execution_start_time"] <= stamps["synthesis_start_time"] <= stamps["complete_time"]
    await expect_error(tasks.UpdateTask(pb.UpdateTaskRequest(task=task_pb2.Task(
        id=task_id, status=task_pb2.TASK_STATUS_EXECUTING))), grpc.StatusCode.FAILED_PRECONDITION,
        "ERROR_REASON_ILLEGAL_TRANSITION", "task.status")


async def test_update_task_sets_the_final_answer_and_error_summary(tasks: TaskServiceStub) -> None:
    task_id = (await create(tasks)).task.id
    failure = task_pb2.ErrorSummary(failed_stage="2", failed_step="push", message="registry refused")
    task = (await tasks.UpdateTask(pb.UpdateTaskRequest(task=task_pb2.Task(
        id=task_id, status=task_pb2.TASK_STATUS_FAILED, error_summary=failure, final_answer="could not deploy")))).task
    assert task.error_summary == failure and task.final_answer == "could not deploy"
    progress = await tasks.GetProgress(pb.GetProgressRequest(task_id=task_id))
    assert progress.last_error == "registry refused"


async def test_a_stale_etag_is_aborted_and_the_current_one_accepted(tasks: TaskServiceStub) -> None:
    task = (await create(tasks)).task
    renamed = (await tasks.UpdateTask(pb.UpdateTaskRequest(task=task_pb2.Task(id=task.id, name="v2", etag=task.etag)))).task
    assert renamed.etag != task.etag
    await expect_error(tasks.UpdateTask(pb.UpdateTaskRequest(task=task_pb2.Task(id=task.id, name="v3", etag=task.etag))),
                       grpc.StatusCode.ABORTED, "ERROR_REASON_STALE_ETAG")
    again = (await tasks.UpdateTask(pb.UpdateTaskRequest(task=task_pb2.Task(id=task.id, name="v3", etag=renamed.etag)))).task
    assert again.name == "v3"


async def test_update_task_rejects_unknown_mask_paths_and_empty_updates(tasks: TaskServiceStub) -> None:
    task_id = (await create(tasks)).task.id
    await expect_error(tasks.UpdateTask(pb.UpdateTaskRequest(task=task_pb2.Task(id=task_id),
                                                             update_mask=field_mask_pb2.FieldMask(paths=["etag"]))),
                       INVALID, "ERROR_REASON_INVALID_FIELD", "update_mask")
    await expect_error(tasks.UpdateTask(pb.UpdateTaskRequest(task=task_pb2.Task(id=task_id))), INVALID,
                       "ERROR_REASON_INVALID_FIELD", "update_mask")


# --- plans -----------------------------------------------------------------------------------

async def test_replan_keeps_old_versions_and_carries_statuses_by_id(tasks: TaskServiceStub) -> None:
    task_id = (await create(tasks, spec("build"), spec("push", "build"))).task.id
    await tasks.UpdatePlanItem(pb.UpdatePlanItemRequest(task_id=task_id, item_id="build",
                                                        status=task_pb2.PLAN_ITEM_STATUS_COMPLETED, summary="v1.2.3"))
    plan = (await tasks.ReplacePlan(pb.ReplacePlanRequest(task_id=task_id, reason="add tests", items=[
        spec("build"), spec("test", "build"), spec("push", "test")]))).plan
    assert plan.version == 2 and plan.reason == "add tests"
    assert [(i.id, i.status, i.summary) for i in plan.items] == [
        ("build", task_pb2.PLAN_ITEM_STATUS_COMPLETED, "v1.2.3"), ("test", task_pb2.PLAN_ITEM_STATUS_PENDING, ""),
        ("push", task_pb2.PLAN_ITEM_STATUS_PENDING, "")]
    first = (await tasks.GetPlan(pb.GetPlanRequest(task_id=task_id, version=1))).plan
    assert [i.id for i in first.items] == ["build", "push"]
    assert (await tasks.GetPlan(pb.GetPlanRequest(task_id=task_id))).plan == plan
    await expect_error(tasks.GetPlan(pb.GetPlanRequest(task_id=task_id, version=7)), NOT_FOUND,
                       "ERROR_REASON_NOT_FOUND")
    await expect_error(tasks.ReplacePlan(pb.ReplacePlanRequest(task_id=task_id, items=[spec("a", "a")])), INVALID,
                       "ERROR_REASON_PLAN_CYCLE", "items[0].depends_on")
    await expect_error(tasks.ReplacePlan(pb.ReplacePlanRequest(task_id=task_id)), INVALID,
                       "ERROR_REASON_INVALID_FIELD", "items")


async def test_update_plan_item_stamps_times_and_limits_the_summary(tasks: TaskServiceStub) -> None:
    task_id = (await create(tasks, spec("build"))).task.id
    started = (await tasks.UpdatePlanItem(pb.UpdatePlanItemRequest(
        task_id=task_id, item_id="build", status=task_pb2.PLAN_ITEM_STATUS_IN_PROGRESS,
        active_issue="waiting for docker"))).item
    assert started.HasField("start_time") and not started.HasField("complete_time")
    assert started.active_issue == "waiting for docker"
    await asyncio.sleep(0.01)
    done = (await tasks.UpdatePlanItem(pb.UpdatePlanItemRequest(
        task_id=task_id, item_id="build", status=task_pb2.PLAN_ITEM_STATUS_COMPLETED, active_issue=""))).item
    assert done.HasField("complete_time") and done.duration.ToMicroseconds() > 0 and done.active_issue == ""
    await expect_error(tasks.UpdatePlanItem(pb.UpdatePlanItemRequest(task_id=task_id, item_id="build", summary="x" * 101)),
                       INVALID, "ERROR_REASON_LIMIT_EXCEEDED", "summary")
    await expect_error(tasks.UpdatePlanItem(pb.UpdatePlanItemRequest(
        task_id=task_id, item_id="ghost", status=task_pb2.PLAN_ITEM_STATUS_COMPLETED)), NOT_FOUND,
        "ERROR_REASON_NOT_FOUND")
    await expect_error(tasks.UpdatePlanItem(pb.UpdatePlanItemRequest(task_id=task_id, item_id="build", status=42)),  # type: ignore[arg-type]
                       INVALID, "ERROR_REASON_INVALID_FIELD", "status")


# --- actions ---------------------------------------------------------------------------------

async def test_record_and_complete_an_action_with_its_result(tasks: TaskServiceStub) -> None:
    task_id = (await create(tasks, spec("build"))).task.id
    command = struct_pb2.Struct()
    command.update({"cmd": "docker build -t app:v1 ."})
    action = (await tasks.RecordAction(pb.RecordActionRequest(
        task_id=task_id, plan_item_id="build", type=task_pb2.ACTION_TYPE_CLI, tool_name="exec",
        summary="docker build", input=command, tokens_in=12))).action
    assert action.status == task_pb2.ACTION_STATUS_RUNNING and action.input["cmd"].startswith("docker")
    result = struct_pb2.Struct()
    result.update({"exit": 0})
    done = (await tasks.CompleteAction(pb.CompleteActionRequest(
        action_id=action.id, status=task_pb2.ACTION_STATUS_SUCCEEDED, output=result, tokens_out=3))).action
    assert done.status == task_pb2.ACTION_STATUS_SUCCEEDED and done.output["exit"] == 0
    assert done.HasField("duration") and (done.tokens_in, done.tokens_out) == (12, 3)
    await expect_error(tasks.CompleteAction(pb.CompleteActionRequest(action_id=action.id,
                                                                     status=task_pb2.ACTION_STATUS_FAILED)),
                       grpc.StatusCode.FAILED_PRECONDITION, "ERROR_REASON_FAILED_PRECONDITION")
    listed = await tasks.ListActions(pb.ListActionsRequest(task_id=task_id))
    assert [a.id for a in listed.actions] == [action.id]


async def test_record_action_rejects_bad_input(tasks: TaskServiceStub) -> None:
    task_id = (await create(tasks, spec("build"))).task.id
    base = dict(task_id=task_id, summary="x")
    await expect_error(tasks.RecordAction(pb.RecordActionRequest(task_id=task_id)), INVALID,
                       "ERROR_REASON_INVALID_FIELD", "summary")
    await expect_error(tasks.RecordAction(pb.RecordActionRequest(tokens_in=-1, **base)), INVALID,  # type: ignore[arg-type]
                       "ERROR_REASON_INVALID_FIELD", "tokens_in")
    await expect_error(tasks.RecordAction(pb.RecordActionRequest(plan_item_id="ghost", **base)), INVALID,  # type: ignore[arg-type]
                       "ERROR_REASON_INVALID_FIELD", "plan_item_id")
    negative = pb.RecordActionRequest(**base)  # type: ignore[arg-type]
    negative.duration.seconds = -5
    await expect_error(tasks.RecordAction(negative), INVALID, "ERROR_REASON_INVALID_FIELD", "duration")
    await expect_error(tasks.RecordAction(pb.RecordActionRequest(task_id="tsk_none", summary="x")), NOT_FOUND,
                       "ERROR_REASON_NOT_FOUND")


async def test_tailing_a_running_action_streams_lines_live_and_ends_when_it_completes(tasks: TaskServiceStub) -> None:
    task_id = (await create(tasks)).task.id
    action = (await tasks.RecordAction(pb.RecordActionRequest(task_id=task_id, summary="npm test"))).action
    await tasks.AppendActionLog(pb.AppendActionLogRequest(action_id=action.id, lines=[
        pb.LogLineInput(content="collecting"), pb.LogLineInput(stream="stderr", content="warning")]))
    received: list[tuple[int, str, str]] = []

    async def tail() -> None:
        async for response in tasks.TailActionLog(pb.TailActionLogRequest(action_id=action.id)):
            received.append((response.line.sequence, response.line.stream, response.line.content))

    tailing = asyncio.create_task(tail())
    await asyncio.sleep(0.2)
    appended = await tasks.AppendActionLog(pb.AppendActionLogRequest(
        action_id=action.id, lines=[pb.LogLineInput(content="3 passed")]))
    assert (appended.first_sequence, appended.last_sequence) == (3, 3)
    await asyncio.sleep(0.2)
    assert not tailing.done()
    await tasks.CompleteAction(pb.CompleteActionRequest(action_id=action.id, status=task_pb2.ACTION_STATUS_SUCCEEDED))
    await asyncio.wait_for(tailing, HANG_GUARD_SECONDS)
    assert received == [(1, "stdout", "collecting"), (2, "stderr", "warning"), (3, "stdout", "3 passed")]
    await expect_error(tasks.AppendActionLog(pb.AppendActionLogRequest(
        action_id=action.id, lines=[pb.LogLineInput(content="late")])), grpc.StatusCode.FAILED_PRECONDITION,
        "ERROR_REASON_FAILED_PRECONDITION")
    resumed = [r.line.sequence async for r in tasks.TailActionLog(pb.TailActionLogRequest(action_id=action.id,
                                                                                          after_sequence=2))]
    assert resumed == [3]


# --- transcript and snapshots ----------------------------------------------------------------

async def test_messages_list_in_time_then_id_order_and_standalone_threads_work(tasks: TaskServiceStub) -> None:
    task_id = (await create(tasks)).task.id
    posted = [(await tasks.PostMessage(pb.PostMessageRequest(
        task_id=task_id, role=task_pb2.MESSAGE_ROLE_AGENT, kind=task_pb2.MESSAGE_KIND_PROGRESS,
        content=f"step {i} done"))).message for i in range(4)]
    listed, token = [], ""
    while True:
        page = await tasks.ListMessages(pb.ListMessagesRequest(task_id=task_id, page_size=3, page_token=token))
        listed += page.messages
        token = page.next_page_token
        if not token:
            break
    assert [m.id for m in listed] == [m.id for m in posted]
    assert all(m.thread_id == task_id for m in listed)
    chat = await tasks.PostMessage(pb.PostMessageRequest(thread_id="chat-7", role=task_pb2.MESSAGE_ROLE_USER,
                                                         content="hello"))
    assert chat.message.task_id == "" and chat.message.kind == task_pb2.MESSAGE_KIND_TEXT
    thread = await tasks.ListMessages(pb.ListMessagesRequest(thread_id="chat-7"))
    assert [m.content for m in thread.messages] == ["hello"]
    await expect_error(tasks.PostMessage(pb.PostMessageRequest(task_id=task_id, content="hi")), INVALID,
                       "ERROR_REASON_INVALID_FIELD", "role")
    await expect_error(tasks.PostMessage(pb.PostMessageRequest(role=task_pb2.MESSAGE_ROLE_USER, content="hi")),
                       INVALID, "ERROR_REASON_INVALID_FIELD", "task_id")


async def test_context_snapshots_are_numbered_in_recording_order(tasks: TaskServiceStub) -> None:
    task_id = (await create(tasks)).task.id
    for label in ("initial", "after_summarization"):
        await tasks.RecordContextSnapshot(pb.RecordContextSnapshotRequest(
            task_id=task_id, label=label, content=f"context {label}", summarized=label != "initial"))
    snapshots = (await tasks.ListContextSnapshots(pb.ListContextSnapshotsRequest(task_id=task_id))).snapshots
    assert [(s.sequence, s.label, s.summarized) for s in snapshots] == [
        (0, "initial", False), (1, "after_summarization", True)]
    await expect_error(tasks.RecordContextSnapshot(pb.RecordContextSnapshotRequest(task_id=task_id)), INVALID,
                       "ERROR_REASON_INVALID_FIELD", "label")


# --- progress ----------------------------------------------------------------------------------

async def test_get_progress_answers_where_was_i(tasks: TaskServiceStub) -> None:
    task_id = (await create(tasks, spec("build"), spec("push", "build"), spec("ssh", "push"),
                            spec("pull", "ssh"))).task.id
    for item in ("build", "push", "ssh"):
        await tasks.UpdatePlanItem(pb.UpdatePlanItemRequest(task_id=task_id, item_id=item,
                                                            status=task_pb2.PLAN_ITEM_STATUS_COMPLETED))
    await tasks.PostMessage(pb.PostMessageRequest(task_id=task_id, role=task_pb2.MESSAGE_ROLE_AGENT,
                                                  content="SSH connected"))
    progress = await tasks.GetProgress(pb.GetProgressRequest(task_id=task_id))
    assert [i.id for i in progress.completed] == ["build", "push", "ssh"]
    assert [i.id for i in progress.next] == ["pull"] and not progress.HasField("current")
    assert [m.content for m in progress.recent_messages] == ["SSH connected"]
    assert progress.summary.startswith("Completed 3/4: build, push, ssh.")
    assert "Next: pull — do pull." in progress.summary


# --- events --------------------------------------------------------------------------------------

async def test_every_mutation_emits_an_event_sharing_the_request_correlation_id(tasks: TaskServiceStub) -> None:
    created = await tasks.CreateTask(pb.CreateTaskRequest(name="traced", plan=[spec("a")]),
                                     metadata=[("x-correlation-id", "corr-123")])
    events = (await tasks.ListEvents(pb.ListEventsRequest(task_ids=[created.task.id]))).events
    assert [e.type for e in events] == [event_pb2.EVENT_TYPE_TASK_CREATED, event_pb2.EVENT_TYPE_PLAN_REPLACED]
    assert {e.correlation_id for e in events} == {"corr-123"}
    assert events[0].payload["name"] == "traced" and events[0].cursor < events[1].cursor


async def test_list_events_pages_and_filters_by_type(tasks: TaskServiceStub) -> None:
    task_id = (await create(tasks)).task.id
    for i in range(5):
        await tasks.PostMessage(pb.PostMessageRequest(task_id=task_id, role=task_pb2.MESSAGE_ROLE_AGENT, content=str(i)))
    seen, token = [], ""
    while True:
        page = await tasks.ListEvents(pb.ListEventsRequest(task_ids=[task_id], types=[
            event_pb2.EVENT_TYPE_MESSAGE_POSTED], page_size=2, page_token=token))
        seen += [e.payload["content"] for e in page.events]
        token = page.next_page_token
        if not token:
            break
    assert seen == ["0", "1", "2", "3", "4"]


async def test_a_live_subscription_sees_only_matching_events_in_order(tasks: TaskServiceStub) -> None:
    watched = (await create(tasks)).task.id
    other = (await create(tasks)).task.id
    # From the start of the new task's messages, so none posted before the stream is registered is missed.
    stream = tasks.SubscribeEvents(pb.SubscribeEventsRequest(
        task_ids=[watched], types=[event_pb2.EVENT_TYPE_MESSAGE_POSTED], after_cursor=0))
    received: list[str] = []

    async def read() -> None:
        async for response in stream:
            received.append(response.event.payload["content"])
            if len(received) == 3:
                return

    reading = asyncio.create_task(read())
    for i in range(3):
        await tasks.PostMessage(pb.PostMessageRequest(task_id=other, role=task_pb2.MESSAGE_ROLE_AGENT, content="no"))
        await tasks.PostMessage(pb.PostMessageRequest(task_id=watched, role=task_pb2.MESSAGE_ROLE_AGENT, content=str(i)))
    await asyncio.wait_for(reading, HANG_GUARD_SECONDS)
    stream.cancel()
    assert received == ["0", "1", "2"]


async def test_subscribe_rejects_unknown_event_types(tasks: TaskServiceStub) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        async for _ in tasks.SubscribeEvents(pb.SubscribeEventsRequest(types=[999])):  # type: ignore[list-item]
            pass
    assert_rpc_error(raised.value, INVALID, "ERROR_REASON_INVALID_FIELD", "types")


# --- request ids --------------------------------------------------------------------------------

async def test_a_retried_request_id_returns_the_first_result_and_writes_nothing(tasks: TaskServiceStub) -> None:
    request = pb.CreateTaskRequest(name="once", request_id="req-create-once")
    first = await tasks.CreateTask(request)
    second = await tasks.CreateTask(request)
    assert first == second
    action_request = pb.RecordActionRequest(task_id=first.task.id, summary="only once", request_id="req-act-1")
    assert await tasks.RecordAction(action_request) == await tasks.RecordAction(action_request)
    assert len((await tasks.ListActions(pb.ListActionsRequest(task_id=first.task.id))).actions) == 1
    events = (await tasks.ListEvents(pb.ListEventsRequest(task_ids=[first.task.id]))).events
    assert [e.type for e in events] == [event_pb2.EVENT_TYPE_TASK_CREATED, event_pb2.EVENT_TYPE_ACTION_RECORDED]
    await expect_error(tasks.CreateTask(pb.CreateTaskRequest(name="different", request_id="req-create-once")),
                       INVALID, "ERROR_REASON_REQUEST_ID_REUSED", "request_id")


# --- malformed requests ----------------------------------------------------------------------

async def test_bytes_that_are_not_a_message_get_invalid_argument_not_unknown(channel: grpc.aio.Channel) -> None:
    raw = channel.unary_unary("/taskmem.v1.TaskService/GetTask", request_serializer=lambda b: b,
                              response_deserializer=lambda b: b)
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await raw(b"\xff\xff\xff\xff")
    assert_rpc_error(raised.value, INVALID, "ERROR_REASON_MALFORMED_REQUEST")
    stream = channel.unary_stream("/taskmem.v1.TaskService/SubscribeEvents", request_serializer=lambda b: b,
                                  response_deserializer=lambda b: b)
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        async for _ in stream(b"\x0a\xff"):
            pass
    assert_rpc_error(raised.value, INVALID, "ERROR_REASON_MALFORMED_REQUEST")


async def test_the_server_keeps_serving_after_bad_input(tasks: TaskServiceStub) -> None:
    for _ in range(3):
        with pytest.raises(grpc.aio.AioRpcError):
            await tasks.CreateTask(pb.CreateTaskRequest(name="", plan=[spec("a", "a")]))
    assert (await create(tasks)).task.id
