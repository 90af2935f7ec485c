"""A value stored deeper than writes now accept (a database written before the limit) still reads back.

Writes refuse Struct/Value input nested deeper than STRUCT_MAX_DEPTH levels, but an older database may
hold deeper values, and every read re-encodes them inside a protobuf reply or event, where they would
outgrow protobuf's 100 message levels and fail the read INTERNAL. So reads cut such a value: a field at
STRUCT_MAX_DEPTH levels (what a write accepts), an event's payload at EVENT_PAYLOAD_MAX_DEPTH (a field sits
up to three levels down in it), the object or list past the cut replaced by a marker string, the rest of
the record as stored.

Each test writes a placeholder string through the API and then swaps it, in every row holding it (the
resource's and its events'), for a 40-level value straight in the database, as a server before the limit
would have stored it.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import grpc
from google.protobuf import json_format, struct_pb2

from taskmem.api.task_convert import EVENT_PAYLOAD_MAX_DEPTH
from taskmem.api.validate import STRUCT_MAX_DEPTH
from taskmem.v1 import event_pb2, task_pb2, wait_pb2
from taskmem.v1 import task_service_pb2 as tpb
from taskmem.v1 import wait_service_pb2 as wpb
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from taskmem.v1.wait_service_pb2_grpc import WaitServiceStub
from tests.support.server_process import ServerProcess
from tests.test_struct_depth import as_json, live_events, replayed_events

STORED_LEVELS = 40
FIELD_CUT = f"…(nested deeper than {STRUCT_MAX_DEPTH} levels: cut on read)"
PAYLOAD_CUT = f"…(nested deeper than {EVENT_PAYLOAD_MAX_DEPTH} levels: cut on read)"


def chain(levels: int, leaf: Any) -> Any:
    """`levels` objects, each the only value of the one around it: {"k": {"k": ... leaf}}."""
    value = leaf
    for _ in range(levels):
        value = {"k": value}
    return value


DEEP = chain(STORED_LEVELS, "bottom")


def placeholder() -> str:
    return f"deep-{uuid.uuid4().hex}"


def store_deep_in_place_of(server: ServerProcess, marker: str, *columns: tuple[str, str]) -> None:
    """Replace the JSON string `marker` by DEEP in each (table, column), as a server before the limit wrote it."""
    for table, column in (*columns, ("events", "payload")):
        server.sql(f"UPDATE {table} SET {column} = replace({column}, ?, ?) WHERE {column} LIKE ?",
                   (json.dumps(marker), json.dumps(DEEP), f"%{marker}%"))
        assert not server.sql(f"SELECT 1 FROM {table} WHERE {column} LIKE ?", (f"%{marker}%",))


def struct(data: dict[str, Any]) -> struct_pb2.Struct:
    message = struct_pb2.Struct()
    message.update(data)
    return message


def payloads(events: list[event_pb2.Event], event_type: int) -> list[dict[str, Any]]:
    return [as_json(e)["payload"] for e in events if e.type == event_type]


async def test_task_metadata_stored_40_deep_reads_back_cut_with_a_marker_everywhere(
        server: ServerProcess, tasks: TaskServiceStub) -> None:
    marker = placeholder()
    task = (await tasks.CreateTask(tpb.CreateTaskRequest(
        name="deep metadata", goal="read it back", metadata=struct({"note": "kept", "deep": marker}),
        context=struct({"shallow": {"a": [1, 2]}})))).task
    store_deep_in_place_of(server, marker, ("tasks", "metadata"))
    # metadata is level 1, so "deep" keeps STRUCT_MAX_DEPTH - 1 of its objects.
    cut_metadata = {"note": "kept", "deep": chain(STRUCT_MAX_DEPTH - 1, FIELD_CUT)}

    read = (await tasks.GetTask(tpb.GetTaskRequest(task_id=task.id))).task
    assert as_json(read.metadata) == cut_metadata
    assert (read.name, read.goal, as_json(read.context)) == ("deep metadata", "read it back", {"shallow": {"a": [1, 2]}})
    listed = (await tasks.ListTasks(tpb.ListTasksRequest(page_size=500))).tasks
    assert [as_json(t.metadata) for t in listed if t.id == task.id] == [cut_metadata]

    # In an event the payload is level 1 and metadata level 2: "deep" keeps EVENT_PAYLOAD_MAX_DEPTH - 2 objects.
    cut_in_payload = {"note": "kept", "deep": chain(EVENT_PAYLOAD_MAX_DEPTH - 2, PAYLOAD_CUT)}
    [created] = payloads(await replayed_events(tasks, task.id), event_pb2.EVENT_TYPE_TASK_CREATED)
    assert created["metadata"] == cut_in_payload
    assert (created["name"], created["context"]) == ("deep metadata", {"shallow": {"a": [1, 2]}})

    # A write today embeds the stored metadata in its event: a live subscriber gets it cut too.
    updated = await live_events(tasks, event_pb2.EVENT_TYPE_TASK_UPDATED, lambda: tasks.UpdateTask(
        tpb.UpdateTaskRequest(task=task_pb2.Task(id=task.id, name="renamed"), update_mask={"paths": ["name"]})))
    assert (updated["name"], updated["metadata"]) == ("renamed", cut_in_payload)
    assert as_json((await tasks.GetTask(tpb.GetTaskRequest(task_id=task.id))).task.metadata) == cut_metadata
    # The server keeps serving.
    fresh = (await tasks.CreateTask(tpb.CreateTaskRequest(name="after"))).task
    assert (await tasks.GetTask(tpb.GetTaskRequest(task_id=fresh.id))).task.name == "after"


async def test_a_plan_item_input_stored_40_deep_reads_back_cut_in_the_plan_and_its_events(
        server: ServerProcess, tasks: TaskServiceStub) -> None:
    marker = placeholder()
    task = (await tasks.CreateTask(tpb.CreateTaskRequest(name="deep input", plan=[
        task_pb2.PlanItemSpec(id="a", title="first", input=struct({"deep": marker})),
        task_pb2.PlanItemSpec(id="b", title="second", depends_on=["a"], input=struct({"x": 1}))]))).task
    store_deep_in_place_of(server, marker, ("plan_items", "input"))

    plan = (await tasks.GetPlan(tpb.GetPlanRequest(task_id=task.id))).plan
    assert as_json(plan.items[0].input) == {"deep": chain(STRUCT_MAX_DEPTH - 1, FIELD_CUT)}
    assert [(i.id, i.title) for i in plan.items] == [("a", "first"), ("b", "second")]
    assert as_json(plan.items[1].input) == {"x": 1}
    assert as_json((await tasks.GetTask(tpb.GetTaskRequest(task_id=task.id))).plan.items[0].input) == \
        as_json(plan.items[0].input)

    # The deepest place a field sits in a payload (items[i].input, level 4): it keeps all its 20 levels there.
    events = await replayed_events(tasks, task.id)
    [replaced] = payloads(events, event_pb2.EVENT_TYPE_PLAN_REPLACED)
    assert replaced["items"][0]["input"] == {"deep": chain(STRUCT_MAX_DEPTH - 1, PAYLOAD_CUT)}
    assert replaced["items"][1]["input"] == {"x": 1}

    # Updating the item emits an event with the item itself as payload (input at level 2).
    item = await live_events(tasks, event_pb2.EVENT_TYPE_PLAN_ITEM_UPDATED, lambda: tasks.UpdatePlanItem(
        tpb.UpdatePlanItemRequest(task_id=task.id, item_id="a", status=task_pb2.PLAN_ITEM_STATUS_IN_PROGRESS)))
    assert item["input"] == {"deep": chain(EVENT_PAYLOAD_MAX_DEPTH - 2, PAYLOAD_CUT)}
    assert item["status"] == "PLAN_ITEM_STATUS_IN_PROGRESS"


async def test_action_input_and_output_stored_40_deep_read_back_cut(
        server: ServerProcess, tasks: TaskServiceStub) -> None:
    marker = placeholder()
    task = (await tasks.CreateTask(tpb.CreateTaskRequest(name="deep action"))).task
    await tasks.RecordAction(tpb.RecordActionRequest(
        task_id=task.id, summary="ran it", input={"deep": marker, "cmd": "ls"}, output={"deep": marker},
        status=task_pb2.ACTION_STATUS_SUCCEEDED))
    store_deep_in_place_of(server, marker, ("actions", "input"), ("actions", "output"))

    [action] = (await tasks.ListActions(tpb.ListActionsRequest(task_id=task.id))).actions
    assert as_json(action.input) == {"deep": chain(STRUCT_MAX_DEPTH - 1, FIELD_CUT), "cmd": "ls"}
    assert as_json(action.output) == {"deep": chain(STRUCT_MAX_DEPTH - 1, FIELD_CUT)}
    assert action.summary == "ran it"
    [recorded] = payloads(await replayed_events(tasks, task.id), event_pb2.EVENT_TYPE_ACTION_RECORDED)
    assert recorded["input"]["deep"] == recorded["output"]["deep"] == chain(EVENT_PAYLOAD_MAX_DEPTH - 2, PAYLOAD_CUT)


async def test_a_wait_payload_value_stored_40_deep_reads_back_cut(
        server: ServerProcess, channel: grpc.aio.Channel, tasks: TaskServiceStub) -> None:
    """payload_value is a Value (its own converter), the value's object counting 1 as in a Struct."""
    marker = placeholder()
    waits = WaitServiceStub(channel)
    task = (await tasks.CreateTask(tpb.CreateTaskRequest(name="deep wait"))).task
    value = struct_pb2.Value()
    value.struct_value.update({"deep": marker})
    target = wait_pb2.WaitTarget(event=wait_pb2.EventTarget(
        task_id=task.id, type=event_pb2.EVENT_TYPE_TASK_UPDATED, payload_field="metadata.x", payload_value=value))
    wait = (await waits.CreateWait(wpb.CreateWaitRequest(task_id=task.id, criteria="deep", target=target))).wait
    store_deep_in_place_of(server, marker, ("waits", "target"))

    got = (await waits.GetWait(wpb.GetWaitRequest(wait_id=wait.id))).wait
    assert json_format.MessageToDict(got.target.event.payload_value) == {"deep": chain(STRUCT_MAX_DEPTH - 1, FIELD_CUT)}
    assert (got.criteria, got.target.event.payload_field) == ("deep", "metadata.x")
    # payload.target.event.payload_value: the value's object is level 4 of the payload, so it keeps 20 levels.
    [created] = payloads(await replayed_events(tasks, task.id), event_pb2.EVENT_TYPE_WAIT_CREATED)
    assert created["target"]["event"]["payload_value"] == {"deep": chain(STRUCT_MAX_DEPTH - 1, PAYLOAD_CUT)}
    cancelled = (await waits.CancelWait(wpb.CancelWaitRequest(wait_id=wait.id))).wait
    assert cancelled.status == wait_pb2.WAIT_STATUS_CANCELLED
