"""SubscribeToTask delivery latency (issue 30's measure): from an event written through gRPC to an A2A
client (the a2a-sdk's, over A2A's gRPC binding) receiving it, p50/p99, in one run:

- `taskmem a2a` (the front end over taskmem's own tasks): PostMessage to taskmem, the front end on the
  same server (SQLite) or on the other of two PostgreSQL replicas;
- an a2a-sdk agent server (DefaultRequestHandler + GrpcHandler, in this process) whose task store and
  event stream are taskmem's (taskmem_a2a: each save is an UpdateTask over gRPC to taskmem; the stream
  is SubscribeEvents), on SQLite and across two PostgreSQL replicas (the save on one, the subscriber's
  handler on the other);
- the same agent server on the SDK's own VersionedDatabaseTaskStore + DatabaseTaskEventStream at its
  default poll interval (0.5 s), the save through one SQLAlchemy engine and the subscriber's handler on
  another (two "replicas" of one SQLite file or one PostgreSQL database).

Writes go one at a time, each once the previous one was received and a random 0-0.5 s later (so they
do not fall in step with a poll). Latency = received - the moment before the write call (so it holds
the write itself).

    .venv/bin/python bench/a2a_bench.py [--events 100] [--engines sqlite,postgres]

Needs the a2a extra and, for the SDK's own stores, SQLAlchemy with aiosqlite and asyncpg
(`a2a-sdk[sqlite,postgresql]`, in the dev extra).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")

import grpc  # noqa: E402
from a2a.client import ClientConfig, create_client  # noqa: E402
from a2a.server.agent_execution import AgentExecutor, RequestContext  # noqa: E402
from a2a.server.cluster import TaskVersion  # noqa: E402
from a2a.server.context import ServerCallContext  # noqa: E402
from a2a.server.events import EventQueue  # noqa: E402
from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler  # noqa: E402
from a2a.types.a2a_pb2 import (  # noqa: E402
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Message,
    Part,
    Role,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a.types.a2a_pb2_grpc import add_A2AServiceServicer_to_server  # noqa: E402
from google.protobuf import field_mask_pb2  # noqa: E402

from taskmem.v1 import task_pb2, task_service_pb2  # noqa: E402
from taskmem_a2a import A2ATaskRecords, TaskmemTaskEventStream, TaskmemTaskStore  # noqa: E402
from taskmem_client import TaskmemClient  # noqa: E402

Write = Callable[[int], Awaitable[None]]
# The pause after each receipt, drawn uniformly below the SDK stream's poll interval: a poller delivers on
# its ticks, so writes timed from the last receipt would land at one phase of the poll and skew its figures.
GAP_S = 0.5


def text_of(response: StreamResponse) -> str:
    if response.WhichOneof("payload") != "status_update":
        return ""
    parts = response.status_update.status.message.parts
    return parts[0].text if parts else ""


async def measure(write: Write, stream: AsyncIterator[StreamResponse], events: int) -> list[float]:
    """Latencies in ms of events writes, each read back from the A2A stream before the next is written."""
    sent: dict[int, float] = {}
    latencies: dict[int, float] = {}
    arrived = asyncio.Event()

    async def read() -> None:
        async for response in stream:
            text = text_of(response)
            if text.startswith("bench "):
                number = int(text.split()[1])
                latencies[number] = (time.perf_counter() - sent[number]) * 1000
                arrived.set()

    reader = asyncio.create_task(read())
    try:
        for number in range(events):
            arrived.clear()
            sent[number] = time.perf_counter()
            await write(number)
            await asyncio.wait_for(arrived.wait(), 30)
            await asyncio.sleep(random.uniform(0.0, GAP_S))
    finally:
        reader.cancel()
    return [latencies[n] for n in range(events)]


def report(name: str, latencies: list[float]) -> None:
    ordered = sorted(latencies)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    print(f"{name:<76} n={len(ordered):>4}  p50 {statistics.median(ordered):7.1f} ms  p99 {p99:7.1f} ms",
          flush=True)


async def subscribed(client_target: str, task_id: str) -> AsyncIterator[StreamResponse]:
    """An A2A gRPC client's SubscribeToTask stream, past the task snapshot it starts with."""
    card = AgentCard(name="bench", supported_interfaces=[
        AgentInterface(protocol_binding="GRPC", url=client_target, protocol_version="1.0")],
        capabilities=AgentCapabilities(streaming=True))
    client = await create_client(card, ClientConfig(streaming=True, supported_protocol_bindings=["GRPC"],
                                                    grpc_channel_factory=grpc.aio.insecure_channel))
    stream = client.subscribe(SubscribeToTaskRequest(id=task_id)).__aiter__()
    first = await asyncio.wait_for(stream.__anext__(), 30)
    assert first.WhichOneof("payload") == "task", first
    return stream


