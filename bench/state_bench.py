"""StateService latency on a large task, and reconciliation throughput with the builtin embedder.

Builds one task with a 200-item plan, 10,000 actions, 1,000 messages, 30 decisions, 10 errors
and 40 state items through a real `taskmem serve` process (temporary database), then prints
p50/p95/p99 of GetTaskState (default budget 1500) and BuildContext (FULL, 4000 tokens):

- over gRPC: one grpc.aio client calling the server process, one call at a time;
- server-side: the same database opened in this process, calling StateService's methods directly
  (validation, the read, rendering, token counting and the proto conversion; no transport).

Then reconciliation throughput: candidates/s through plan_reconciliation (embedding with the
builtin all-MiniLM-L6-v2 int8 model included) against a thread of 200 items.
Goal: p95 <= 5 ms server-side. The "fresh" line writes to the task before each call, so every
BuildContext there reads and fits anew (the cached read is dropped by the write).

    .venv/bin/python bench/state_bench.py [--calls 300]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import struct_pb2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from taskmem.api.scope import CALL_SCOPE, CallScope  # noqa: E402
from taskmem.api.state_service import StateService  # noqa: E402
from taskmem.api.event_encoding import event_payload  # noqa: E402
from taskmem.config import Config  # noqa: E402
from taskmem.settings import EmbeddingSettings, StateSettings  # noqa: E402
from taskmem.core.ids import new_id  # noqa: E402
from taskmem.core.messages import Kind, Message, Role  # noqa: E402
from taskmem.core.reconcile import BatchMessage, prepare_candidates  # noqa: E402
from taskmem.core.state_items import Candidate, validate_item  # noqa: E402
from taskmem.providers.embeddings import embedder_from_config  # noqa: E402
from taskmem.state.engine import StateEngine  # noqa: E402
from taskmem.state.thread_reconciliation import plan_reconciliation  # noqa: E402
from taskmem.store.tasks.messages import post_message  # noqa: E402
from taskmem.store.state.state_items import stored  # noqa: E402
from taskmem.store.engines import open_storage  # noqa: E402
from taskmem.tiktoken_offline import token_counter  # noqa: E402
from taskmem.v1 import state_pb2, task_pb2  # noqa: E402
from taskmem.v1 import state_service_pb2 as spb  # noqa: E402
from taskmem.v1 import task_service_pb2 as pb  # noqa: E402
from taskmem.v1.state_service_pb2_grpc import StateServiceStub  # noqa: E402
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub  # noqa: E402
from tests.support.server_process import ServerProcess  # noqa: E402

PLAN_ITEMS, ACTIONS, MESSAGES, DECISIONS, ERRORS, STATE_ITEMS = 200, 10_000, 1_000, 30, 10, 40
CONTEXT_BUDGET = 4000
TOPICS = ["caching", "database", "deploy", "auth", "search", "billing", "queue", "logging"]


async def in_parallel(calls: list[Callable[[], Awaitable[Any]]], concurrency: int = 32) -> None:
    pending = iter(calls)

    async def worker() -> None:
        for call in pending:
            await call()

    await asyncio.gather(*(worker() for _ in range(concurrency)))


async def populate(tasks: TaskServiceStub, state: StateServiceStub) -> str:
    plan = [task_pb2.PlanItemSpec(id=f"step-{n}", title=f"Step {n}: migrate table group {n} and verify counts",
                                  depends_on=[f"step-{n - 1}"] if n else []) for n in range(PLAN_ITEMS)]
    task_id = (await tasks.CreateTask(pb.CreateTaskRequest(
        name="Migrate MySQL to PostgreSQL", goal="Move every table of the shop database to PostgreSQL 16",
        workspace="/srv/shop", plan=plan))).task.id
    for n in range(120):
        await tasks.UpdatePlanItem(pb.UpdatePlanItemRequest(
            task_id=task_id, item_id=f"step-{n}", status=task_pb2.PLAN_ITEM_STATUS_COMPLETED,
            summary=f"group {n} migrated, counts match"))
    await tasks.UpdatePlanItem(pb.UpdatePlanItemRequest(
        task_id=task_id, item_id="step-120", status=task_pb2.PLAN_ITEM_STATUS_IN_PROGRESS,
        active_issue="ENUM columns need a mapping"))

    def action(n: int) -> Callable[[], Awaitable[Any]]:
        payload = struct_pb2.Struct()
        payload.update({"command": f"psql -c 'select count(*) from t{n}'"})
        return lambda: tasks.RecordAction(pb.RecordActionRequest(
            task_id=task_id, plan_item_id=f"step-{n % 121}", type=task_pb2.ACTION_TYPE_CLI, tool_name="psql",
            summary=f"count rows of table t{n}", status=task_pb2.ACTION_STATUS_SUCCEEDED, input=payload))

    def message(n: int) -> Callable[[], Awaitable[Any]]:
        role = task_pb2.MESSAGE_ROLE_USER if n % 4 == 0 else task_pb2.MESSAGE_ROLE_AGENT
        return lambda: tasks.PostMessage(pb.PostMessageRequest(
            task_id=task_id, role=role, content=f"Message {n}: table group {n % 200} looks fine, moving on."))

    await in_parallel([action(n) for n in range(ACTIONS)])
    ids = []
    for n in range(MESSAGES):  # in order, so refs below point at known messages
        ids.append((await message(n)()).message.id)
    await in_parallel([lambda n=n: state.AddDecision(spb.AddDecisionRequest(
        task_id=task_id, text=f"Decision {n}: map ENUM type {n} to a text column with a CHECK")) for n in range(DECISIONS)])
    await in_parallel([lambda n=n: state.AddError(spb.AddErrorRequest(
        task_id=task_id, error=f"Error {n}: duplicate key in table t{n}", resolution="deduplicated first"))
        for n in range(ERRORS)])
    candidates = [state_pb2.StateItemCandidate(
        type=[state_pb2.STATE_ITEM_TYPE_DECISION, state_pb2.STATE_ITEM_TYPE_ACTION,
              state_pb2.STATE_ITEM_TYPE_CONSTRAINT, state_pb2.STATE_ITEM_TYPE_RISK][n % 4],
        text=f"Item {n}: keep the {TOPICS[n % 8]} layer of service {n} working during cut-over",
        topic_tags=[TOPICS[n % 8]], refs=[ids[n * 20]]) for n in range(STATE_ITEMS)]
    for start in range(0, STATE_ITEMS, 20):
        await state.UpsertStateItems(spb.UpsertStateItemsRequest(task_id=task_id, items=candidates[start:start + 20]))
    return task_id


def figures(name: str, samples: list[float]) -> str:
    samples = sorted(samples)
    q = statistics.quantiles(samples, n=100, method="inclusive")
    return (f"{name:<34} n={len(samples):<5} p50 {q[49] * 1000:7.2f} ms  p95 {q[94] * 1000:7.2f} ms"
            f"  p99 {q[98] * 1000:7.2f} ms")


async def timed(call: Callable[[], Awaitable[Any]], calls: int, warmup: int = 20) -> list[float]:
    for _ in range(warmup):
        await call()
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        await call()
        samples.append(time.perf_counter() - started)
    return samples


async def timed_after(prepare: Callable[[], Awaitable[Any]], call: Callable[[], Awaitable[Any]],
                      calls: int) -> list[float]:
    """Like timed, with prepare() run (untimed) before each call."""
    samples = []
    for _ in range(calls):
        await prepare()
        started = time.perf_counter()
        await call()
        samples.append(time.perf_counter() - started)
    return samples


class _Context:
    """Enough of a grpc.aio.ServicerContext for the servicer's success path."""

    async def abort(self, *args: Any) -> None:
        raise RuntimeError(f"aborted: {args}")


