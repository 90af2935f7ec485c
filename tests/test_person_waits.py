"""Waits on a person end to end over gRPC (issue 28, point 2): an external wait of kind INPUT or AUTH puts its
task, or one plan item, in INPUT_REQUIRED / AUTH_REQUIRED; GetProgress, the task-state YAML and ListTasks say
who must answer what; the answer (ResolveWait) returns the status and lands in the task's thread."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import pytest
from google.protobuf import duration_pb2

from taskmem.v1 import event_pb2, task_pb2, wait_pb2
from taskmem.v1 import state_service_pb2 as spb
from taskmem.v1 import task_service_pb2 as tpb
from taskmem.v1 import wait_service_pb2 as wpb
from taskmem.v1.state_service_pb2_grpc import StateServiceStub
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from taskmem.v1.wait_service_pb2_grpc import WaitServiceStub
from tests.support.postgres import database_url
from tests.support.rpc_errors import assert_rpc_error
from tests.support.server_process import ServerOnDatabase, ServerProcess
from tests.support.eventually import eventually

T, W = task_pb2, wait_pb2
INPUT, AUTH = W.EXTERNAL_WAIT_KIND_INPUT, W.EXTERNAL_WAIT_KIND_AUTH


class Stubs:
    def __init__(self, channel: grpc.aio.Channel) -> None:
        self.tasks, self.waits, self.state = TaskServiceStub(channel), WaitServiceStub(channel), StateServiceStub(channel)

    async def executing_task(self, *items: T.PlanItemSpec) -> str:
        task = (await self.tasks.CreateTask(tpb.CreateTaskRequest(name="deploy", goal="deploy the site",
                                                                  plan=list(items)))).task
        task.status = T.TASK_STATUS_EXECUTING
        await self.tasks.UpdateTask(tpb.UpdateTaskRequest(task=task, update_mask={"paths": ["status"]}))
        return task.id

    async def ask(self, task_id: str, kind: int, question: str, resolver: str = "alex", item_id: str = "",
                  timeout: duration_pb2.Duration | None = None) -> wait_pb2.Wait:
        target = W.WaitTarget(external=W.ExternalTarget(resolver=resolver, kind=kind, question=question,  # type: ignore[arg-type]
                                                        plan_item_id=item_id))
        return (await self.waits.CreateWait(wpb.CreateWaitRequest(task_id=task_id, target=target,
                                                                  timeout=timeout))).wait

    async def answer(self, wait_id: str, text: str, status: int = W.WAIT_STATUS_UNSPECIFIED) -> wait_pb2.Wait:
        return (await self.waits.ResolveWait(wpb.ResolveWaitRequest(wait_id=wait_id, result=text,
                                                                    status=status))).wait  # type: ignore[arg-type]

    async def status(self, task_id: str) -> int:
        return (await self.tasks.GetTask(tpb.GetTaskRequest(task_id=task_id))).task.status

    async def item(self, task_id: str, item_id: str) -> task_pb2.PlanItem:
        plan = (await self.tasks.GetPlan(tpb.GetPlanRequest(task_id=task_id))).plan
        return next(item for item in plan.items if item.id == item_id)

    async def listed(self, **filters: object) -> set[str]:
        page = await self.tasks.ListTasks(tpb.ListTasksRequest(page_size=500, **filters))  # type: ignore[arg-type]
        return {task.id for task in page.tasks}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path_factory.mktemp("person-waits") / "taskmem.db")
    process.start()
    yield process
    process.stop()


@pytest.fixture
async def rpc(server: ServerProcess) -> AsyncIterator[Stubs]:
    async with grpc.aio.insecure_channel(server.address) as channel:
        yield Stubs(channel)


async def test_an_input_wait_puts_the_task_in_input_required_until_the_answer_returns_it(rpc: Stubs) -> None:
    task_id = await rpc.executing_task()
    wait = await rpc.ask(task_id, INPUT, "Which region should the site run in?", resolver="release manager")
    assert wait.status == W.WAIT_STATUS_WAITING
    assert wait.target.external.kind == INPUT and wait.target.external.question.startswith("Which region")
    assert await rpc.status(task_id) == T.TASK_STATUS_INPUT_REQUIRED

    progress = await rpc.tasks.GetProgress(tpb.GetProgressRequest(task_id=task_id))
    [open_wait] = progress.open_waits
    assert (open_wait.wait_id, open_wait.external_kind, open_wait.resolver, open_wait.question) == (
        wait.id, INPUT, "release manager", "Which region should the site run in?")
    assert "release manager must answer 'Which region should the site run in?'" in progress.summary
    state = await rpc.state.GetTaskState(spb.GetTaskStateRequest(task_id=task_id))
    assert "status: input_required" in state.yaml
    assert "needs: input" in state.yaml and '"release manager"' in state.yaml
    assert '"Which region should the site run in?"' in state.yaml
    assert state.state.open_waits[0].question == "Which region should the site run in?"
    assert task_id in await rpc.listed(awaiting_person=True)
    assert task_id in await rpc.listed(statuses=[T.TASK_STATUS_INPUT_REQUIRED])

    answered = await rpc.answer(wait.id, "eu-west-1")
    assert answered.status == W.WAIT_STATUS_RESOLVED and answered.result == "eu-west-1"
    assert await rpc.status(task_id) == T.TASK_STATUS_EXECUTING
    assert task_id not in await rpc.listed(awaiting_person=True)
    progress = await rpc.tasks.GetProgress(tpb.GetProgressRequest(task_id=task_id))
    assert not progress.open_waits and "Waiting on a person" not in progress.summary

    messages = (await rpc.tasks.ListMessages(tpb.ListMessagesRequest(task_id=task_id))).messages
    asked = [m for m in messages if m.content.startswith("[Input required]")]
    told = [m for m in messages if m.content.startswith("[Input received]")]
    assert [(m.role, m.kind) for m in asked] == [(T.MESSAGE_ROLE_AGENT, T.MESSAGE_KIND_WAIT)]
    assert "Which region should the site run in?" in asked[0].content and wait.id in asked[0].content
    assert [(m.role, m.content) for m in told] == [(T.MESSAGE_ROLE_USER, "[Input received] eu-west-1")]

    events = (await rpc.tasks.ListEvents(tpb.ListEventsRequest(
        task_ids=[task_id], types=[event_pb2.EVENT_TYPE_TASK_STATUS_CHANGED]))).events
    moves = [(e.payload["from"], e.payload["to"]) for e in events]
    assert moves[-2:] == [("TASK_STATUS_EXECUTING", "TASK_STATUS_INPUT_REQUIRED"),
                          ("TASK_STATUS_INPUT_REQUIRED", "TASK_STATUS_EXECUTING")]


async def test_auth_outranks_input_and_the_task_returns_when_the_last_wait_on_a_person_ends(rpc: Stubs) -> None:
    task_id = await rpc.executing_task()
    question = await rpc.ask(task_id, INPUT, "Which branch?")
    sign_in = await rpc.ask(task_id, AUTH, "Sign in to the registry", resolver="ops")
    assert await rpc.status(task_id) == T.TASK_STATUS_AUTH_REQUIRED
    progress = await rpc.tasks.GetProgress(tpb.GetProgressRequest(task_id=task_id))
    assert "ops must authorise 'Sign in to the registry'" in progress.summary
    assert "alex must answer 'Which branch?'" in progress.summary

    await rpc.answer(sign_in.id, "signed in")
    assert await rpc.status(task_id) == T.TASK_STATUS_INPUT_REQUIRED
    await rpc.waits.CancelWait(wpb.CancelWaitRequest(wait_id=question.id, reason="found it in the README"))
    assert await rpc.status(task_id) == T.TASK_STATUS_EXECUTING
    messages = (await rpc.tasks.ListMessages(tpb.ListMessagesRequest(task_id=task_id))).messages
    assert any(m.content == "[Auth received] signed in" and m.role == T.MESSAGE_ROLE_USER for m in messages)
    assert any(m.content.startswith("[Wait cancelled]") and m.role == T.MESSAGE_ROLE_SYSTEM for m in messages)


async def test_a_refusal_and_a_timeout_also_end_the_wait_on_a_person(rpc: Stubs) -> None:
    task_id = await rpc.executing_task()
    refused = await rpc.answer((await rpc.ask(task_id, AUTH, "Grant deploy rights")).id, "denied by alex",
                               W.WAIT_STATUS_FAILED)
    assert refused.status == W.WAIT_STATUS_FAILED
    assert await rpc.status(task_id) == T.TASK_STATUS_EXECUTING
    await rpc.ask(task_id, INPUT, "Ship it today?", timeout=duration_pb2.Duration(nanos=300_000_000))
    assert await rpc.status(task_id) == T.TASK_STATUS_INPUT_REQUIRED
    async def executing() -> bool:
        return await rpc.status(task_id) == T.TASK_STATUS_EXECUTING
    await eventually(executing, "the task executing again once its question timed out")
    messages = [m.content for m in (await rpc.tasks.ListMessages(tpb.ListMessagesRequest(task_id=task_id))).messages]
    assert "[Auth refused] denied by alex" in messages
    assert any(m.startswith("[Wait timed out]") for m in messages)


async def test_a_task_paused_while_it_waits_stays_paused_when_answered(rpc: Stubs) -> None:
    task_id = await rpc.executing_task()
    wait = await rpc.ask(task_id, INPUT, "Which region?")
    task = (await rpc.tasks.GetTask(tpb.GetTaskRequest(task_id=task_id))).task
    task.status = T.TASK_STATUS_PAUSED
    await rpc.tasks.UpdateTask(tpb.UpdateTaskRequest(task=task, update_mask={"paths": ["status"]}))
    await rpc.answer(wait.id, "eu")
    assert await rpc.status(task_id) == T.TASK_STATUS_PAUSED


async def test_a_plan_item_waits_on_a_person_while_the_task_goes_on(rpc: Stubs) -> None:
    task_id = await rpc.executing_task(T.PlanItemSpec(id="deploy", title="Deploy"),
                                       T.PlanItemSpec(id="announce", title="Announce", depends_on=["deploy"]),
                                       T.PlanItemSpec(id="docs", title="Write docs"))
    claimed = await rpc.tasks.ClaimPlanItem(tpb.ClaimPlanItemRequest(task_id=task_id, holder_id="agent-1"))
    assert claimed.item.id == "deploy"
    wait = await rpc.ask(task_id, INPUT, "Deploy to production now?", item_id="deploy")
    item = await rpc.item(task_id, "deploy")
    assert (item.status, item.holder_id) == (T.PLAN_ITEM_STATUS_INPUT_REQUIRED, "")
    assert await rpc.status(task_id) == T.TASK_STATUS_EXECUTING
    assert task_id in await rpc.listed(awaiting_person=True)
    assert task_id not in await rpc.listed(awaiting_person=True, statuses=[T.TASK_STATUS_PAUSED])
    progress = await rpc.tasks.GetProgress(tpb.GetProgressRequest(task_id=task_id))
    assert progress.open_waits[0].plan_item_id == "deploy"
    assert "alex must answer 'Deploy to production now?' (for item deploy;" in progress.summary
    state = await rpc.state.GetTaskState(spb.GetTaskStateRequest(task_id=task_id))
    assert "subtask: deploy" in state.yaml and "status: input_required" in state.yaml

    # Neither the waiting item nor what depends on it is ready; the other item is.
    other = await rpc.tasks.ClaimPlanItem(tpb.ClaimPlanItemRequest(task_id=task_id, holder_id="agent-2"))
    assert other.item.id == "docs"
    nothing = await rpc.tasks.ClaimPlanItem(tpb.ClaimPlanItemRequest(task_id=task_id, holder_id="agent-3"))
    assert not nothing.HasField("item") and nothing.remaining_count == 3
    refused = await _error(rpc.tasks.UpdatePlanItem(tpb.UpdatePlanItemRequest(
        task_id=task_id, item_id="deploy", status=T.PLAN_ITEM_STATUS_COMPLETED, holder_id="agent-1")))
    assert refused.code() == grpc.StatusCode.FAILED_PRECONDITION

    await rpc.answer(wait.id, "yes, go")
    assert (await rpc.item(task_id, "deploy")).status == T.PLAN_ITEM_STATUS_PENDING  # held before: anyone may claim it
    again = await rpc.tasks.ClaimPlanItem(tpb.ClaimPlanItemRequest(task_id=task_id, holder_id="agent-3"))
    assert again.item.id == "deploy"
    assert task_id not in await rpc.listed(awaiting_person=True)


async def test_an_unclaimed_item_returns_to_the_status_it_had(rpc: Stubs) -> None:
    task_id = await rpc.executing_task(T.PlanItemSpec(id="build", title="Build"))
    await rpc.tasks.UpdatePlanItem(tpb.UpdatePlanItemRequest(task_id=task_id, item_id="build",
                                                             status=T.PLAN_ITEM_STATUS_IN_PROGRESS))
    first = await rpc.ask(task_id, AUTH, "Unlock the signing key", item_id="build")
    second = await rpc.ask(task_id, INPUT, "Which compiler?", item_id="build")
    assert (await rpc.item(task_id, "build")).status == T.PLAN_ITEM_STATUS_AUTH_REQUIRED
    await rpc.answer(first.id, "unlocked")
    assert (await rpc.item(task_id, "build")).status == T.PLAN_ITEM_STATUS_INPUT_REQUIRED
    await rpc.answer(second.id, "clang")
    assert (await rpc.item(task_id, "build")).status == T.PLAN_ITEM_STATUS_IN_PROGRESS


async def _error(call: object) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await call  # type: ignore[misc]
    return raised.value


async def test_waits_on_a_person_and_their_statuses_are_refused_where_they_do_not_fit(rpc: Stubs) -> None:
    task_id = await rpc.executing_task(T.PlanItemSpec(id="done", title="Done already"))
    await rpc.tasks.UpdatePlanItem(tpb.UpdatePlanItemRequest(task_id=task_id, item_id="done",
                                                             status=T.PLAN_ITEM_STATUS_COMPLETED))
    invalid, failed = grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.FAILED_PRECONDITION
    assert_rpc_error(await _error(rpc.ask("", INPUT, "Which region?")), invalid, "ERROR_REASON_INVALID_FIELD",
                     "task_id")
    assert_rpc_error(await _error(rpc.ask(task_id, INPUT, "  ")), invalid, "ERROR_REASON_INVALID_FIELD",
                     "target.external.question")
    assert_rpc_error(await _error(rpc.ask(task_id, W.EXTERNAL_WAIT_KIND_UNSPECIFIED, "Which region?")), invalid,
                     "ERROR_REASON_INVALID_FIELD", "target.external.question")
    assert_rpc_error(await _error(rpc.ask(task_id, INPUT, "Redo it?", item_id="done")), failed,
                     "ERROR_REASON_FAILED_PRECONDITION", "target.external.plan_item_id")
    assert (await _error(rpc.ask(task_id, INPUT, "Which one?", item_id="nope"))).code() == grpc.StatusCode.NOT_FOUND
    assert_rpc_error(await _error(rpc.tasks.UpdatePlanItem(tpb.UpdatePlanItemRequest(
        task_id=task_id, item_id="done", status=T.PLAN_ITEM_STATUS_INPUT_REQUIRED))), invalid,
        "ERROR_REASON_INVALID_FIELD", "status")
    task = (await rpc.tasks.GetTask(tpb.GetTaskRequest(task_id=task_id))).task
    task.status = T.TASK_STATUS_INPUT_REQUIRED
    assert_rpc_error(await _error(rpc.tasks.UpdateTask(tpb.UpdateTaskRequest(task=task, update_mask={
        "paths": ["status"]}))), failed, "ERROR_REASON_ILLEGAL_TRANSITION")
    task.status = T.TASK_STATUS_CANCELLED
    await rpc.tasks.UpdateTask(tpb.UpdateTaskRequest(task=task, update_mask={"paths": ["status"]}))
    assert_rpc_error(await _error(rpc.ask(task_id, INPUT, "Which region?")), failed,
                     "ERROR_REASON_FAILED_PRECONDITION", "task_id")
    assert (await rpc.waits.ListWaits(wpb.ListWaitsRequest(task_id=task_id))).waits == []


async def test_answers_given_at_once_on_two_replicas_return_the_task_whichever_commits_last(tmp_path: Path) -> None:
    """Two replicas on one PostgreSQL database (whatever --engine says) answer a task's two questions at the
    same moment, many times over: the task never stays waiting with no question open."""
    url = database_url(str(tmp_path / "answers"))
    replicas = [ServerOnDatabase(url) for _ in range(2)]
    for replica in replicas:
        replica.start()
    try:
        async with grpc.aio.insecure_channel(replicas[0].address) as first, \
                grpc.aio.insecure_channel(replicas[1].address) as second:
            one, two = Stubs(first), Stubs(second)
            for round_ in range(15):
                task_id = await one.executing_task()
                asked = [await one.ask(task_id, INPUT, f"question {n} of round {round_}") for n in range(2)]
                await asyncio.gather(one.answer(asked[0].id, "yes"), two.answer(asked[1].id, "no"))
                assert await one.status(task_id) == T.TASK_STATUS_EXECUTING, f"round {round_}"
    finally:
        for replica in replicas:
            replica.stop()
