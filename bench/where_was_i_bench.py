""""Where was I?" recall: can an agent whose context was compacted resume from GetTaskState (1,500
tokens) plus one more call (GetProgress)?

Plays three long scenarios through the real RPCs of a `taskmem serve` process (temporary database):

- replans:   a 60-item plan worked through with two replans (items added, dropped, re-ordered),
             decisions, constraints, an open question, a failing action and a recorded error;
- decisions: a 25-item plan whose chart library changes twice (A, "B instead of A", "C instead of B")
             and whose database changes once, with constraints, questions and an unresolved error;
- plain_words: a 20-item plan whose user changes two decisions in plain words mid-task (the newsletter tool,
             where the signup page is hosted); the agent records each new decision, one from the user's
             message (its ref) and one as its own statement, and never names what it replaces;
- waits:     a 30-item plan parked on waits ("release approved" with a timeout, a cool-down timer),
             the server restarted in the middle, one wait resolved after the restart;

with at least 2,000 actions in all. Then reads GetTaskState (budget 1,500) and GetProgress and prints,
per scenario, the recall of each fact an agent needs (completed ids, current item, next items, active
decisions, no superseded decision shown as active, constraints, open questions, open waits, last
error) and the token counts: the YAML, GetProgress's summary, GetProgress as JSON, and GetProgress as
JSON with full plan items (the shape it had before issue 11) side by side.
Goal: 100 % recall within the 1,500-token budget (an item asked about in an open question counts as seen: it is
shown with the question beside it, never as in force alone), and at most one open question per 50 writes.

    .venv/bin/python bench/where_was_i_bench.py
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc
import yaml
from google.protobuf import duration_pb2, json_format, struct_pb2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from taskmem.tiktoken_offline import token_counter  # noqa: E402
from taskmem.v1 import state_pb2, task_pb2, wait_pb2  # noqa: E402
from taskmem.v1 import state_service_pb2 as spb  # noqa: E402
from taskmem.v1 import task_service_pb2 as pb  # noqa: E402
from taskmem.v1 import wait_service_pb2 as wpb  # noqa: E402
from taskmem.v1.state_service_pb2_grpc import StateServiceStub  # noqa: E402
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub  # noqa: E402
from taskmem.v1.wait_service_pb2_grpc import WaitServiceStub  # noqa: E402
from tests.support.server_process import ServerProcess  # noqa: E402

BUDGET = 1500
COUNTER = token_counter()
DONE, IN_PROGRESS = task_pb2.PLAN_ITEM_STATUS_COMPLETED, task_pb2.PLAN_ITEM_STATUS_IN_PROGRESS
CONSTRAINT, QUESTION = state_pb2.STATE_ITEM_TYPE_CONSTRAINT, state_pb2.STATE_ITEM_TYPE_QUESTION
FACTS = ["completed", "current", "next", "active decisions", "no superseded shown", "constraints",
         "open questions", "open waits", "last error"]


@dataclasses.dataclass
class Truth:
    """What the agent must learn back, kept by the scenario as it plays."""

    completed: list[str] = dataclasses.field(default_factory=list)
    current: str = ""
    next: list[str] = dataclasses.field(default_factory=list)
    decisions: list[str] = dataclasses.field(default_factory=list)
    superseded: list[str] = dataclasses.field(default_factory=list)
    constraints: list[str] = dataclasses.field(default_factory=list)
    questions: list[str] = dataclasses.field(default_factory=list)
    waits: list[str] = dataclasses.field(default_factory=list)
    last_error: str = ""
    actions: int = 0
    writes: int = 0     # every call that changed something
    asked: int = 0  # open questions reconciliation raised (RECONCILE_OUTCOME_CONFLICTED)


class Player:
    """Plays a scenario through the RPCs and keeps the truth."""

    def __init__(self, channel: grpc.aio.Channel) -> None:
        self.connect(channel)
        self.task_id = ""
        self.truth = Truth()

    def connect(self, channel: grpc.aio.Channel) -> None:
        self.tasks, self.state, self.waits = TaskServiceStub(channel), StateServiceStub(channel), WaitServiceStub(channel)

    def _wrote(self, calls: int = 1, report: Any = None) -> None:
        self.truth.writes += calls
        self.truth.asked += report.conflicted if report is not None else 0

    async def create(self, name: str, ids: list[str], chain: bool = False) -> None:
        self._wrote(3)
        task = await self.tasks.CreateTask(pb.CreateTaskRequest(name=name, goal=f"{name}: do it end to end",
                                                                plan=[spec(i, ids, chain) for i in ids]))
        self.task_id = task.task.id
        await self.tasks.UpdateTask(pb.UpdateTaskRequest(
            task=task_pb2.Task(id=self.task_id, status=task_pb2.TASK_STATUS_PLANNING),
            update_mask={"paths": ["status"]}))
        await self.tasks.UpdateTask(pb.UpdateTaskRequest(
            task=task_pb2.Task(id=self.task_id, status=task_pb2.TASK_STATUS_EXECUTING),
            update_mask={"paths": ["status"]}))

    async def work(self, item_id: str, actions: int, finish: bool = True) -> None:
        await self.tasks.UpdatePlanItem(pb.UpdatePlanItemRequest(task_id=self.task_id, item_id=item_id,
                                                                 status=IN_PROGRESS))
        await in_parallel([lambda n=n: self.tasks.RecordAction(pb.RecordActionRequest(
            task_id=self.task_id, plan_item_id=item_id, type=task_pb2.ACTION_TYPE_CLI, tool_name="bash",
            summary=f"{item_id}: command {n}", status=task_pb2.ACTION_STATUS_SUCCEEDED,
            input=struct({"cmd": f"make {item_id}-{n}"}), output=struct({"exit": 0})))
            for n in range(actions)])
        self.truth.actions += actions
        self._wrote(actions + 1 + finish)
        if finish:
            await self.tasks.UpdatePlanItem(pb.UpdatePlanItemRequest(
                task_id=self.task_id, item_id=item_id, status=DONE, summary=f"{item_id} done, checks green"))

    async def say(self, text: str) -> None:
        self._wrote()
        await self.tasks.PostMessage(pb.PostMessageRequest(task_id=self.task_id, role=task_pb2.MESSAGE_ROLE_AGENT,
                                                           content=text))

    async def decide(self, text: str, retires: str = "") -> None:
        added = await self.state.AddDecision(spb.AddDecisionRequest(task_id=self.task_id, text=text))
        self._wrote(report=added.report)
        self._decided(text, retires)

    async def user_says(self, text: str) -> str:
        """A user message in the task's thread; its id, for the items the agent records from it."""
        posted = await self.tasks.PostMessage(pb.PostMessageRequest(task_id=self.task_id, content=text,
                                                                    role=task_pb2.MESSAGE_ROLE_USER))
        self._wrote()
        return posted.message.id

    async def record_decision(self, text: str, heard: str, retires: str = "") -> None:
        """A decision the agent records from the user's message `heard` (its ref), naming nothing it replaces."""
        upserted = await self.state.UpsertStateItems(spb.UpsertStateItemsRequest(task_id=self.task_id, items=[
            state_pb2.StateItemCandidate(type=state_pb2.STATE_ITEM_TYPE_DECISION, text=text, refs=[heard],
                                         confidence=state_pb2.STATE_ITEM_CONFIDENCE_HIGH)]))
        self._wrote(report=upserted.report)
        self._decided(text, retires)

    def _decided(self, text: str, retires: str) -> None:
        self.truth.decisions = [d for d in self.truth.decisions if d != retires] + [text]
        if retires:
            self.truth.superseded.append(retires)

    async def note(self, kind: int, text: str) -> None:
        upserted = await self.state.UpsertStateItems(spb.UpsertStateItemsRequest(task_id=self.task_id, items=[
            state_pb2.StateItemCandidate(type=kind, text=text, confidence=state_pb2.STATE_ITEM_CONFIDENCE_HIGH)]))
        self._wrote(report=upserted.report)
        (self.truth.constraints if kind == CONSTRAINT else self.truth.questions).append(text)

    async def error(self, subtask: str, text: str) -> None:
        added = await self.state.AddError(spb.AddErrorRequest(task_id=self.task_id, subtask_id=subtask, error=text))
        self._wrote(report=added.report)
        self.truth.last_error = text

    async def wait(self, criteria: str, target: wait_pb2.WaitTarget, timeout_s: int | None) -> str:
        created = await self.waits.CreateWait(wpb.CreateWaitRequest(
            task_id=self.task_id, criteria=criteria, target=target,
            timeout=duration_pb2.Duration(seconds=timeout_s) if timeout_s else None))
        self._wrote()
        self.truth.waits.append(criteria)
        return created.wait.id

    async def settle(self) -> None:
        """The completed, current and next items as the plan now says (the next three whose dependencies are met)."""
        plan = (await self.tasks.GetPlan(pb.GetPlanRequest(task_id=self.task_id))).plan
        done = {task_pb2.PLAN_ITEM_STATUS_COMPLETED, task_pb2.PLAN_ITEM_STATUS_SKIPPED}
        status = {i.id: i.status for i in plan.items}
        self.truth.completed = [i.id for i in plan.items if i.status in done]
        self.truth.current = next((i.id for i in plan.items if i.status == IN_PROGRESS), "")
        self.truth.next = [i.id for i in plan.items if i.status == task_pb2.PLAN_ITEM_STATUS_PENDING
                           and all(status.get(d) in done for d in i.depends_on)][:3]


