"""Webhooks end to end: a real server POSTs a task's events to a loopback receiver that verifies
each signature with the Standard Webhooks reference library."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import grpc
import pytest
from google.protobuf import field_mask_pb2

from taskmem.v1 import event_pb2, task_pb2, webhook_pb2
from taskmem.v1 import task_service_pb2 as pb
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from tests.support.server_process import ServerProcess
from tests.support.webhook_receiver import WebhookReceiver

FAST_RETRIES = {
    "TASKMEM_WEBHOOK_BACKOFF_INITIAL_SECONDS": "0.2",
    "TASKMEM_WEBHOOK_BACKOFF_MAX_SECONDS": "0.8",
    "TASKMEM_WEBHOOK_RETRY_PERIOD_SECONDS": "120",
    "TASKMEM_WEBHOOK_ATTEMPT_TIMEOUT_SECONDS": "2",
}
PENDING = webhook_pb2.WEBHOOK_DELIVERY_STATE_PENDING
DELIVERED = webhook_pb2.WEBHOOK_DELIVERY_STATE_DELIVERED
DEAD_LETTERED = webhook_pb2.WEBHOOK_DELIVERY_STATE_DEAD_LETTERED
DEFAULT_TYPES_SENT = {event_pb2.EVENT_TYPE_TASK_CREATED, event_pb2.EVENT_TYPE_TASK_UPDATED,
                      event_pb2.EVENT_TYPE_TASK_STATUS_CHANGED, event_pb2.EVENT_TYPE_PLAN_REPLACED,
                      event_pb2.EVENT_TYPE_PLAN_ITEM_UPDATED}


def _server(tmp_path: Path, *receivers: WebhookReceiver, **env: str) -> ServerProcess:
    """A server that may send webhooks to the receivers' loopback ports (and to no other)."""
    allowed = ",".join(f"127.0.0.1:{receiver.port}" for receiver in receivers)
    return ServerProcess(tmp_path / "taskmem.db",
                         env={**FAST_RETRIES, "TASKMEM_WEBHOOK_ALLOWED_HOSTS": allowed, **env})


