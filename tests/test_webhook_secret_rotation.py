"""Rotating the webhook signing secret end to end: a real server signs each delivery to a loopback receiver
with the new secret and, for the overlap, the replaced one too (Standard Webhooks' several signatures);
receivers check with the reference library."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import grpc
import pytest
from google.protobuf import duration_pb2, field_mask_pb2
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from taskmem.core.ids import now_us
from taskmem.v1 import task_pb2, webhook_pb2
from taskmem.v1 import task_service_pb2 as pb
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from tests.support.postgres import database_url
from tests.support.server_process import ServerOnDatabase, ServerProcess
from tests.support.webhook_receiver import Received, WebhookReceiver

WEBHOOKS = {
    "TASKMEM_WEBHOOK_BACKOFF_INITIAL_SECONDS": "0.2",
    "TASKMEM_WEBHOOK_BACKOFF_MAX_SECONDS": "0.5",
    "TASKMEM_WEBHOOK_RETRY_PERIOD_SECONDS": "120",
    "TASKMEM_WEBHOOK_ATTEMPT_TIMEOUT_SECONDS": "2",
}
WEEK = 7 * 24 * 3600


def _webhooks_to(receiver: WebhookReceiver) -> dict[str, str]:
    """The settings of a server whose webhooks may reach this loopback receiver (listed by address and port)."""
    return {**WEBHOOKS, "TASKMEM_WEBHOOK_ALLOWED_HOSTS": f"127.0.0.1:{receiver.port}"}


async def _eventually(check: Callable[[], bool | Awaitable[bool]], what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        done = check()
        if done if isinstance(done, bool) else await done:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


def _verifies(secret: str, received: Received) -> bool:
    try:
        Webhook(secret).verify(received.raw, received.headers)
    except WebhookVerificationError:
        return False
    return True


async def _rename(stub: TaskServiceStub, task_id: str, name: str) -> None:
    """A TASK_UPDATED event, one of the types a task's webhook carries by default."""
    await stub.UpdateTask(pb.UpdateTaskRequest(task=task_pb2.Task(id=task_id, name=name),
                                               update_mask=field_mask_pb2.FieldMask(paths=["name"])))


async def test_during_the_overlap_a_delivery_verifies_with_the_old_or_the_new_secret_and_after_it_only_the_new(
        tmp_path: Path, receiver: WebhookReceiver) -> None:
    server = ServerProcess(tmp_path / "taskmem.db", env=_webhooks_to(receiver))
    server.start()
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            stub = TaskServiceStub(channel)
            old = receiver.secret = (await stub.GetWebhookSecret(pb.GetWebhookSecretRequest())).secret
            task = (await stub.CreateTask(pb.CreateTaskRequest(name="rotate", callback_url=receiver.url))).task
            await _eventually(lambda: len(receiver.received) == 1, "the creation")
            assert len(receiver.received[0].headers["webhook-signature"].split()) == 1

            asked_at = now_us()
            rotated = await stub.RotateWebhookSecret(pb.RotateWebhookSecretRequest(
                overlap=duration_pb2.Duration(seconds=2)))
            new = rotated.secret
            assert new.startswith("whsec_") and new != old
            assert (await stub.GetWebhookSecret(pb.GetWebhookSecretRequest())).secret == new
            until = rotated.previous_secret_expire_time.ToMicroseconds()
            assert asked_at + 2_000_000 <= until <= now_us() + 2_000_000

            receiver.secret = new
            await _rename(stub, task.id, "rotate: during the overlap")
            await _eventually(lambda: len(receiver.received) == 2, "the delivery during the overlap")
            during = receiver.received[1]
            assert int(during.headers["webhook-timestamp"]) * 1_000_000 < until
            assert len(during.headers["webhook-signature"].split()) == 2  # "v1,<new> v1,<old>"
            assert _verifies(new, during) and _verifies(old, during)

            await asyncio.sleep(max(0.0, (until - now_us()) / 1_000_000) + 0.2)
            await _rename(stub, task.id, "rotate: after the overlap")
            await _eventually(lambda: len(receiver.received) == 3, "the delivery after the overlap")
            after = receiver.received[2]
            assert len(after.headers["webhook-signature"].split()) == 1
            assert _verifies(new, after) and not _verifies(old, after)
            assert not receiver.rejected
    finally:
        server.stop()


async def test_a_delivery_retried_across_a_rotation_is_signed_with_the_new_secret_at_its_next_attempt(
        tmp_path: Path, receiver: WebhookReceiver) -> None:
    """The secret is read at each attempt: a delivery backing off when the secret is rotated with no overlap
    (here with the CLI) reaches a receiver that already refuses the old secret."""
    server = ServerProcess(tmp_path / "taskmem.db", env=_webhooks_to(receiver))
    server.start()
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            stub = TaskServiceStub(channel)
            old = receiver.secret = (await stub.GetWebhookSecret(pb.GetWebhookSecretRequest())).secret
            receiver.status = 500
            task = (await stub.CreateTask(pb.CreateTaskRequest(name="retried", callback_url=receiver.url))).task

            async def backing_off() -> bool:
                pending = (await stub.ListWebhookDeliveries(pb.ListWebhookDeliveriesRequest(
                    task_id=task.id, states=[webhook_pb2.WEBHOOK_DELIVERY_STATE_PENDING]))).deliveries
                return bool(pending) and pending[0].attempts >= 1
            await _eventually(backing_off, "a failed attempt")

            rotated = subprocess.run([sys.executable, "-m", "taskmem", "webhooks", "rotate-secret", "--overlap", "0",
                                      "--address", server.address], capture_output=True, text=True, timeout=60)
            assert rotated.returncode == 0, rotated.stderr
            new = rotated.stdout.strip()
            assert new.startswith("whsec_") and new != old
            assert "no longer signs" in rotated.stderr
            assert (await stub.GetWebhookSecret(pb.GetWebhookSecretRequest())).secret == new
            receiver.secret, receiver.refuse_unverified, receiver.status = new, True, 200

            await _eventually(lambda: len(receiver.received) == 1, "the retried delivery, signed with the new secret")
            assert not _verifies(old, receiver.received[0])
    finally:
        server.stop()


