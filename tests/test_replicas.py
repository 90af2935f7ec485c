"""Three `taskmem serve` replicas on one PostgreSQL database (whatever --engine says: replicas need it).

Writes spread across the replicas, a subscriber on each, one replica SIGKILLed mid-run and restarted:
every acknowledged write is there, every subscriber's stream is ListEvents exactly, each wait ends once
(those the killed replica created are ended by the others), a retry sent to two replicas writes once,
and an etag admits one of two concurrent updates.
"""

from __future__ import annotations

import asyncio
import signal
from collections import Counter
from pathlib import Path

import grpc
import pytest
from google.protobuf import duration_pb2, field_mask_pb2

from taskmem.v1 import event_pb2, task_pb2, wait_pb2
from taskmem.v1 import task_service_pb2 as pb
from taskmem.v1 import wait_service_pb2 as wpb
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from taskmem.v1.wait_service_pb2_grpc import WaitServiceStub
from tests.support.postgres import database_url
from tests.support.server_process import ServerOnDatabase
from tests.support.eventually import eventually

END_TYPES = {event_pb2.EVENT_TYPE_WAIT_RESOLVED, event_pb2.EVENT_TYPE_WAIT_TIMED_OUT,
             event_pb2.EVENT_TYPE_WAIT_CANCELLED, event_pb2.EVENT_TYPE_WAIT_FAILED}



class Subscriber:
    """Follows one replica's SubscribeEvents, resuming after the last cursor it saw when the stream breaks."""

    def __init__(self, replica: ServerOnDatabase) -> None:
        self.replica = replica
        self.cursors: list[int] = []
        self.task = asyncio.create_task(self._follow())

    async def _follow(self) -> None:
        while True:
            try:
                async with grpc.aio.insecure_channel(self.replica.address) as channel:
                    after = self.cursors[-1] if self.cursors else 0
                    async for response in TaskServiceStub(channel).SubscribeEvents(
                            pb.SubscribeEventsRequest(after_cursor=after)):
                        self.cursors.append(response.event.cursor)
            except grpc.aio.AioRpcError:
                await asyncio.sleep(0.2)  # the replica is down: resume when it is back

    async def reach(self, cursor: int, timeout: float = 30.0) -> None:
        deadline = asyncio.get_running_loop().time() + timeout
        while not self.cursors or self.cursors[-1] < cursor:
            assert asyncio.get_running_loop().time() < deadline, f"stuck at {self.cursors[-1:]} < {cursor}"
            await asyncio.sleep(0.1)


async def all_events(tasks: TaskServiceStub) -> list[event_pb2.Event]:
    events: list[event_pb2.Event] = []
    token = ""
    while True:
        page = await tasks.ListEvents(pb.ListEventsRequest(page_size=500, page_token=token))
        events.extend(page.events)
        token = page.next_page_token
        if not token:
            return events


async def record(tasks: TaskServiceStub, task_id: str, n: int) -> str:
    """RecordAction, retried while the replica is UNAVAILABLE (as clients do: the request id makes it safe)."""
    request = pb.RecordActionRequest(task_id=task_id, type=task_pb2.ACTION_TYPE_CLI, summary=f"step {n}",
                                     request_id=f"step-{n}")
    async def attempt() -> str | None:
        try:
            return (await tasks.RecordAction(request)).action.id
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.UNAVAILABLE:
                raise
            return None
    return await eventually(attempt, f"step {n} acknowledged", interval=0.1)


def timer(seconds: float) -> wait_pb2.WaitTarget:
    duration = duration_pb2.Duration()
    duration.FromMilliseconds(int(seconds * 1000))
    return wait_pb2.WaitTarget(timer=wait_pb2.TimerTarget(duration=duration))


@pytest.fixture
def replicas(tmp_path: Path):  # type: ignore[no-untyped-def]
    url = database_url(str(tmp_path / "replicas"))
    started = [ServerOnDatabase(url) for _ in range(3)]
    for replica in started:
        replica.start()
    yield started
    for replica in started:
        print(f"--- replica {replica.address} (exit {replica.process.poll() if replica.process else None}):\n"
              + "".join(replica.output[-40:]))  # shown when the test fails
        if replica.process is not None and replica.process.poll() is None:
            replica.stop()