def spec(item_id: str, ids: list[str], chain: bool) -> task_pb2.PlanItemSpec:
    before = ids[ids.index(item_id) - 1] if chain and ids.index(item_id) else ""
    return task_pb2.PlanItemSpec(
        id=item_id, stage="build" if ids.index(item_id) < len(ids) // 2 else "ship",
        title=f"{item_id.replace('-', ' ')}: implement and verify", depends_on=[before] if before else [],
        tool_name="bash", input=struct({"cmd": f"make {item_id}", "cwd": "/srv/app"}),
        narrative=f"Run the {item_id} target, read its output and fix what fails before moving on.")


def struct(values: dict[str, Any]) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(values)
    return s


async def in_parallel(calls: list[Callable[[], Awaitable[Any]]], concurrency: int = 16) -> None:
    pending = iter(calls)

    async def worker() -> None:
        for call in pending:
            await call()

    await asyncio.gather(*(worker() for _ in range(concurrency)))


# --- the scenarios -----------------------------------------------------------------------------

async def replans(p: Player, server: ServerProcess) -> None:
    ids = [f"step-{n:02d}" for n in range(60)]
    await p.create("Migrate billing to the new ledger", ids)
    await p.note(CONSTRAINT, "Keep the old ledger readable until the audit closes")
    await p.decide("Use pgloader for the bulk copy")
    for item in ids[:20]:
        await p.work(item, 20)
    # Replan 1: drop two items, add three, keep every done item.
    ids = ids[:30] + ["verify-ledger", "backfill-fx", "reindex"] + [i for i in ids[30:] if i not in ("step-40", "step-41")]
    await p.tasks.ReplacePlan(pb.ReplacePlanRequest(task_id=p.task_id, reason="audit asked for FX backfill",
                                                    items=[spec(i, ids, False) for i in ids]))
    await p.decide("Use Debezium to stream changes instead of pgloader", retires="Use pgloader for the bulk copy")
    for item in ids[20:33]:
        await p.work(item, 20)
    await p.note(QUESTION, "Does finance need the FX rates of weekends?")
    # Replan 2: move reindex to the end.
    ids = [i for i in ids if i != "reindex"] + ["reindex"]
    await p.tasks.ReplacePlan(pb.ReplacePlanRequest(task_id=p.task_id, reason="reindex last",
                                                    items=[spec(i, ids, False) for i in ids]))
    await p.work(ids[32], 20, finish=False)
    await p.note(CONSTRAINT, "Writes to the ledger go through the outbox table")
    await p.error(ids[32], "backfill-fx: rate API returned 429 after 300 calls")
    await p.settle()