async def test_a_bad_overlap_is_invalid_argument_naming_it_and_a_retry_with_its_request_id_returns_the_same_secret(
        tmp_path: Path) -> None:
    server = ServerProcess(tmp_path / "taskmem.db", env={"TASKMEM_API_KEYS": "a-key:alpha;b-key:beta"})
    server.start()
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            stub = TaskServiceStub(channel)
            alpha, beta = (("authorization", "Bearer a-key"),), (("authorization", "Bearer b-key"),)
            for bad, why in [(duration_pb2.Duration(seconds=-1), "negative"),
                             (duration_pb2.Duration(seconds=WEEK + 1), "7 days"),
                             (duration_pb2.Duration(seconds=400 * 24 * 3600), "year")]:
                with pytest.raises(grpc.aio.AioRpcError) as raised:
                    await stub.RotateWebhookSecret(pb.RotateWebhookSecretRequest(overlap=bad), metadata=alpha)
                assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
                assert (raised.value.details() or "").startswith("overlap:") and why in (raised.value.details() or "")

            # A namespace's first secret replaces none: nothing else signs.
            first = await stub.RotateWebhookSecret(pb.RotateWebhookSecretRequest(), metadata=alpha)
            assert not first.HasField("previous_secret_expire_time")
            # Unset overlap: a day; at most exactly a week.
            asked_at = now_us()
            daily = await stub.RotateWebhookSecret(pb.RotateWebhookSecretRequest(), metadata=alpha)
            assert daily.previous_secret_expire_time.ToMicroseconds() - asked_at == pytest.approx(
                24 * 3600 * 1_000_000, abs=5_000_000)
            weekly = await stub.RotateWebhookSecret(pb.RotateWebhookSecretRequest(
                overlap=duration_pb2.Duration(seconds=WEEK), request_id="rotate-weekly"), metadata=alpha)
            assert weekly.previous_secret_expire_time.ToMicroseconds() - asked_at == pytest.approx(
                WEEK * 1_000_000, abs=5_000_000)

            again = await stub.RotateWebhookSecret(pb.RotateWebhookSecretRequest(
                overlap=duration_pb2.Duration(seconds=WEEK), request_id="rotate-weekly"), metadata=alpha)
            assert again == weekly  # the same secret, nothing rotated
            assert (await stub.GetWebhookSecret(pb.GetWebhookSecretRequest(), metadata=alpha)).secret == weekly.secret
            with pytest.raises(grpc.aio.AioRpcError) as reused:
                await stub.RotateWebhookSecret(pb.RotateWebhookSecretRequest(request_id="rotate-weekly"), metadata=alpha)
            assert reused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert "request_id" in (reused.value.details() or "")

            # A namespace's secret is its own: rotating another namespace's leaves it alone.
            other = await stub.RotateWebhookSecret(pb.RotateWebhookSecretRequest(), metadata=beta)
            assert other.secret != weekly.secret
            assert (await stub.GetWebhookSecret(pb.GetWebhookSecretRequest(), metadata=alpha)).secret == weekly.secret
    finally:
        server.stop()


async def test_a_rotation_through_either_replica_signs_the_next_delivery_of_the_one_holding_the_webhook_lease(
        tmp_path: Path, receiver: WebhookReceiver) -> None:
    """On PostgreSQL (whatever --engine says): the secret is read from the database at each attempt, so
    whichever replica delivers signs with the secret rotated through the other one (each has signed with
    the old one before)."""
    url = database_url(str(tmp_path / "rotation-replicas"))
    sender, other = ServerOnDatabase(url, env=_webhooks_to(receiver)), ServerOnDatabase(url, env=_webhooks_to(receiver))
    sender.start()
    other.start()
    try:
        async with grpc.aio.insecure_channel(sender.address) as to_sender, \
                grpc.aio.insecure_channel(other.address) as to_other:
            via_sender, via_other = TaskServiceStub(to_sender), TaskServiceStub(to_other)
            old = receiver.secret = (await via_sender.GetWebhookSecret(pb.GetWebhookSecretRequest())).secret
            task = (await via_sender.CreateTask(pb.CreateTaskRequest(name="replicas", callback_url=receiver.url))).task
            await _eventually(lambda: len(receiver.received) == 1, "the creation")

            new = (await via_other.RotateWebhookSecret(pb.RotateWebhookSecretRequest(
                overlap=duration_pb2.Duration(seconds=0)))).secret
            receiver.secret, receiver.refuse_unverified = new, True
            await _rename(via_other, task.id, "replicas: rotated")
            await _eventually(lambda: len(receiver.received) == 2, "the delivery after the rotation")
            assert not _verifies(old, receiver.received[1])
    finally:
        other.stop()
        sender.stop()