async def over_grpc(address: str, task_id: str, calls: int) -> None:
    async with grpc.aio.insecure_channel(address) as channel:
        state = StateServiceStub(channel)
        get = spb.GetTaskStateRequest(task_id=task_id)
        build = spb.BuildContextRequest(task_id=task_id, token_budget=CONTEXT_BUDGET)
        answer = await state.GetTaskState(get)
        print(f"GetTaskState: {answer.token_count} tokens of {answer.token_budget}; omitted {list(answer.omitted)}")
        built = await state.BuildContext(build)
        print("BuildContext sections: " + ", ".join(f"{s.name} {s.used_tokens}/{s.allowed_tokens}"
                                                    for s in built.sections) + f"; total {built.token_count}")
        print(figures("gRPC GetTaskState", await timed(lambda: state.GetTaskState(get), calls)))
        print(figures("gRPC BuildContext FULL", await timed(lambda: state.BuildContext(build), calls)))


async def server_side(database: Path, task_id: str, calls: int) -> None:
    config = Config(database=str(database), embedding_backend="none")
    storage = await open_storage(str(database), event_payload)
    engine = StateEngine(storage, StateSettings.of(config), token_counter(), None, None)
    servicer, context = StateService(engine), _Context()
    CALL_SCOPE.set(CallScope("default", "bench"))
    get = spb.GetTaskStateRequest(task_id=task_id)
    build = spb.BuildContextRequest(task_id=task_id, token_budget=CONTEXT_BUDGET)
    minimal = spb.BuildContextRequest(task_id=task_id, token_budget=CONTEXT_BUDGET,
                                      mode=state_pb2.CONTEXT_MODE_MINIMAL)
    try:
        print(figures("server-side GetTaskState", await timed(
            lambda: servicer.GetTaskState(get, context), calls)))  # type: ignore[arg-type]
        print(figures("server-side BuildContext FULL", await timed(
            lambda: servicer.BuildContext(build, context), calls)))  # type: ignore[arg-type]
        print(figures("server-side BuildContext MINIMAL", await timed(
            lambda: servicer.BuildContext(minimal, context), calls)))  # type: ignore[arg-type]
        # A write to the task before every call: each BuildContext reads and fits afresh (no cached read).
        print(figures("server-side BuildContext FULL, fresh", await timed_after(
            lambda: storage.write(lambda tx: post_message(tx, Message(
                tx.namespace, new_id("msg"), task_id, Role.AGENT, Kind.TEXT, "one more note", tx.now, task_id)),
                "default", "bench"),
            lambda: servicer.BuildContext(build, context), calls)))  # type: ignore[arg-type]
    finally:
        await storage.close()