async def decisions(p: Player, server: ServerProcess) -> None:
    ids = [f"task-{n:02d}" for n in range(25)]
    await p.create("Build the metrics dashboard", ids, chain=True)
    await p.decide("Use Chart.js for the dashboard charts")
    await p.decide("Use SQLite for the metrics store")
    await p.note(CONSTRAINT, "Pages must render in under 200 ms")
    for item in ids[:5]:
        await p.work(item, 45)
        await p.say(f"{item} finished")
    await p.decide("Use Plotly for the dashboard charts instead of Chart.js",
                   retires="Use Chart.js for the dashboard charts")
    for item in ids[5:10]:
        await p.work(item, 45)
    await p.decide("Use PostgreSQL for the metrics store instead of SQLite", retires="Use SQLite for the metrics store")
    await p.note(QUESTION, "Should the dashboard support dark mode?")
    for item in ids[10:16]:
        await p.work(item, 45)
    await p.decide("Use Vega-Lite for the dashboard charts instead of Plotly",
                   retires="Use Plotly for the dashboard charts instead of Chart.js")
    await p.note(CONSTRAINT, "No third-party trackers on any page")
    await p.work(ids[16], 20, finish=False)
    await p.error(ids[16], "vega-embed failed to load: CSP blocks the CDN")
    await p.settle()