async def _eventually(check: Callable[[], Awaitable[bool]], timeout: float = 20.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not await check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


async def _expected_cursors(stub: TaskServiceStub, task_id: str, types: set[int]) -> list[str]:
    events = await stub.ListEvents(pb.ListEventsRequest(task_ids=[task_id], types=sorted(types), page_size=500))
    return [str(e.cursor) for e in events.events]


async def _deliveries(stub: TaskServiceStub, task_id: str = "", states: list[int] | None = None) -> list[
        webhook_pb2.WebhookDelivery]:
    reply = await stub.ListWebhookDeliveries(pb.ListWebhookDeliveriesRequest(task_id=task_id, states=states or [],
                                                                             page_size=500))
    return list(reply.deliveries)


async def _work(stub: TaskServiceStub, task_id: str, item_ids: list[str], status: int) -> None:
    """Events of the default types (plan items, a status change) and some that are not sent (actions, messages)."""
    for item_id in item_ids:
        await stub.UpdatePlanItem(pb.UpdatePlanItemRequest(task_id=task_id, item_id=item_id,
                                                           status=task_pb2.PLAN_ITEM_STATUS_COMPLETED))
        await stub.RecordAction(pb.RecordActionRequest(task_id=task_id, summary=f"did {item_id}",
                                                       status=task_pb2.ACTION_STATUS_SUCCEEDED))
    await stub.UpdateTask(pb.UpdateTaskRequest(task=task_pb2.Task(id=task_id, status=status),
                                               update_mask=field_mask_pb2.FieldMask(paths=["status"])))


def _assert_in_order_once_per_id(receiver: WebhookReceiver, expected: list[str]) -> None:
    """Every expected id arrived, first arrivals in cursor order; a repeat carries the very same body."""
    first: dict[str, bytes] = {}
    for received in receiver.received:
        if received.message_id in first:
            assert first[received.message_id] == received.raw, "a redelivery must be byte-identical"
        else:
            first[received.message_id] = received.raw
    assert list(first) == expected
    assert not receiver.rejected


async def test_every_event_arrives_in_order_across_an_outage_and_a_restart_mid_backoff(
        tmp_path: Path, receiver: WebhookReceiver) -> None:
    server = _server(tmp_path, receiver)
    server.start()
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            stub = TaskServiceStub(channel)
            receiver.secret = (await stub.GetWebhookSecret(pb.GetWebhookSecretRequest())).secret
            plan = [task_pb2.PlanItemSpec(id=f"s{n}", title=f"step {n}") for n in range(8)]
            task = (await stub.CreateTask(pb.CreateTaskRequest(name="deploy", callback_url=receiver.url,
                                                               plan=plan))).task
            await _work(stub, task.id, ["s0", "s1", "s2"], task_pb2.TASK_STATUS_EXECUTING)
            expected = await _expected_cursors(stub, task.id, DEFAULT_TYPES_SENT)
            await _eventually(lambda: _async(receiver.message_ids() == expected), what="the first events")
            assert len(receiver.received) == len(expected)  # exactly once while the receiver is up
            body = receiver.received[0].body
            assert body["task_id"] == task.id and str(body["cursor"]) == expected[0]
            assert body["event"]["type"] == "EVENT_TYPE_TASK_CREATED"
            assert body["event"]["payload"]["callback_url"] == receiver.url

            receiver.stop()
            await _work(stub, task.id, ["s3", "s4"], task_pb2.TASK_STATUS_SYNTHESIZING)

            async def backing_off() -> bool:
                pending = await _deliveries(stub, task.id, [PENDING])
                return bool(pending) and pending[0].attempts >= 2
            await _eventually(backing_off, what="a delivery to back off")
            pending = (await _deliveries(stub, task.id, [PENDING]))[0]
            assert pending.last_status_code == 0 and pending.last_error
            assert pending.next_attempt_time.ToMicroseconds() > pending.last_attempt_time.ToMicroseconds()

        server.restart()  # mid-backoff: the pending delivery and its attempts are in the database
        async with grpc.aio.insecure_channel(server.address) as channel:
            stub = TaskServiceStub(channel)
            after_restart = (await _deliveries(stub, task.id, [PENDING]))[0]
            assert after_restart.cursor == pending.cursor and after_restart.attempts >= pending.attempts
            await _work(stub, task.id, ["s5", "s6"], task_pb2.TASK_STATUS_COMPLETED)
            receiver.start()  # the same port
            expected = await _expected_cursors(stub, task.id, DEFAULT_TYPES_SENT)
            await _eventually(lambda: _async(set(receiver.message_ids()) >= set(expected)), what="every event")
            _assert_in_order_once_per_id(receiver, expected)

            async def all_delivered() -> bool:
                rows = await _deliveries(stub, task.id)
                return [str(d.cursor) for d in rows] == expected and all(d.state == DELIVERED for d in rows)
            await _eventually(all_delivered, what="every delivery stored as delivered")
            assert any(d.attempts > 1 for d in await _deliveries(stub, task.id))
    finally:
        server.stop()


async def test_a_host_not_allowed_is_never_contacted_and_redirects_are_not_followed_and_the_cli_shows_it(
        tmp_path: Path, receiver: WebhookReceiver) -> None:
    target = WebhookReceiver()  # where the redirect points: must never be reached
    target.start()
    server = _server(tmp_path, TASKMEM_WEBHOOK_ALLOWED_HOSTS=f"127.0.0.1:{receiver.port},hooks.example.com",
                     TASKMEM_WEBHOOK_RETRY_PERIOD_SECONDS="1")
    server.start()
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            stub = TaskServiceStub(channel)
            receiver.secret = (await stub.GetWebhookSecret(pb.GetWebhookSecretRequest())).secret
            receiver.status, receiver.headers = 307, {"Location": target.url}
            refused = (await stub.CreateTask(pb.CreateTaskRequest(
                name="refused", callback_url=f"http://localhost:{target.port}/hook"))).task
            redirected = (await stub.CreateTask(pb.CreateTaskRequest(name="redirected",
                                                                     callback_url=receiver.url))).task

            async def dead_lettered() -> bool:
                return bool(await _deliveries(stub, redirected.id, [DEAD_LETTERED]))
            await _eventually(dead_lettered, what="the redirected delivery to be dead-lettered")
            row = (await _deliveries(stub, redirected.id))[0]
            assert row.last_status_code == 307 and "redirect" in row.last_error and row.attempts >= 2
            assert await _deliveries(stub, refused.id) == []
        assert receiver.requests >= 2
        assert target.requests == 0  # neither the not-allowed host ("localhost") nor the redirect's target

        listing = subprocess.run([sys.executable, "-m", "taskmem", "webhooks", "list", "--state", "dead_lettered",
                                  "--address", server.address], capture_output=True, text=True, timeout=60)
        assert listing.returncode == 0, listing.stderr
        assert redirected.id in listing.stdout and "dead_lettered" in listing.stdout
        assert refused.id not in listing.stdout
        secret = subprocess.run([sys.executable, "-m", "taskmem", "webhooks", "secret", "--address", server.address],
                                capture_output=True, text=True, timeout=60)
        assert secret.stdout.strip() == receiver.secret
    finally:
        server.stop()
        target.stop()


async def test_nothing_is_sent_while_the_allow_list_is_empty(tmp_path: Path, receiver: WebhookReceiver) -> None:
    server = ServerProcess(tmp_path / "taskmem.db")  # the default: webhook_allowed_hosts empty
    server.start()
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            stub = TaskServiceStub(channel)
            task = (await stub.CreateTask(pb.CreateTaskRequest(name="quiet", callback_url=receiver.url))).task
            await _work(stub, task.id, [], task_pb2.TASK_STATUS_EXECUTING)
            await asyncio.sleep(1.0)
            assert await _deliveries(stub) == []
        assert receiver.requests == 0
    finally:
        server.stop()


async def test_a_task_chooses_which_event_types_it_is_sent(tmp_path: Path, receiver: WebhookReceiver) -> None:
    server = _server(tmp_path, receiver)
    server.start()
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            stub = TaskServiceStub(channel)
            receiver.secret = (await stub.GetWebhookSecret(pb.GetWebhookSecretRequest())).secret
            task = (await stub.CreateTask(pb.CreateTaskRequest(
                name="actions", callback_url=receiver.url, webhook_event_types=[event_pb2.EVENT_TYPE_ACTION_RECORDED],
                plan=[task_pb2.PlanItemSpec(id="a", title="a")]))).task
            assert list(task.webhook_event_types) == [event_pb2.EVENT_TYPE_ACTION_RECORDED]
            await _work(stub, task.id, ["a"], task_pb2.TASK_STATUS_EXECUTING)
            actions = await _expected_cursors(stub, task.id, {event_pb2.EVENT_TYPE_ACTION_RECORDED})
            await _eventually(lambda: _async(receiver.message_ids() == actions), what="the action event")

            changed = await stub.UpdateTask(pb.UpdateTaskRequest(
                task=task_pb2.Task(id=task.id, webhook_event_types=[event_pb2.EVENT_TYPE_TASK_STATUS_CHANGED]),
                update_mask=field_mask_pb2.FieldMask(paths=["webhook_event_types"])))
            assert list(changed.task.webhook_event_types) == [event_pb2.EVENT_TYPE_TASK_STATUS_CHANGED]
            await _work(stub, task.id, [], task_pb2.TASK_STATUS_COMPLETED)
            status = await _expected_cursors(stub, task.id, {event_pb2.EVENT_TYPE_TASK_STATUS_CHANGED})
            # The new selection applies to every event not yet delivered: both status changes go.
            await _eventually(lambda: _async(receiver.message_ids() == actions + status), what="the status changes")
            assert receiver.received[-1].body["event"]["payload"]["to"] == "TASK_STATUS_COMPLETED"

            with pytest.raises(grpc.aio.AioRpcError) as raised:
                await stub.CreateTask(pb.CreateTaskRequest(name="bad", webhook_event_types=[999]))
            assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert "webhook_event_types" in (raised.value.details() or "")
    finally:
        server.stop()


async def test_finished_delivery_rows_are_pruned_after_their_retention_and_never_sent_again(
        tmp_path: Path, receiver: WebhookReceiver) -> None:
    failing = WebhookReceiver()
    failing.status = 500
    failing.start()
    server = _server(tmp_path, receiver, failing, TASKMEM_WEBHOOK_RETRY_PERIOD_SECONDS="0.5",
                     TASKMEM_MAINTENANCE_INTERVAL_SECONDS="0.3",
                     TASKMEM_WEBHOOK_DELIVERED_RETENTION_SECONDS="1.5",
                     TASKMEM_WEBHOOK_DEAD_LETTER_RETENTION_SECONDS="3600")
    server.start()
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            stub = TaskServiceStub(channel)
            receiver.secret = (await stub.GetWebhookSecret(pb.GetWebhookSecretRequest())).secret
            plan = [task_pb2.PlanItemSpec(id=f"s{n}", title=f"step {n}") for n in range(4)]
            task = (await stub.CreateTask(pb.CreateTaskRequest(name="kept short", callback_url=receiver.url,
                                                               plan=plan))).task
            doomed = (await stub.CreateTask(pb.CreateTaskRequest(name="dead letters", callback_url=failing.url))).task
            await _work(stub, task.id, ["s0", "s1"], task_pb2.TASK_STATUS_EXECUTING)
            first = await _expected_cursors(stub, task.id, DEFAULT_TYPES_SENT)
            await _eventually(lambda: _async(receiver.message_ids() == first), what="the first events")
            await _eventually(lambda: _async_len(_deliveries(stub, doomed.id, [DEAD_LETTERED])),
                              what="a dead-lettered delivery")

            async def delivered_rows_pruned() -> bool:
                return await _deliveries(stub, task.id) == []
            await _eventually(delivered_rows_pruned, what="delivered rows to be pruned")
            assert await _deliveries(stub, doomed.id, [DEAD_LETTERED])  # its retention is an hour: still visible

            await _work(stub, task.id, ["s2"], task_pb2.TASK_STATUS_COMPLETED)
            every = await _expected_cursors(stub, task.id, DEFAULT_TYPES_SENT)
            await _eventually(lambda: _async(receiver.message_ids() == every), what="the later events")
            await asyncio.sleep(0.5)
            assert receiver.message_ids() == every  # the task's cursor was kept: no pruned event sent again

        server.stop()
        server.env["TASKMEM_WEBHOOK_DEAD_LETTER_RETENTION_SECONDS"] = "0.5"
        server.start()
        async with grpc.aio.insecure_channel(server.address) as channel:
            stub = TaskServiceStub(channel)

            async def dead_letters_pruned() -> bool:
                return await _deliveries(stub, doomed.id) == []
            await _eventually(dead_letters_pruned, what="dead-lettered rows to be pruned")
    finally:
        server.stop()
        failing.stop()


async def _async_len(rows: Awaitable[list[webhook_pb2.WebhookDelivery]]) -> bool:
    return bool(await rows)


async def _async(value: bool) -> bool:
    return value