async def test_replicas_keep_every_write_stream_without_gaps_and_end_each_wait_once(
        replicas: list[ServerOnDatabase]) -> None:
    a, b, c = replicas
    channels = {r: grpc.aio.insecure_channel(r.address) for r in replicas}
    tasks = {r: TaskServiceStub(ch) for r, ch in channels.items()}
    waits = {r: WaitServiceStub(ch) for r, ch in channels.items()}
    subscribers = [Subscriber(r) for r in replicas]
    try:
        task_ids = [(await tasks[r].CreateTask(pb.CreateTaskRequest(name=f"on {n}"))).task.id
                    for n, r in enumerate(replicas)]
        acknowledged: dict[str, str] = {}  # action id -> task id

        async def spread(numbers: range, live: list[ServerOnDatabase]) -> None:
            ids = await asyncio.gather(*(record(tasks[live[n % len(live)]], task_ids[n % 3], n) for n in numbers))
            acknowledged.update({action_id: task_ids[n % 3] for n, action_id in zip(numbers, ids)})

        await spread(range(0, 60), replicas)
        # Waits made on the replica about to die, due while it is down: the others must end them.
        orphans = [(await waits[b].CreateWait(wpb.CreateWaitRequest(task_id=task_ids[1], target=timer(1.5)))).wait.id
                   for _ in range(3)]
        b.stop(signal.SIGKILL)
        await spread(range(60, 120), [a, c])
        await asyncio.sleep(2.0)
        b.start()
        await channels[b].close()  # its reconnection backoff would outlast the restart
        channels[b] = grpc.aio.insecure_channel(b.address)
        tasks[b], waits[b] = TaskServiceStub(channels[b]), WaitServiceStub(channels[b])
        await spread(range(120, 180), replicas)
        everywhere = [(await waits[r].CreateWait(wpb.CreateWaitRequest(task_id=task_ids[0], target=timer(0.5)))).wait.id
                      for r in replicas]

        # A retry sent to two replicas at once writes once.
        retry = pb.CreateTaskRequest(name="retried", request_id="create-once")
        first, second = await asyncio.gather(tasks[a].CreateTask(retry), tasks[c].CreateTask(retry))
        assert first.task.id == second.task.id
        # An etag admits one of two concurrent updates.
        current = (await tasks[a].GetTask(pb.GetTaskRequest(task_id=task_ids[2]))).task
        updates = [pb.UpdateTaskRequest(task=task_pb2.Task(id=current.id, name=name, etag=current.etag),
                                        update_mask=field_mask_pb2.FieldMask(paths=["name"]))
                   for name in ("renamed by a", "renamed by c")]
        outcomes = await asyncio.gather(tasks[a].UpdateTask(updates[0]), tasks[c].UpdateTask(updates[1]),
                                        return_exceptions=True)
        codes = sorted(o.code().name if isinstance(o, grpc.aio.AioRpcError) else "OK" for o in outcomes)
        assert codes == ["ABORTED", "OK"]

        for wait_id in [*orphans, *everywhere]:
            async def ended(wait_id: str = wait_id) -> wait_pb2.Wait | None:
                wait = (await waits[c].GetWait(wpb.GetWaitRequest(wait_id=wait_id))).wait
                return wait if wait.status != wait_pb2.WAIT_STATUS_WAITING else None
            wait = await eventually(ended, f"wait {wait_id} ended", interval=0.1)
            assert wait.status == wait_pb2.WAIT_STATUS_RESOLVED, wait

        events = await all_events(tasks[a])
        cursors = [event.cursor for event in events]
        assert cursors == sorted(set(cursors))
        for subscriber in subscribers:
            await subscriber.reach(cursors[-1])
            assert subscriber.cursors == cursors, f"the stream of {subscriber.replica.address} differs"
        ended = Counter(e.payload["id"] for e in events if e.type in END_TYPES)
        assert all(ended[wait_id] == 1 for wait_id in [*orphans, *everywhere]), ended
        for task_id in task_ids:
            listed = await tasks[b].ListActions(pb.ListActionsRequest(task_id=task_id, page_size=500))
            stored = {action.id for action in listed.actions}
            assert {i for i, t in acknowledged.items() if t == task_id} <= stored
        assert len(acknowledged) == 180
    finally:
        for subscriber in subscribers:
            subscriber.task.cancel()
        await asyncio.gather(*(s.task for s in subscribers), return_exceptions=True)
        for channel in channels.values():
            await channel.close()