async def plain_words(p: Player, server: ServerProcess) -> None:
    """The user changes two decisions in plain words mid-task; the agent records each new one, grounded in the
    user's message or as its own statement, and never passes `supersedes` nor says what it replaces."""
    ids = [f"launch-{n:02d}" for n in range(20)]
    await p.create("Launch the community newsletter", ids, chain=True)
    await p.decide("Send the newsletter with Mailchimp")
    await p.decide("Host the signup page on Netlify")
    await p.note(CONSTRAINT, "Every issue goes out on Tuesday morning")
    for item in ids[:6]:
        await p.work(item, 30)
    heard = await p.user_says("Mailchimp's pricing jumped again for our list size. Let's move the newsletter "
                              "over to Buttondown, it's a fraction of the cost.")
    await p.record_decision("Send the newsletter with Buttondown", heard,
                            retires="Send the newsletter with Mailchimp")
    for item in ids[6:11]:
        await p.work(item, 30)
    await p.user_says("Our client's office network blocks Netlify, so half their staff can't reach the form. "
                      "Put the signup page on the VPS we already pay for.")
    await p.decide("Host the signup page on our VPS", retires="Host the signup page on Netlify")
    await p.note(QUESTION, "Should past issues be public?")
    for item in ids[11:15]:
        await p.work(item, 30)
    await p.work(ids[15], 10, finish=False)
    await p.error(ids[15], "DNS for the signup subdomain has not propagated yet")
    await p.settle()


