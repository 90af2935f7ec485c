"""Struct and Value fields nested too deep are refused when written, and everything accepted reads back.

A stored value is re-encoded inside every reply and every event that carries it (an event's payload wraps a
plan item's input four JSON levels deeper), and protobuf decoders stop at 100 message levels. So a write
nested deeper than STRUCT_MAX_DEPTH levels of objects and lists is INVALID_ARGUMENT naming the path, and a
value at the limit reads back through every read: Get/List calls, ListEvents, and SubscribeEvents both
replaying and live."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import pytest
from google.protobuf import json_format, struct_pb2

from taskmem.api.validate import STRUCT_MAX_DEPTH
from taskmem.v1 import event_pb2, state_pb2, task_pb2, wait_pb2
from taskmem.v1 import memory_service_pb2 as mpb
from taskmem.v1 import state_service_pb2 as spb
from taskmem.v1 import task_service_pb2 as tpb
from taskmem.v1 import wait_service_pb2 as wpb
from taskmem.v1.memory_service_pb2_grpc import MemoryServiceStub
from taskmem.v1.state_service_pb2_grpc import StateServiceStub
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from taskmem.v1.wait_service_pb2_grpc import WaitServiceStub
from tests.support.rpc_errors import assert_rpc_error, error_info
from tests.support.eventually import HANG_GUARD_SECONDS, eventually

INVALID = grpc.StatusCode.INVALID_ARGUMENT
TOO_DEEP = "ERROR_REASON_LIMIT_EXCEEDED"


def objects(levels: int) -> dict[str, Any]:
    """`levels` nested objects, {"k": {"k": ... {"leaf": 1.5}}}: the costliest shape per level to encode."""
    value: dict[str, Any] = {"leaf": 1.5}
    for _ in range(levels - 1):
        value = {"k": value}
    return value


def struct(data: dict[str, Any]) -> struct_pb2.Struct:
    message = struct_pb2.Struct()
    message.update(data)
    return message


def value(data: dict[str, Any]) -> struct_pb2.Value:
    message = struct_pb2.Value()
    message.struct_value.update(data)
    return message


def path_past_the_limit(field: str) -> str:
    """The path an error names for objects(STRUCT_MAX_DEPTH + 1) in `field`: the first object too deep."""
    return field + ".k" * STRUCT_MAX_DEPTH


def holds(tree: Any, wanted: Any) -> bool:
    """Whether `wanted` is `tree` or sits anywhere inside it."""
    if tree == wanted:
        return True
    if isinstance(tree, dict):
        return any(holds(item, wanted) for item in tree.values())
    if isinstance(tree, list):
        return any(holds(item, wanted) for item in tree)
    return False


def as_json(message: Any) -> dict[str, Any]:
    return json_format.MessageToDict(message, preserving_proto_field_name=True)


async def new_task(tasks: TaskServiceStub, **fields: Any) -> task_pb2.Task:
    return (await tasks.CreateTask(tpb.CreateTaskRequest(name="depth", **fields))).task


async def replayed_events(tasks: TaskServiceStub, task_id: str) -> list[event_pb2.Event]:
    """The task's events as ListEvents pages them and as a replaying subscription sends them; the two agree."""
    listed = list((await tasks.ListEvents(tpb.ListEventsRequest(task_ids=[task_id], page_size=500))).events)
    assert listed
    streamed: list[event_pb2.Event] = []
    stream = tasks.SubscribeEvents(tpb.SubscribeEventsRequest(task_ids=[task_id], after_cursor=0))

    async def read() -> None:
        async for response in stream:
            streamed.append(response.event)
            if len(streamed) == len(listed):
                return

    await asyncio.wait_for(read(), HANG_GUARD_SECONDS)
    stream.cancel()
    assert streamed == listed
    return listed


