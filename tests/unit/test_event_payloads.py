"""Event payloads are written by hand for speed; they must stay the proto JSON of the resource."""

from google.protobuf import json_format

from taskmem.api import task_convert
from taskmem.api.event_encoding import event_payload
from taskmem.core.actions import Action, ActionStatus, ActionType
from taskmem.core.messages import ContextSnapshot, Kind, Message, Role
from taskmem.core.plans import ItemStatus, Plan, PlanItem, StatusSource
from taskmem.core.tasks import ApprovalMode, Task, TaskStatus
from taskmem.v1 import task_pb2

T = 1_795_347_461_000_123

RESOURCES = [
    (Task(namespace="default", id="tsk_1", name="deploy", status=TaskStatus.EXECUTING, created_at=T, updated_at=T + 5,
          goal="ship", context={"a": [1.0, "x", {"b": None}]}, approval_mode=ApprovalMode.PLAN, plan_version=2,
          execution_started_at=T + 1, plan_inference_disabled=True), task_pb2.Task),
    (Plan("tsk_1", 2, [PlanItem(id="a", ordinal=0, title="A", status=ItemStatus.COMPLETED, depends_on=[],
                                started_at=T, completed_at=T + 1_500_000, duration_us=1_500_000),
                       PlanItem(id="b", ordinal=1, title="B", depends_on=["a"], input={"k": True}),
                       PlanItem(id="c", ordinal=2, title="C", status=ItemStatus.COMPLETED,
                                status_source=StatusSource.INFERRED, status_message_id="msg_1")], T, "why"),
     task_pb2.Plan),
    (Action(namespace="default", id="act_1", task_id="tsk_1", type=ActionType.CLI, summary="ls",
            status=ActionStatus.FAILED, created_at=T, error="boom", tokens_in=7, duration_us=250,
            output={"exit": 2.0}), task_pb2.Action),
    (Message("default", "msg_1", "tsk_1", Role.AGENT, Kind.PROGRESS, "step 1 done", T, "tsk_1"), task_pb2.Message),
    (ContextSnapshot("default", "ctx_1", "tsk_1", 3, "initial", "", True, T), task_pb2.ContextSnapshot),
]


def test_each_payload_parses_back_to_the_message_the_api_returns() -> None:
    for resource, message_type in RESOURCES:
        parsed = json_format.ParseDict(event_payload(resource), message_type())
        assert parsed == getattr(task_convert, {"Task": "task", "Plan": "plan", "Action": "action", "Message": "message",
                                           "ContextSnapshot": "snapshot"}[message_type.__name__])(resource)


def test_an_events_json_form_is_what_json_format_writes() -> None:
    from google.protobuf import json_format

    from taskmem.api.task_convert import event, event_json
    from taskmem.core.events import Event, EventType

    sample = Event("default", EventType.TASK_STATUS_CHANGED, "tsk_1", "cor_1",
                   {"from": "TASK_STATUS_PENDING", "to": "TASK_STATUS_EXECUTING", "plan_version": 2},
                   1_790_000_000_123_456, 42)
    assert event_json(sample) == json_format.MessageToDict(event(sample), preserving_proto_field_name=True)