async def waits(p: Player, server: ServerProcess) -> None:
    ids = [f"rel-{n:02d}" for n in range(30)]
    await p.create("Release 4.2 to production", ids, chain=True)
    await p.note(CONSTRAINT, "Deploy only between 09:00 and 16:00 UTC")
    await p.decide("Roll out with a canary of 5 percent")
    for item in ids[:8]:
        await p.work(item, 40)
    approval = await p.wait("release approved", wait_pb2.WaitTarget(
        external=wait_pb2.ExternalTarget(resolver="release-manager")), 4 * 3600)
    await p.wait("cool-down after the canary", wait_pb2.WaitTarget(
        timer=wait_pb2.TimerTarget(duration=duration_pb2.Duration(seconds=3600))), None)
    await p.wait("security scan report uploaded", wait_pb2.WaitTarget(
        external=wait_pb2.ExternalTarget(resolver="scanner")), 2 * 3600)
    await p.note(QUESTION, "Who signs off the database migration?")
    server.restart()  # the agent's host and the server both went down in the middle
    await p.waits.ResolveWait(wpb.ResolveWaitRequest(wait_id=approval, result="approved by the release manager"))
    p.truth.waits.remove("release approved")
    for item in ids[8:17]:
        await p.work(item, 40)
    await p.work(ids[17], 10, finish=False)
    await p.error(ids[17], "smoke test: /healthz answered 503 on 2 of 12 pods")
    await p.settle()


# --- reading back ------------------------------------------------------------------------------

def recall_from_yaml(text: str, truth: Truth) -> dict[str, float]:
    data = yaml.safe_load(text) or {}
    subtasks = data.get("subtasks") or []
    completed = set((data.get("plan") or {}).get("completed") or []) | {
        s["id"] for s in subtasks if s["status"] in ("completed", "skipped")}
    shown_decisions = data.get("decisions_log") or []
    asked = [q["question"] for q in data.get("open_conflicts") or []]
    waits = [w["criteria"] for w in data.get("open_waits") or []]
    errors = data.get("errors_encountered") or []
    return {
        "completed": share(truth.completed, completed),
        "current": float(any(s["id"] == truth.current and s["status"] == "in_progress" for s in subtasks)),
        "next": share(truth.next, {s["id"] for s in subtasks if s["status"] == "pending"}),
        "active decisions": share(truth.decisions, [*shown_decisions, *asked], within=True),
        "no superseded shown": float(not set(truth.superseded) & set(shown_decisions)),
        "constraints": share(truth.constraints, [*(data.get("constraints") or []), *asked], within=True),
        "open questions": share(truth.questions, data.get("open_questions") or []),
        "open waits": share(truth.waits, waits) if set(waits) <= set(truth.waits) else 0.0,
        "last error": float(bool(errors) and errors[-1]["error"] == truth.last_error),
    }


def recall_from_progress(progress: pb.GetProgressResponse, truth: Truth) -> dict[str, float]:
    decisions = [d.text for d in progress.decisions]
    asked = [c.question for c in progress.open_conflicts]
    waits = [w.criteria for w in progress.open_waits]
    return {
        "completed": share(truth.completed, {i.id for i in progress.completed}),
        "current": float(progress.current.id == truth.current),
        "next": share(truth.next, {i.id for i in progress.next}),
        "active decisions": share(truth.decisions, [*decisions, *asked], within=True),
        "no superseded shown": float(not set(truth.superseded) & set(decisions)),
        "constraints": share(truth.constraints, [*(c.text for c in progress.constraints), *asked], within=True),
        "open questions": share(truth.questions, [q.text for q in progress.open_questions]),
        "open waits": share(truth.waits, waits) if set(waits) <= set(truth.waits) else 0.0,
        "last error": float(truth.last_error in progress.last_error),
    }


def combined(fact: str, from_yaml: dict[str, float], from_progress: dict[str, float]) -> float:
    """What an agent reading both calls knows: a fact found in either; but a superseded decision shown as
    active in either misleads it."""
    pick = min if fact == "no superseded shown" else max
    return pick(from_yaml[fact], from_progress[fact])


def share(wanted: list[str], found: Any, within: bool = False) -> float:
    """The share of `wanted` in `found`; `within`: also inside one of its texts (a decision named in an open
    question is seen, with the question beside it: never as in force alone)."""
    def seen(w: str) -> bool:
        return w in found or (within and any(w in text for text in found))
    return 1.0 if not wanted else sum(1 for w in wanted if seen(w)) / len(wanted)