async def live_events(tasks: TaskServiceStub, event_type: int, write: Callable[[], Awaitable[Any]]) -> Any:
    """The payload of the first `event_type` event a live subscription receives after `write()`. The write waits
    until the subscription has received a probe message (it is live then, however long registering it took)."""
    probed = (await tasks.CreateTask(tpb.CreateTaskRequest(name="probe"))).task.id
    stream = tasks.SubscribeEvents(tpb.SubscribeEventsRequest(
        types=[event_type, event_pb2.EVENT_TYPE_MESSAGE_POSTED], after_cursor=-1))  # type: ignore[list-item]
    live = asyncio.Event()
    received: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

    async def read() -> None:
        async for response in stream:
            if response.event.type == event_type:
                received.set_result(as_json(response.event)["payload"])
                return
            live.set()

    async def probe() -> bool:
        await tasks.PostMessage(tpb.PostMessageRequest(task_id=probed, role=task_pb2.MESSAGE_ROLE_AGENT,
                                                       content="probe"))
        return live.is_set()

    reading = asyncio.create_task(read())
    await eventually(probe, "the subscription receiving a probe message", interval=0.1)
    await write()
    try:
        return await asyncio.wait_for(received, HANG_GUARD_SECONDS)
    finally:
        stream.cancel()
        reading.cancel()


# --- refused at write time, naming the field -----------------------------------------------------

async def test_metadata_nested_32_deep_is_refused_naming_the_field(tasks: TaskServiceStub) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await new_task(tasks, metadata=struct(objects(32)))
    assert_rpc_error(raised.value, INVALID, TOO_DEEP, path_past_the_limit("metadata"))
    assert raised.value.details().startswith("metadata.k.k")
    assert f"at most {STRUCT_MAX_DEPTH} levels of objects and lists" in (raised.value.details() or "")


# write → (the path its error names, the call)
TOO_DEEP_WRITES: dict[str, tuple[str, Callable[[grpc.aio.Channel, str], Awaitable[Any]]]] = {
    "CreateTask.context": (path_past_the_limit("context"), lambda ch, _: TaskServiceStub(ch).CreateTask(tpb.CreateTaskRequest(
        name="x", context=struct(objects(STRUCT_MAX_DEPTH + 1))))),
    "CreateTask.plan.input": (path_past_the_limit("plan[0].input"), lambda ch, _: TaskServiceStub(ch).CreateTask(tpb.CreateTaskRequest(
        name="x", plan=[task_pb2.PlanItemSpec(id="a", title="a", input=struct(objects(STRUCT_MAX_DEPTH + 1)))]))),
    # A key's value is one level below the metadata object, which counts as the first.
    "UpdateTask.metadata.<key>": ("task.metadata.a" + ".k" * (STRUCT_MAX_DEPTH - 1), lambda ch, task_id: TaskServiceStub(ch).UpdateTask(tpb.UpdateTaskRequest(
        task=task_pb2.Task(id=task_id, metadata=struct({"a": objects(STRUCT_MAX_DEPTH)})),
        update_mask={"paths": ["metadata.a"]}))),
    "UpdateTask.context": (path_past_the_limit("task.context"), lambda ch, task_id: TaskServiceStub(ch).UpdateTask(tpb.UpdateTaskRequest(
        task=task_pb2.Task(id=task_id, context=struct(objects(STRUCT_MAX_DEPTH + 1))),
        update_mask={"paths": ["context"]}))),
    "ReplacePlan.input": (path_past_the_limit("items[1].input"), lambda ch, task_id: TaskServiceStub(ch).ReplacePlan(tpb.ReplacePlanRequest(
        task_id=task_id, items=[task_pb2.PlanItemSpec(id="a", title="a"), task_pb2.PlanItemSpec(
            id="b", title="b", input=struct(objects(STRUCT_MAX_DEPTH + 1)))]))),
    "RecordAction.input": (path_past_the_limit("input"), lambda ch, task_id: TaskServiceStub(ch).RecordAction(tpb.RecordActionRequest(
        task_id=task_id, summary="s", input=struct(objects(STRUCT_MAX_DEPTH + 1))))),
    "RecordAction.output": (path_past_the_limit("output"), lambda ch, task_id: TaskServiceStub(ch).RecordAction(tpb.RecordActionRequest(
        task_id=task_id, summary="s", status=task_pb2.ACTION_STATUS_SUCCEEDED,
        output=struct(objects(STRUCT_MAX_DEPTH + 1))))),
    "CreateWait.payload_value": (path_past_the_limit("target.event.payload_value"), lambda ch, task_id: WaitServiceStub(ch).CreateWait(
        wpb.CreateWaitRequest(task_id=task_id, target=wait_pb2.WaitTarget(event=wait_pb2.EventTarget(
            task_id=task_id, type=event_pb2.EVENT_TYPE_TASK_UPDATED, payload_field="metadata.x",
            payload_value=value(objects(STRUCT_MAX_DEPTH + 1))))))),
    "RecordPattern.data": (path_past_the_limit("data"), lambda ch, _: MemoryServiceStub(ch).RecordPattern(mpb.RecordPatternRequest(
        pattern_type="depth", pattern_key="k", data=struct(objects(STRUCT_MAX_DEPTH + 1))))),
    "ExtractMemories.arguments": (path_past_the_limit("tool_calls[0].arguments"), lambda ch, task_id: MemoryServiceStub(ch).ExtractMemories(
        mpb.ExtractMemoriesRequest(task_id=task_id, subtask_id="a", tool_calls=[mpb.ToolCallRecord(
            tool_name="t", arguments=struct(objects(STRUCT_MAX_DEPTH + 1)))]))),
    "PutWorkingMemory.task_context": (path_past_the_limit("working_memory.task_context"), lambda ch, _: StateServiceStub(ch).PutWorkingMemory(
        spb.PutWorkingMemoryRequest(working_memory=state_pb2.WorkingMemory(
            agent_id="depth-agent", task_context=struct(objects(STRUCT_MAX_DEPTH + 1)))))),
}


