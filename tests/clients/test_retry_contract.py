"""Which calls the clients may repeat comes from the contract: each read RPC's
`idempotency_level = NO_SIDE_EFFECTS`, or a request_id on the request. The Python client reads it
from the generated descriptors."""

from __future__ import annotations

import re
import socket
from pathlib import Path

import grpc
import pytest
from google.protobuf import descriptor_pb2

from taskmem.v1 import checkpoint_service_pb2, memory_service_pb2, state_service_pb2, task_service_pb2, wait_service_pb2
from taskmem_client import RetryPolicy, TaskmemClient, TaskmemError
from taskmem_client.calls import is_safe_to_retry
from taskmem_client.events import RESUMABLE_CODES

IDEMPOTENT_BY_KEY = ("PutCheckpoint", "PutCheckpointWrites", "DeleteCheckpointThread", "DeleteCheckpointRuns",
                     "PruneCheckpoints", "PutStoreItems", "GetStoreItems", "SearchStoreItems")
READ_PREFIXES = ("Get", "List", "Search", "Render", "Expand", "Query", "Build", "Tail", "Watch", "Subscribe", "Diff")
METHODS = [method for module in (task_service_pb2, state_service_pb2, memory_service_pb2, wait_service_pb2,
                                 checkpoint_service_pb2)
           for service in module.DESCRIPTOR.services_by_name.values() for method in service.methods]


@pytest.mark.parametrize("method", METHODS, ids=lambda method: method.name)
def test_every_rpc_is_a_declared_read_or_carries_a_request_id_except_extract_state(method) -> None:  # type: ignore[no-untyped-def]
    level = method.GetOptions().idempotency_level
    has_request_id = "request_id" in method.input_type.fields_by_name
    # GetWebhookSecret makes the secret once; RenewClaim sets the lease's end to now + lease, whoever repeats it;
    # checkpoints and store items are put, read (refreshing TTLs) and deleted by key: a repeat leaves the same state
    if method.name in ("PutWorkingMemory", "GetWebhookSecret", "RenewClaim", *IDEMPOTENT_BY_KEY):
        assert level == descriptor_pb2.MethodOptions.IDEMPOTENT
    elif method.name.startswith(READ_PREFIXES):
        assert level == descriptor_pb2.MethodOptions.NO_SIDE_EFFECTS
        assert not has_request_id
    elif method.name == "ExtractState":  # moves a watermark and calls a model: never repeated blindly
        assert level == descriptor_pb2.MethodOptions.IDEMPOTENCY_UNKNOWN and not has_request_id
    else:
        assert has_request_id and level == descriptor_pb2.MethodOptions.IDEMPOTENCY_UNKNOWN
    path = f"/{method.containing_service.full_name}/{method.name}"
    request = method.input_type._concrete_class()
    assert is_safe_to_retry(path, request) == (method.name != "ExtractState")


def _closed_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{probe.getsockname()[1]}"


async def test_a_read_is_retried_on_unavailable_and_a_write_without_request_id_is_not() -> None:
    retried: list[str] = []
    policy = RetryPolicy(attempts=3, initial_backoff=0.01, max_backoff=0.02,
                         on_retry=lambda error, attempt, pause: retried.append(error.code().name))
    async with TaskmemClient(_closed_port(), timeout=5, retry=policy) as client:
        with pytest.raises(TaskmemError) as read:
            await client.tasks.GetTask(task_service_pb2.GetTaskRequest(task_id="tsk_x"))
        assert read.value.code() == grpc.StatusCode.UNAVAILABLE and retried == ["UNAVAILABLE"] * 2
        retried.clear()
        with pytest.raises(TaskmemError):
            await client.state.ExtractState(state_service_pb2.ExtractStateRequest(task_id="tsk_x"))
        assert retried == []


def _documented_resume_codes() -> set[grpc.StatusCode]:
    """The codes listed under "Resuming:" in SubscribeEvents' comment, the one list the three clients follow."""
    proto = (Path(__file__).resolve().parents[2] / "proto" / "taskmem" / "v1" / "task_service.proto").read_text()
    listed: set[grpc.StatusCode] = set()
    for line in proto[proto.index("// Resuming:"):].splitlines()[1:]:
        match = re.match(r"\s*//\s{3}([A-Z_]+)\s{2,}\S", line)
        if match is None:
            if listed:
                break
            continue
        listed.add(grpc.StatusCode[match.group(1)])
    return listed


def test_event_streams_resume_on_the_codes_subscribe_events_documents() -> None:
    documented = _documented_resume_codes()
    assert documented and RESUMABLE_CODES == documented