# --- taskmem a2a ------------------------------------------------------------------------------------


async def front_end_row(name: str, writer_address: str, front_end_address: str, events: int) -> None:
    process = subprocess.Popen([sys.executable, "-m", "taskmem", "a2a", "--address", front_end_address,
                                "--listen", "127.0.0.1:0", "--grpc-listen", "127.0.0.1:0"],
                               stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        line = await asyncio.to_thread(process.stderr.readline)
        assert line.startswith("taskmem a2a: serving on "), line
        import httpx
        from a2a.client.card_resolver import A2ACardResolver

        async with httpx.AsyncClient() as http:
            card = await A2ACardResolver(http, line.split()[-1]).get_agent_card()
        grpc_target = next(i.url for i in card.supported_interfaces if i.protocol_binding == "GRPC")
        async with TaskmemClient(writer_address) as taskmem:
            task = (await taskmem.tasks.CreateTask(task_service_pb2.CreateTaskRequest(name="bench"))).task
            await taskmem.tasks.UpdateTask(task_service_pb2.UpdateTaskRequest(
                task=task_pb2.Task(id=task.id, status=task_pb2.TASK_STATUS_EXECUTING),
                update_mask=field_mask_pb2.FieldMask(paths=["status"])))
            stream = await subscribed(grpc_target, task.id)

            async def write(number: int) -> None:
                await taskmem.tasks.PostMessage(task_service_pb2.PostMessageRequest(
                    task_id=task.id, role=task_pb2.MESSAGE_ROLE_AGENT, content=f"bench {number}"))

            report(name, await measure(write, stream, events))
    finally:
        process.terminate()
        process.wait(timeout=15)


# --- an a2a-sdk agent server on a store ---------------------------------------------------------------


class IdleAgent(AgentExecutor):
    """The tasks are written by the bench, not run here: the handler only serves SubscribeToTask."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


async def serve_handler(handler: DefaultRequestHandler) -> tuple[grpc.aio.Server, str]:
    server = grpc.aio.server()
    add_A2AServiceServicer_to_server(GrpcHandler(handler), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    return server, f"127.0.0.1:{port}"


async def agent_server_row(name: str, writer_store: object, reader_store: object, reader_stream: object,
                           events: int) -> None:
    """Saves through writer_store (as the replica running the agent would); an A2A client follows the
    task through a DefaultRequestHandler on reader_store and reader_stream (another replica)."""
    card = AgentCard(name="bench", description="serves SubscribeToTask", version="1",
                     supported_interfaces=[AgentInterface(protocol_binding="GRPC", url="127.0.0.1:0",
                                                                  protocol_version="1.0")],
                     capabilities=AgentCapabilities(streaming=True), default_input_modes=["text/plain"],
                     default_output_modes=["text/plain"], skills=[AgentSkill(id="follow", name="follow",
                                                                            description="follow", tags=["bench"])])
    handler = DefaultRequestHandler(IdleAgent(), reader_store, card,  # type: ignore[arg-type]
                                    event_stream=reader_stream)  # type: ignore[arg-type]
    server, target = await serve_handler(handler)
    context = ServerCallContext()
    task = Task(id=f"bench-{random.getrandbits(48):012x}", context_id="bench",
                status=TaskStatus(state=TaskState.TASK_STATE_WORKING))
    version = await writer_store.save(task, event=task, prev=None,  # type: ignore[attr-defined]
                                      prev_version=TaskVersion.MISSING, context=context)
    try:
        stream = await subscribed(target, task.id)
        state = {"task": task, "version": version}

        async def write(number: int) -> None:
            status = TaskStatus(state=TaskState.TASK_STATE_WORKING, message=Message(
                message_id=f"m{number}", role=Role.ROLE_AGENT, parts=[Part(text=f"bench {number}")]))
            update = TaskStatusUpdateEvent(task_id=task.id, context_id="bench", status=status)
            saved = Task()
            saved.CopyFrom(state["task"])  # type: ignore[arg-type]
            saved.status.CopyFrom(status)
            state["version"] = await writer_store.save(  # type: ignore[attr-defined]
                saved, event=update, prev=state["task"], prev_version=state["version"], context=context)
            state["task"] = saved

        report(name, await measure(write, stream, events))
    finally:
        await server.stop(grace=0.5)


async def taskmem_store_row(name: str, writer_address: str, reader_address: str, events: int) -> None:
    async with TaskmemClient(writer_address) as writer, TaskmemClient(reader_address) as reader:
        records = A2ATaskRecords(reader)
        await agent_server_row(name, TaskmemTaskStore(A2ATaskRecords(writer)), TaskmemTaskStore(records),
                               TaskmemTaskEventStream(records), events)


async def database_store_row(name: str, url: str, events: int) -> None:
    from a2a.server.cluster import DatabaseTaskEventStream, VersionedDatabaseTaskStore
    from sqlalchemy.ext.asyncio import create_async_engine

    writer_engine, reader_engine = create_async_engine(url), create_async_engine(url)
    try:
        writer_store = VersionedDatabaseTaskStore(writer_engine)
        await writer_store.initialize()
        await agent_server_row(name, writer_store, VersionedDatabaseTaskStore(reader_engine),
                               DatabaseTaskEventStream(reader_engine), events)
    finally:
        await writer_engine.dispose()
        await reader_engine.dispose()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=100)
    parser.add_argument("--engines", default="sqlite,postgres")
    args = parser.parse_args()

    from tests.support.server_process import ServerOnDatabase, ServerProcess

    print(f"SubscribeToTask delivery, event written -> A2A gRPC client receives ({args.events} events a row)")
    with tempfile.TemporaryDirectory(prefix="a2a-bench-") as tmp:
        folder = Path(tmp)
        for engine in args.engines.split(","):
            if engine == "sqlite":
                servers = [ServerProcess(folder / "taskmem.db")]
                sdk_url = f"sqlite+aiosqlite:///{folder / 'sdk.db'}"
                where = "SQLite"
            else:
                from tests.support.postgres import database_url

                url = database_url(str(folder / "a2a-bench"))
                servers = [ServerOnDatabase(url) for _ in range(2)]
                sdk_url = database_url(str(folder / "a2a-bench-sdk")).replace("postgresql://", "postgresql+asyncpg://")
                where = "PostgreSQL, 2 replicas"
            try:
                addresses = [server.start() for server in servers]
                first, last = addresses[0], addresses[-1]
                await front_end_row(f"taskmem a2a ({where})", first, last, args.events)
                await taskmem_store_row(f"a2a-sdk server, taskmem store + stream ({where})", first, last,
                                        args.events)
                await database_store_row(f"a2a-sdk server, DatabaseTaskEventStream 0.5 s poll ({where})",
                                         sdk_url, args.events)
            finally:
                for server in servers:
                    server.stop()


if __name__ == "__main__":
    asyncio.run(main())