@pytest.mark.parametrize("write", sorted(TOO_DEEP_WRITES))
async def test_every_struct_and_value_field_refuses_one_level_past_the_limit(
        write: str, channel: grpc.aio.Channel, tasks: TaskServiceStub) -> None:
    path, call = TOO_DEEP_WRITES[write]
    task = await new_task(tasks)
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await call(channel, task.id)
    assert_rpc_error(raised.value, INVALID, TOO_DEEP, path)
    # Nothing was written: the task is as created and has only its creation event.
    assert (await tasks.GetTask(tpb.GetTaskRequest(task_id=task.id))).task.etag == task.etag
    events = (await tasks.ListEvents(tpb.ListEventsRequest(task_ids=[task.id]))).events
    assert [e.type for e in events] == [event_pb2.EVENT_TYPE_TASK_CREATED]


# --- accepted at the limit, and readable everywhere ------------------------------------------------

async def test_task_metadata_and_context_at_the_limit_read_back_through_every_read(tasks: TaskServiceStub) -> None:
    deep = objects(STRUCT_MAX_DEPTH)
    task = await new_task(tasks, metadata=struct(deep), context=struct(deep))
    read = (await tasks.GetTask(tpb.GetTaskRequest(task_id=task.id))).task
    assert as_json(read.metadata) == deep and as_json(read.context) == deep
    listed = (await tasks.ListTasks(tpb.ListTasksRequest(page_size=500))).tasks
    assert any(t.id == task.id and as_json(t.metadata) == deep for t in listed)
    [created] = await replayed_events(tasks, task.id)
    assert as_json(created)["payload"]["metadata"] == deep
    assert as_json(created)["payload"]["context"] == deep
    # The server keeps serving.
    assert (await tasks.GetTask(tpb.GetTaskRequest(task_id=(await new_task(tasks)).id))).task.name == "depth"


