"""Asking a person: a wait of kind INPUT or AUTH puts the task (or one plan item) in INPUT_REQUIRED or
AUTH_REQUIRED until someone answers it (ResolveWait, the web view, an A2A message).

    asked = await client.ask_person(task_id, "Which region?", asked_of="release manager")
    answer = await client.answer_of(asked.id)
    if answer.given:
        region = answer.text
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable

import grpc
from google.protobuf import duration_pb2

from taskmem.v1 import wait_pb2, wait_service_pb2, wait_service_pb2_grpc
from taskmem_client.errors import TaskmemError
from taskmem_client.events import RESUMABLE_CODES


@dataclasses.dataclass
class Answer:
    """How a question ended: `given` (answered), `refused` (ResolveWait with FAILED), or neither (it timed
    out or was cancelled); `text` is the answer, the refusal or why it ended."""

    wait: wait_pb2.Wait

    @property
    def given(self) -> bool:
        return self.wait.status == wait_pb2.WAIT_STATUS_RESOLVED

    @property
    def refused(self) -> bool:
        return self.wait.status == wait_pb2.WAIT_STATUS_FAILED

    @property
    def text(self) -> str:
        return self.wait.result


async def ask_person(waits: wait_service_pb2_grpc.WaitServiceAsyncStub, task_id: str, question: str, *,
                     asked_of: str = "", auth: bool = False, plan_item_id: str = "",
                     timeout: float | None = None) -> wait_pb2.Wait:
    """Open a wait on a person: the question (or, with auth, what to authorise) for asked_of, about the task
    or one plan item of it; the wait, WAITING."""
    kind = wait_pb2.EXTERNAL_WAIT_KIND_AUTH if auth else wait_pb2.EXTERNAL_WAIT_KIND_INPUT
    request = wait_service_pb2.CreateWaitRequest(task_id=task_id, target=wait_pb2.WaitTarget(
        external=wait_pb2.ExternalTarget(resolver=asked_of, kind=kind, question=question, plan_item_id=plan_item_id)))
    if timeout is not None:
        request.timeout.CopyFrom(duration_pb2.Duration(seconds=int(timeout), nanos=round((timeout % 1) * 1e9)))
    return (await waits.CreateWait(request)).wait


async def answer_of(waits: wait_service_pb2_grpc.WaitServiceAsyncStub, wait_id: str, *,
                    reconnect_delay: float = 0.5, closed: Callable[[], bool] = lambda: False) -> Answer:
    """Wait for the question to end and return how it ended. Watches the wait (WatchWait), watching again when
    the stream breaks with a code in RESUMABLE_CODES (the server restarting): every message is the wait as
    stored now, so nothing is missed. Other errors (NOT_FOUND, ...) are raised as TaskmemError."""
    while True:
        call = waits.WatchWait(wait_service_pb2.WatchWaitRequest(wait_id=wait_id), timeout=None)
        try:
            async for reply in call:
                if reply.wait.status != wait_pb2.WAIT_STATUS_WAITING:
                    return Answer(reply.wait)
        except grpc.aio.AioRpcError as error:
            failure = TaskmemError.wrap(error)
            if failure.code() not in RESUMABLE_CODES or closed():
                raise failure from None
        finally:
            call.cancel()
        await asyncio.sleep(reconnect_delay)
