"""The web view in headless Chromium: time to first render of a big task's page, and the delay from
an event's commit to its appearance in the page.

Starts `taskmem serve --http` (temporary database, no keys, no embeddings) and fills one task with a
200-item plan (a DAG: each item depends on up to two earlier ones) and 10,000 actions (all completed
but the last, which stays running with a log), plus 200 messages. Then, in Chromium (Debian's, driven
by Playwright):

- first render: from navigation to the moment the task page has loaded and drawn every section
  (plan graph with all 200 nodes, the first page of actions, transcript, state, YAML, ...): a fresh
  browser context each time (nothing cached), and a reload in the same context (warm), median and max.
- commit → page: with the page open, 100 messages are posted over gRPC, --interval apart; each
  event's commit time is its recorded create_time (microseconds, stamped in the writing
  transaction), its appearance the page's clock when the event's line is added to the live event
  list (a MutationObserver). Same machine, same clock. p50, p95, max. Side by side, for the same
  events: a gRPC SubscribeEvents reader and a bare SSE client of the web view, both in this process,
  so what the web layer and what the browser add can be told apart.

    .venv/bin/python bench/web_bench.py [--items 200] [--actions 10000] [--events 100] [--interval 0.05] [--loads 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import grpc
import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from taskmem.v1 import event_pb2, task_pb2  # noqa: E402
from taskmem.v1 import task_service_pb2 as pb  # noqa: E402
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub  # noqa: E402
from tests.support.server_process import ServerProcess  # noqa: E402

WEB_PREFIX = "taskmem: web view on "
CONCURRENCY = 32
# Records when each event's line appears in the live event list (page clock, ms with fractions).
OBSERVER = """
window.__seen = {};
new MutationObserver((records) => {
  const now = performance.timeOrigin + performance.now();
  for (const record of records) for (const node of record.addedNodes) {
    if (node.dataset && node.dataset.cursor && !(node.dataset.cursor in window.__seen)) window.__seen[node.dataset.cursor] = now;
  }
}).observe(document.getElementById("event-list"), { childList: true });
"""


async def in_batches(calls: list, size: int = CONCURRENCY) -> list:
    results = []
    for start in range(0, len(calls), size):
        results.extend(await asyncio.gather(*(make() for make in calls[start:start + size])))
    return results


async def fill_task(stub: TaskServiceStub, items: int, actions: int) -> str:
    rng = random.Random(7)
    plan = [task_pb2.PlanItemSpec(id=f"i{n}", title=f"Step {n}: {rng.choice(['build', 'test', 'migrate', 'review'])} part {n}",
                                  depends_on=sorted({f"i{rng.randrange(n)}" for _ in range(rng.randint(0, 2))}) if n else [])
            for n in range(items)]
    task_id = (await stub.CreateTask(pb.CreateTaskRequest(name="Big migration", goal="Move everything", plan=plan))).task.id
    await stub.UpdateTask(pb.UpdateTaskRequest(task=task_pb2.Task(id=task_id, status=task_pb2.TASK_STATUS_EXECUTING),
                                               update_mask={"paths": ["status"]}))
    statuses = [task_pb2.PLAN_ITEM_STATUS_COMPLETED] * 3 + [task_pb2.PLAN_ITEM_STATUS_IN_PROGRESS,
                                                             task_pb2.PLAN_ITEM_STATUS_FAILED]
    await in_batches([lambda n=n: stub.UpdatePlanItem(pb.UpdatePlanItemRequest(
        task_id=task_id, item_id=f"i{n}", status=rng.choice(statuses))) for n in range(items // 2)])
    recorded = await in_batches([lambda n=n: stub.RecordAction(pb.RecordActionRequest(
        task_id=task_id, plan_item_id=f"i{n % items}", type=task_pb2.ACTION_TYPE_CLI, tool_name="sh",
        summary=f"command {n}")) for n in range(actions)])
    await in_batches([lambda a=reply.action: stub.CompleteAction(pb.CompleteActionRequest(
        action_id=a.id, status=task_pb2.ACTION_STATUS_SUCCEEDED)) for reply in recorded[:-1]])
    await stub.AppendActionLog(pb.AppendActionLogRequest(action_id=recorded[-1].action.id,
                                                         lines=[pb.LogLineInput(content=f"line {n}") for n in range(50)]))
    await in_batches([lambda n=n: stub.PostMessage(pb.PostMessageRequest(
        task_id=task_id, role=task_pb2.MESSAGE_ROLE_AGENT, content=f"progress note {n}")) for n in range(200)])
    return task_id


async def first_render(browser, url: str, loads: int, items: int) -> dict[str, list[float]]:
    """Milliseconds to a fully drawn task page: wall time around the navigation, and the page's own
    time from navigation start (performance.now() when the page marks itself ready)."""
    times: dict[str, list[float]] = {"fresh wall": [], "fresh in page": [], "reload wall": [], "reload in page": []}
    for _ in range(loads):
        context = await browser.new_context(viewport={"width": 1280, "height": 900})
        page = await context.new_page()
        for kind, navigate in (("fresh", lambda: page.goto(url)), ("reload", page.reload)):
            start = time.perf_counter()
            await navigate()
            await page.wait_for_selector("main[data-ready=true]", timeout=60_000)
            times[f"{kind} wall"].append((time.perf_counter() - start) * 1000)
            times[f"{kind} in page"].append(float(await page.get_attribute("main", "data-ready-ms")))
        drawn = await page.locator("#plan-graph g.node").count()
        if drawn != items:
            raise SystemExit(f"web_bench: the page drew {drawn} plan nodes, not {items}")
        await context.close()
    return times


class Arrivals:
    """When each event (by cursor) reached a reader that is not the page: a gRPC subscriber and a
    bare SSE client of the web view, both in this process, for the same events as the page."""

    def __init__(self) -> None:
        self.grpc: dict[str, float] = {}
        self.sse: dict[str, float] = {}
        self.ready = asyncio.Event()
        self.start_cursor = 0

    async def read_sse(self, web: str, task_id: str) -> None:
        url = f"{web}api/events?task={task_id}&type=EVENT_TYPE_MESSAGE_POSTED"
        async with httpx.AsyncClient(timeout=None) as client, client.stream("GET", url, headers={"x-taskmem-web": "1"}) as reply:
            fields: dict[str, str] = {}
            async for line in reply.aiter_lines():
                if line:
                    name, _, value = line.partition(":")
                    fields[name] = value.strip()
                    continue
                if fields.get("event") == "event":  # a blank line ends an event
                    self.sse[fields["id"]] = time.time() * 1000
                elif fields.get("event") == "ready":
                    self.start_cursor = json.loads(fields["data"])["cursor"]
                    self.ready.set()
                fields = {}

    async def read_grpc(self, stub: TaskServiceStub, task_id: str) -> None:
        await self.ready.wait()
        async for reply in stub.SubscribeEvents(pb.SubscribeEventsRequest(
                task_ids=[task_id], types=[event_pb2.EVENT_TYPE_MESSAGE_POSTED], after_cursor=self.start_cursor)):
            self.grpc[str(reply.event.cursor)] = time.time() * 1000


async def commit_to_page(browser, web: str, url: str, stub: TaskServiceStub, task_id: str, count: int,
                         interval: float) -> dict[str, list[float]]:
    """Milliseconds from each posted message's event commit to its arrival: at a gRPC subscriber, at an
    SSE client of the web view, and as a line in the page's live event list."""
    context = await browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
    page = await context.new_page()
    await page.goto(url)
    await page.wait_for_selector("main[data-ready=true]", timeout=60_000)
    await page.evaluate(OBSERVER)
    arrivals = Arrivals()
    readers = [asyncio.create_task(arrivals.read_sse(web, task_id)), asyncio.create_task(arrivals.read_grpc(stub, task_id))]
    await arrivals.ready.wait()
    await asyncio.sleep(0.5)  # the gRPC subscription registers
    posted = []
    for n in range(count):
        posted.append(await stub.PostMessage(pb.PostMessageRequest(task_id=task_id, role=task_pb2.MESSAGE_ROLE_AGENT,
                                                                   content=f"live note {n}")))
        await asyncio.sleep(interval)
    ids = {reply.message.id for reply in posted}
    events, token = [], ""
    while True:  # the MESSAGE_POSTED events of these messages, with their commit times
        reply = await stub.ListEvents(pb.ListEventsRequest(task_ids=[task_id], types=[event_pb2.EVENT_TYPE_MESSAGE_POSTED],
                                                           page_size=500, page_token=token))
        events.extend(e for e in reply.events if e.payload.fields["id"].string_value in ids)
        token = reply.next_page_token
        if not token:
            break
    seen: dict[str, float] = {}
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        seen = await page.evaluate("window.__seen")
        if all(str(e.cursor) in seen and str(e.cursor) in arrivals.sse and str(e.cursor) in arrivals.grpc for e in events):
            break
        await asyncio.sleep(0.1)
    for reader in readers:
        reader.cancel()
    await context.close()
    committed = {str(e.cursor): e.create_time.seconds * 1000 + e.create_time.nanos / 1e6 for e in events}
    return {name: [arrived[c] - at for c, at in committed.items() if c in arrived]
            for name, arrived in (("gRPC subscriber", arrivals.grpc), ("SSE client", arrivals.sse), ("page", seen))}


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--actions", type=int, default=10_000)
    parser.add_argument("--events", type=int, default=100)
    parser.add_argument("--interval", type=float, default=0.05)
    parser.add_argument("--loads", type=int, default=5)
    parser.add_argument("--screenshot", type=Path, help="save the drawn task page here (PNG)")
    args = parser.parse_args()
    chromium = shutil.which("chromium")
    if chromium is None:
        sys.exit("web_bench: needs Debian's chromium (apt-get install chromium)")
    from playwright.async_api import async_playwright

    with tempfile.TemporaryDirectory() as workdir:
        server = ServerProcess(Path(workdir) / "taskmem.db", "--http", "127.0.0.1:0", "--embedding-backend", "none")
        server.start()
        try:
            web = next(line for line in server.output if line.startswith(WEB_PREFIX))[len(WEB_PREFIX):].strip()
            async with grpc.aio.insecure_channel(server.address) as channel:
                stub = TaskServiceStub(channel)
                started = time.perf_counter()
                task_id = await fill_task(stub, args.items, args.actions)
                print(f"filled a task with {args.items} plan items and {args.actions} actions in "
                      f"{time.perf_counter() - started:.1f} s")
                url = f"{web}#/task/{task_id}"
                async with async_playwright() as playwright:
                    browser = await playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
                    render_times = await first_render(browser, url, args.loads, args.items)
                    if args.screenshot:
                        page = await browser.new_page(viewport={"width": 1280, "height": 900})
                        await page.goto(url)
                        await page.wait_for_selector("main[data-ready=true]", timeout=60_000)
                        await page.screenshot(path=str(args.screenshot), full_page=True)
                        await page.close()
                    delays = await commit_to_page(browser, web, url, stub, task_id, args.events, args.interval)
                    await browser.close()
        finally:
            server.stop()
    print(f"task page, first render ({args.loads} loads each, ms):")
    for kind, values in render_times.items():
        print(f"  {kind:15} median {statistics.median(values):6.0f}  max {max(values):6.0f}")
    print(f"commit -> arrival of {args.events} events, {args.interval * 1000:.0f} ms apart (ms):")
    for name, values in delays.items():
        print(f"  {name:15} {len(values):3} seen  p50 {percentile(values, 0.5):6.1f}  p95 {percentile(values, 0.95):6.1f}"
              f"  max {max(values):6.1f}")


if __name__ == "__main__":
    asyncio.run(main())