async def test_a_metadata_key_at_the_limit_merges_and_reads_back(tasks: TaskServiceStub) -> None:
    deep = objects(STRUCT_MAX_DEPTH - 1)  # one level below the metadata object itself
    task = await new_task(tasks)
    await tasks.UpdateTask(tpb.UpdateTaskRequest(task=task_pb2.Task(id=task.id, metadata=struct({"deep": deep})),
                                                 update_mask={"paths": ["metadata.deep"]}))
    assert as_json((await tasks.GetTask(tpb.GetTaskRequest(task_id=task.id))).task.metadata)["deep"] == deep
    events = await replayed_events(tasks, task.id)
    assert as_json(events[-1])["payload"]["metadata"]["deep"] == deep


async def test_a_plan_item_input_at_the_limit_reads_back_in_the_plan_and_its_events(tasks: TaskServiceStub) -> None:
    """A plan item's input sits deepest in an event (payload.items[i].input), so it is the case to check live."""
    deep = objects(STRUCT_MAX_DEPTH)
    task = await new_task(tasks)
    items = [task_pb2.PlanItemSpec(id="a", title="a", input=struct(deep))]
    payload = await live_events(tasks, event_pb2.EVENT_TYPE_PLAN_REPLACED, lambda: tasks.ReplacePlan(
        tpb.ReplacePlanRequest(task_id=task.id, items=items)))
    assert payload["items"][0]["input"] == deep
    plan = (await tasks.GetPlan(tpb.GetPlanRequest(task_id=task.id))).plan
    assert as_json(plan.items[0].input) == deep
    assert as_json((await tasks.GetTask(tpb.GetTaskRequest(task_id=task.id))).plan.items[0].input) == deep
    replaced = [e for e in await replayed_events(tasks, task.id) if e.type == event_pb2.EVENT_TYPE_PLAN_REPLACED]
    assert as_json(replaced[0])["payload"]["items"][0]["input"] == deep


async def test_action_input_and_output_at_the_limit_read_back(tasks: TaskServiceStub) -> None:
    deep = objects(STRUCT_MAX_DEPTH)
    task = await new_task(tasks)
    action = (await tasks.RecordAction(tpb.RecordActionRequest(task_id=task.id, summary="s",
                                                               input=struct(deep)))).action
    await tasks.CompleteAction(tpb.CompleteActionRequest(action_id=action.id, status=task_pb2.ACTION_STATUS_SUCCEEDED,
                                                         output=struct(deep)))
    [read] = (await tasks.ListActions(tpb.ListActionsRequest(task_id=task.id))).actions
    assert as_json(read.input) == deep and as_json(read.output) == deep
    events = await replayed_events(tasks, task.id)
    completed = [as_json(e)["payload"] for e in events if e.type == event_pb2.EVENT_TYPE_ACTION_COMPLETED]
    assert completed and completed[0]["input"] == deep and completed[0]["output"] == deep


async def test_a_wait_payload_value_at_the_limit_reads_back(channel: grpc.aio.Channel, tasks: TaskServiceStub) -> None:
    deep = objects(STRUCT_MAX_DEPTH)
    waits = WaitServiceStub(channel)
    task = await new_task(tasks)
    target = wait_pb2.WaitTarget(event=wait_pb2.EventTarget(
        task_id=task.id, type=event_pb2.EVENT_TYPE_TASK_UPDATED, payload_field="metadata.x",
        payload_value=value(deep)))
    wait = (await waits.CreateWait(wpb.CreateWaitRequest(task_id=task.id, target=target))).wait
    got = (await waits.GetWait(wpb.GetWaitRequest(wait_id=wait.id))).wait
    assert json_format.MessageToDict(got.target.event.payload_value) == deep
    listed = (await waits.ListWaits(wpb.ListWaitsRequest(task_id=task.id))).waits
    assert [json_format.MessageToDict(w.target.event.payload_value) for w in listed] == [deep]
    events = await replayed_events(tasks, task.id)
    assert any(e.type == event_pb2.EVENT_TYPE_WAIT_CREATED and holds(as_json(e)["payload"], deep) for e in events)
    await waits.CancelWait(wpb.CancelWaitRequest(wait_id=wait.id))


