"""Many agents on one plan: claim the next ready item, and keep its lease while working on it.

    claimed = await client.claim_next(task_id, "agent-3", lease=30)
    while claimed is not None:
        async with client.keep_lease(claimed) as lease:
            ...  # work; lease.lost is set if another agent took the item over
            await client.tasks.UpdatePlanItem(UpdatePlanItemRequest(
                task_id=task_id, item_id=claimed.item.id, holder_id="agent-3", status=PLAN_ITEM_STATUS_COMPLETED))
        claimed = await client.claim_next(task_id, "agent-3", lease=30)
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections.abc import Callable, Sequence
from types import TracebackType

from google.protobuf import duration_pb2

from taskmem.v1 import task_pb2
from taskmem.v1 import task_service_pb2 as pb
from taskmem.v1 import task_service_pb2_grpc
from taskmem_client.errors import TaskmemError

log = logging.getLogger(__name__)

CLAIM_NOT_HELD = "ERROR_REASON_CLAIM_NOT_HELD"


def _duration(seconds: float) -> duration_pb2.Duration:
    whole = int(seconds)
    return duration_pb2.Duration(seconds=whole, nanos=round((seconds - whole) * 1e9))


@dataclasses.dataclass
class ClaimedItem:
    """An item ClaimPlanItem handed to this holder, and the lease on it."""

    item: task_pb2.PlanItem
    claim: task_pb2.PlanItemClaim
    lease: float  # seconds, as asked for

    @property
    def task_id(self) -> str:
        return self.claim.task_id

    @property
    def holder_id(self) -> str:
        return self.claim.holder_id


async def claim_next(tasks: task_service_pb2_grpc.TaskServiceAsyncStub, task_id: str, holder_id: str, *,
                     lease: float = 30.0, item_id: str = "", stages: Sequence[str] = (),
                     tool_names: Sequence[str] = (), wait: bool = True, poll: float = 0.5) -> ClaimedItem | None:
    """The next ready item of the task's plan, claimed for holder_id; None once nothing matching is left
    (every matching item done or failed). With wait (the default), while matching items remain but none
    is ready (held by others, or waiting on dependencies) it asks again every `poll` seconds; without,
    it returns None at once then too."""
    request = pb.ClaimPlanItemRequest(task_id=task_id, holder_id=holder_id, lease=_duration(lease), item_id=item_id,
                                      stages=stages, tool_names=tool_names)
    while True:
        answer = await tasks.ClaimPlanItem(request)
        if answer.HasField("item"):
            return ClaimedItem(answer.item, answer.claim, lease)
        if answer.remaining_count == 0 or not wait:
            return None
        await asyncio.sleep(poll)


class LeaseKeeper:
    """Renews a claim in the background every third of its lease until the block ends or the claim is lost.

    Lost means the server refused a renewal (another agent holds the item now, or nobody: `lost_to` says
    who, "" for nobody), or no renewal succeeded before the lease ran out (the server unreachable).
    Then `lost` is set, on_lost(keeper) is called, and renewing stops; the work should stop too, since
    UpdatePlanItem with this holder id will be refused. Leaving the block with an exception while the
    claim is still held releases it (ReleaseClaim), so another agent can take the item at once;
    leaving it normally leaves the claim as it is (finish the item with UpdatePlanItem inside)."""

    def __init__(self, tasks: task_service_pb2_grpc.TaskServiceAsyncStub, claimed: ClaimedItem, *,
                 on_lost: Callable[[LeaseKeeper], None] | None = None) -> None:
        self._tasks = tasks
        self.claimed = claimed
        self.lost = asyncio.Event()
        self.lost_to: str | None = None
        self._on_lost = on_lost
        self._renewing: asyncio.Task[None] | None = None

    @property
    def expire_time(self) -> float:
        """When the lease ends unless renewed (seconds since the epoch), as the server last said."""
        return self.claimed.claim.expire_time.ToMicroseconds() / 1e6

    async def __aenter__(self) -> LeaseKeeper:
        self._renewing = asyncio.create_task(self._renew_forever(), name=f"taskmem-lease-{self.claimed.item.id}")
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        traceback: TracebackType | None) -> None:
        await self.stop()
        if exc is not None and not self.lost.is_set():
            with contextlib.suppress(TaskmemError):
                await self._tasks.ReleaseClaim(pb.ReleaseClaimRequest(
                    task_id=self.claimed.task_id, item_id=self.claimed.item.id, holder_id=self.claimed.holder_id))

    async def stop(self) -> None:
        """Stop renewing (the claim stays until its lease ends or the item is finished)."""
        if self._renewing is not None:
            self._renewing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._renewing
            self._renewing = None

    def _lose(self, holder: str) -> None:
        self.lost_to = holder
        self.lost.set()
        if self._on_lost is not None:
            self._on_lost(self)

    async def _renew_forever(self) -> None:
        request = pb.RenewClaimRequest(task_id=self.claimed.task_id, item_id=self.claimed.item.id,
                                       holder_id=self.claimed.holder_id, lease=_duration(self.claimed.lease))
        while True:
            await asyncio.sleep(self.claimed.lease / 3)
            try:
                self.claimed.claim = (await self._tasks.RenewClaim(request, timeout=self.claimed.lease / 3)).claim
            except TaskmemError as error:
                if error.reason == CLAIM_NOT_HELD:
                    info = error.error_info
                    self._lose(info.metadata.get("holder_id", "") if info is not None else "")
                    return
                if time.time() >= self.expire_time:  # unreachable until the lease ran out: assume it is gone
                    self._lose("")
                    return
                log.warning("renewing the claim of %s failed (%s); trying again", self.claimed.item.id, error)