def tokens_of(message: Any) -> int:
    return COUNTER.count(json.dumps(json_format.MessageToDict(message)))


async def read_back(p: Player) -> tuple[dict[str, float], dict[str, float], dict[str, int]]:
    state = await p.state.GetTaskState(spb.GetTaskStateRequest(task_id=p.task_id, token_budget=BUDGET))
    progress = await p.tasks.GetProgress(pb.GetProgressRequest(task_id=p.task_id))
    # GetProgress as it was before issue 11: every listed item in full.
    plan = {i.id: i for i in (await p.tasks.GetPlan(pb.GetPlanRequest(task_id=p.task_id))).plan.items}
    before = pb.GetProgressResponse()
    before.CopyFrom(progress)
    done = {task_pb2.PLAN_ITEM_STATUS_COMPLETED, task_pb2.PLAN_ITEM_STATUS_SKIPPED}
    ready = [i for i in plan.values() if i.status == task_pb2.PLAN_ITEM_STATUS_PENDING
             and all(plan[d].status in done for d in i.depends_on if d in plan)]
    for field in ("completed", "next", "blocked", "failed"):
        listed = ready if field == "next" else [plan[i.id] for i in getattr(before, field)]
        before.ClearField(field)
        getattr(before, field).extend(listed)
    for field in ("decisions", "constraints", "open_questions", "open_waits", "ready_count"):
        before.ClearField(field)
    sizes = {"yaml": state.token_count, "summary": COUNTER.count(progress.summary),
             "progress json": tokens_of(progress), "progress json, full items (before)": tokens_of(before)}
    if state.omitted:
        print(f"   omitted from the YAML: {list(state.omitted)}")
    return recall_from_yaml(state.yaml, p.truth), recall_from_progress(progress, p.truth), sizes


async def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        server = ServerProcess(Path(directory) / "taskmem.db")
        server.start()
        results = []
        try:
            for scenario in (replans, decisions, plain_words, waits):
                async with grpc.aio.insecure_channel(server.address) as channel:
                    player = Player(channel)
                    await scenario(player, server)
                async with grpc.aio.insecure_channel(server.address) as channel:  # a fresh agent after compaction
                    player.connect(channel)
                    results.append((scenario.__name__, player.truth, *await read_back(player)))
        finally:
            server.stop()
    total = sum(truth.actions for _, truth, *_ in results)
    print(f"{len(results)} scenarios, {total} actions; GetTaskState budget {BUDGET} tokens\n")
    width = max(len(f) for f in FACTS)
    print(f"{'fact':<{width}}  " + "  ".join(f"{name + ' yaml':>14} {name + ' +progress':>18}"
                                             for name, *_ in results))
    for fact in FACTS:
        cells = []
        for _, _, from_yaml, from_progress, _ in results:
            cells.append(f"{from_yaml[fact]:>14.0%} {combined(fact, from_yaml, from_progress):>18.0%}")
        print(f"{fact:<{width}}  " + "  ".join(cells))
    print()
    for name, truth, from_yaml, from_progress, sizes in results:
        overall_yaml = sum(from_yaml.values()) / len(from_yaml)
        overall = sum(combined(f, from_yaml, from_progress) for f in FACTS) / len(FACTS)
        print(f"{name}: {len(truth.completed)} completed, current {truth.current}, {len(truth.decisions)} active"
              f" decisions ({len(truth.superseded)} superseded), {len(truth.waits)} open waits, {truth.actions} actions;"
              f" recall {overall_yaml:.0%} from the YAML alone, {overall:.0%} with GetProgress;"
              f" {truth.asked} open questions raised in {truth.writes} writes"
              f" ({truth.writes / max(truth.asked, 1):.0f} writes per question); tokens: "
              + ", ".join(f"{k} {v}" for k, v in sizes.items())
              + f" ({sizes['progress json, full items (before)'] / sizes['progress json']:.1f}x smaller now)")


if __name__ == "__main__":
    asyncio.run(main())