async def reconciliation_throughput(rounds: int) -> None:
    embedder = embedder_from_config(EmbeddingSettings.of(Config()))
    assert embedder is not None
    await embedder.embed(["warm up"])
    kinds = ["decision", "constraint", "action", "risk", "question"]
    existing = []
    for n in range(200):
        item = validate_item(Candidate(kinds[n % 5], f"Keep the {TOPICS[n % 8]} layer of service {n} working",
                                       confidence="medium", refs=("m0",), topic_tags=(TOPICS[n % 8],))).item
        assert item is not None
        existing.append(stored(item, "thread", 1))
    vectors = await embedder.embed([i.text for i in existing])
    stored_vectors = {item.uid: vectors[n] for n, item in enumerate(existing)}
    batch = {"m1": BatchMessage(2, True)}
    total, started = 0, time.perf_counter()
    for r in range(rounds):
        prepared = prepare_candidates([Candidate(
            kinds[n % 5], f"Round {r}: the {TOPICS[n % 8]} layer of service {n * 7} must keep working",
            confidence="high", refs=("m1",), topic_tags=(TOPICS[n % 8],)) for n in range(25)], batch)
        plan = await plan_reconciliation(existing, stored_vectors, prepared, embedder,
                                         _thresholds(embedder.model_name), "thread", 3)
        total += plan.report.extracted
    elapsed = time.perf_counter() - started
    print(f"reconciliation with {embedder.model_name}: {total} candidates (batches of 25, 200 existing items)"
          f" in {elapsed:.2f} s = {total / elapsed:.0f} candidates/s")


def _thresholds(model: str) -> Any:
    from taskmem.config import reconciliation_thresholds
    return reconciliation_thresholds(model, ())


async def main(calls: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        database = Path(tmp) / "bench.db"
        server = ServerProcess(database, "--log-level", "WARNING")
        address = server.start()
        try:
            async with grpc.aio.insecure_channel(address) as channel:
                started = time.perf_counter()
                task_id = await populate(TaskServiceStub(channel), StateServiceStub(channel))
                print(f"task {task_id}: {PLAN_ITEMS} plan items, {ACTIONS} actions, {MESSAGES} messages,"
                      f" {DECISIONS} decisions, {ERRORS} errors, {STATE_ITEMS} state items"
                      f" (built in {time.perf_counter() - started:.1f} s)")
            await over_grpc(address, task_id, calls)
        finally:
            server.stop()
        await server_side(database, task_id, calls)
    await reconciliation_throughput(rounds)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    asyncio.run(main(args.calls, args.rounds))