async def test_pattern_data_and_working_memory_at_the_limit_read_back(
        channel: grpc.aio.Channel, tasks: TaskServiceStub) -> None:
    deep = objects(STRUCT_MAX_DEPTH)
    memory, state = MemoryServiceStub(channel), StateServiceStub(channel)
    payload = await live_events(tasks, event_pb2.EVENT_TYPE_PATTERN_RECORDED, lambda: memory.RecordPattern(
        mpb.RecordPatternRequest(pattern_type="depth-limit", pattern_key="k", data=struct(deep))))
    assert holds(payload, deep)
    patterns = (await memory.ListPatterns(mpb.ListPatternsRequest(pattern_type="depth-limit"))).patterns
    assert [as_json(p.data) for p in patterns] == [deep]
    await state.PutWorkingMemory(spb.PutWorkingMemoryRequest(working_memory=state_pb2.WorkingMemory(
        agent_id="depth-limit", task_context=struct(deep))))
    got = (await state.GetWorkingMemory(spb.GetWorkingMemoryRequest(agent_id="depth-limit"))).working_memory
    assert as_json(got.task_context) == deep


async def test_a_state_item_has_no_nested_value_so_deep_json_text_stays_text(
        channel: grpc.aio.Channel, tasks: TaskServiceStub) -> None:
    """State items carry only strings and enums: JSON in their text is never parsed, at any depth."""
    text = "decided: " + "[" * 60 + "]" * 60
    task = await new_task(tasks)
    state = StateServiceStub(channel)
    await state.UpsertStateItems(spb.UpsertStateItemsRequest(task_id=task.id, items=[state_pb2.StateItemCandidate(
        type=state_pb2.STATE_ITEM_TYPE_DECISION, text=text)]))
    [item] = (await state.ListStateItems(spb.ListStateItemsRequest(task_id=task.id))).items
    assert item.text == text
    events = await replayed_events(tasks, task.id)
    assert any(holds(as_json(e)["payload"], text) for e in events)


# --- an error naming a long path still arrives -------------------------------------------------

@pytest.mark.parametrize("key", ["a" * 20_000, "ü" * 10_000])
async def test_an_error_naming_a_very_long_key_arrives_as_invalid_argument(tasks: TaskServiceStub, key: str) -> None:
    """The field path holds the caller's key; uncut, its status overflowed the client's 8 KiB trailer limit and
    the caller saw RESOURCE_EXHAUSTED "Stream removed" instead."""
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await new_task(tasks, metadata=struct({key: float("nan")}))
    assert raised.value.code() == INVALID
    field = error_info(raised.value).metadata["field"]
    assert field.startswith("metadata." + key[:20]) and "…" in field and len(field.encode()) <= 512
    assert (raised.value.details() or "").endswith("is NaN or Infinity, which JSON cannot hold")


async def test_a_too_deep_path_of_long_keys_arrives_as_invalid_argument(tasks: TaskServiceStub) -> None:
    deep: dict[str, Any] = {"leaf": 1}
    for level in range(STRUCT_MAX_DEPTH):
        deep = {f"{level}-" + "k" * 2000: deep}
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await new_task(tasks, context=struct(deep))
    assert raised.value.code() == INVALID and error_info(raised.value).reason == TOO_DEEP
    assert error_info(raised.value).metadata["field"].startswith("context.19-kkk")
    assert f"at most {STRUCT_MAX_DEPTH} levels of objects and lists" in (raised.value.details() or "")
