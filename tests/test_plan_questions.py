""""May be finished" questions, end to end: a message that probably finishes a plan step asks about it in every
view (PostMessage, GetProgress, GetPlan, the task-state YAML) and never marks it done; the question leaves every
view once answered (UpdatePlanItem: COMPLETED, or dismiss_question) or once the step's status changes; a certain
finish completes the step. With a scripted OpenAI-compatible model configured, the model answers first."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator

import grpc
import pytest
from google.protobuf import json_format

from taskmem.v1 import event_pb2, task_pb2
from taskmem.v1 import state_service_pb2 as spb
from taskmem.v1 import task_service_pb2 as pb
from taskmem.v1.state_service_pb2_grpc import StateServiceStub
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from tests.support.scripted_llm import ScriptedLLM, scripted_llm
from tests.support.server_process import ServerProcess

PENDING, IN_PROGRESS, COMPLETED = (task_pb2.PLAN_ITEM_STATUS_PENDING, task_pb2.PLAN_ITEM_STATUS_IN_PROGRESS,
                                   task_pb2.PLAN_ITEM_STATUS_COMPLETED)
AGENT, USER = task_pb2.MESSAGE_ROLE_AGENT, task_pb2.MESSAGE_ROLE_USER

# A vinyl pressing: "lacquers are cut!" says the outcome of step 1 but not its verb ("Get"), so it only asks.
PRESSING = [("lacquers", "Get the lacquers cut"), ("testpress", "Approve the test pressings"),
            ("sleeve", "Send the sleeve artwork to the printer")]
PROBABLE, CERTAIN = "lacquers are cut! side B runs a touch hot but within spec", "Sleeve artwork sent to the printer"


async def pressing_task(tasks: TaskServiceStub) -> str:
    plan = [task_pb2.PlanItemSpec(id=i, title=t) for i, t in PRESSING]
    return (await tasks.CreateTask(pb.CreateTaskRequest(name="Pressing", plan=plan))).task.id


async def say(tasks: TaskServiceStub, task_id: str, content: str, role: int = AGENT) -> pb.PostMessageResponse:
    return await tasks.PostMessage(pb.PostMessageRequest(task_id=task_id, role=role,  # type: ignore[arg-type]
                                                         kind=task_pb2.MESSAGE_KIND_PROGRESS, content=content))


async def views(tasks: TaskServiceStub, state: StateServiceStub, task_id: str) -> tuple[pb.GetProgressResponse, str]:
    progress = await tasks.GetProgress(pb.GetProgressRequest(task_id=task_id))
    return progress, (await state.GetTaskState(spb.GetTaskStateRequest(task_id=task_id))).yaml


async def status_of(tasks: TaskServiceStub, task_id: str, item_id: str) -> task_pb2.PlanItem:
    plan = (await tasks.GetPlan(pb.GetPlanRequest(task_id=task_id))).plan
    return next(item for item in plan.items if item.id == item_id)


@pytest.fixture
def state(channel: grpc.aio.Channel) -> StateServiceStub:
    return StateServiceStub(channel)


async def test_a_probable_finish_is_a_question_in_every_view_and_never_a_completion(
        tasks: TaskServiceStub, state: StateServiceStub) -> None:
    task_id = await pressing_task(tasks)
    posted = await say(tasks, task_id, PROBABLE)
    assert not posted.inferred_items
    [question] = posted.plan_item_questions
    assert (question.item_id, question.message_id) == ("lacquers", posted.message.id)
    assert question.question == f"may be finished: step 1 'Get the lacquers cut' (message {posted.message.id})"
    assert question.evidence == "lacquers are cut" and question.reason
    progress, yaml_text = await views(tasks, state, task_id)
    assert not progress.completed and [q.item_id for q in progress.plan_item_questions] == ["lacquers"]
    assert f"May be finished (answer with UpdatePlanItem" in progress.summary and posted.message.id in progress.summary
    assert "may_be_finished:" in yaml_text and "subtask: lacquers" in yaml_text and posted.message.id in yaml_text
    item = await status_of(tasks, task_id, "lacquers")
    assert item.status == PENDING and item.question.message_id == posted.message.id


async def test_dismissing_the_question_leaves_the_step_as_it_was_and_every_view_without_it(
        tasks: TaskServiceStub, state: StateServiceStub) -> None:
    task_id = await pressing_task(tasks)
    await say(tasks, task_id, PROBABLE)
    updated = await tasks.UpdatePlanItem(pb.UpdatePlanItemRequest(task_id=task_id, item_id="lacquers",
                                                                  dismiss_question=True))
    assert updated.item.status == PENDING and not updated.item.HasField("question")
    assert updated.item.status_source == task_pb2.PLAN_ITEM_STATUS_SOURCE_UNSPECIFIED  # a later message may still infer
    progress, yaml_text = await views(tasks, state, task_id)
    assert not progress.plan_item_questions and "May be finished" not in progress.summary
    assert "may_be_finished" not in yaml_text
    assert [i.id for i in (await say(tasks, task_id, "Step 1 done")).inferred_items] == ["lacquers"]


async def test_answering_yes_completes_the_step_and_the_question_leaves_every_view(
        tasks: TaskServiceStub, state: StateServiceStub) -> None:
    task_id = await pressing_task(tasks)
    await say(tasks, task_id, PROBABLE)
    await tasks.UpdatePlanItem(pb.UpdatePlanItemRequest(task_id=task_id, item_id="lacquers", status=COMPLETED))
    progress, yaml_text = await views(tasks, state, task_id)
    assert [i.id for i in progress.completed] == ["lacquers"] and not progress.plan_item_questions
    assert "may_be_finished" not in yaml_text


async def test_a_status_change_ends_the_question(tasks: TaskServiceStub, state: StateServiceStub) -> None:
    task_id = await pressing_task(tasks)
    await say(tasks, task_id, PROBABLE)
    await tasks.UpdatePlanItem(pb.UpdatePlanItemRequest(task_id=task_id, item_id="lacquers", status=IN_PROGRESS))
    progress, yaml_text = await views(tasks, state, task_id)
    assert not progress.plan_item_questions and "may_be_finished" not in yaml_text


async def test_a_certain_finish_completes_the_step_with_no_question(
        tasks: TaskServiceStub, state: StateServiceStub) -> None:
    task_id = await pressing_task(tasks)
    posted = await say(tasks, task_id, CERTAIN)
    assert [i.id for i in posted.inferred_items] == ["sleeve"] and not posted.plan_item_questions
    progress, yaml_text = await views(tasks, state, task_id)
    assert [i.id for i in progress.completed] == ["sleeve"] and not progress.plan_item_questions
    assert "may_be_finished" not in yaml_text


async def test_dismissing_with_nothing_else_to_change_is_accepted_and_nothing_at_all_is_refused(
        tasks: TaskServiceStub) -> None:
    task_id = await pressing_task(tasks)
    quiet = await tasks.UpdatePlanItem(pb.UpdatePlanItemRequest(task_id=task_id, item_id="sleeve",
                                                                dismiss_question=True))
    assert quiet.item.status == PENDING
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await tasks.UpdatePlanItem(pb.UpdatePlanItemRequest(task_id=task_id, item_id="sleeve"))
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT


# --- with a model configured: the scripted model answers first --------------------------------------------

def answering(answer: str) -> object:
    def reply(system: str, user: str) -> str:
        if not system.startswith("You decide whether a progress message"):
            return "[]"
        return json.dumps({"answer": answer, "reason": "the lacquers being cut is the step's outcome"}) \
            if answer in ("finished", "not_finished", "unsure") else answer
    return reply


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedLLM]:
    with scripted_llm() as model:
        yield model


@pytest.fixture(scope="module")
def judged_server(tmp_path_factory: pytest.TempPathFactory, llm: ScriptedLLM) -> Iterator[ServerProcess]:
    env = {"TASKMEM_LLM_BASE_URL": llm.base_url, "TASKMEM_LLM_MODEL": "scripted", "TASKMEM_LLM_RETRIES": "0",
           "TASKMEM_RECONCILE_ADJUDICATION_TIMEOUT_SECONDS": "2"}
    process = ServerProcess(tmp_path_factory.mktemp("judged") / "taskmem.db", env=env)
    process.start()
    yield process
    process.stop()


@pytest.fixture
async def judged(judged_server: ServerProcess, llm: ScriptedLLM) -> AsyncIterator[TaskServiceStub]:
    llm.requests.clear()
    async with grpc.aio.insecure_channel(judged_server.address) as channel:
        yield TaskServiceStub(channel)


def judge_prompts(llm: ScriptedLLM) -> list[str]:
    return [r["messages"][1]["content"] for r in llm.requests
            if r["messages"][0]["content"].startswith("You decide whether a progress message")]


async def test_the_model_is_asked_with_the_step_the_message_and_who_said_it_and_its_yes_completes_the_step(
        judged: TaskServiceStub, llm: ScriptedLLM) -> None:
    llm.answer = answering("finished")
    task_id = await pressing_task(judged)
    posted = await say(judged, task_id, PROBABLE, role=USER)
    assert [i.id for i in posted.inferred_items] == ["lacquers"] and not posted.plan_item_questions
    [prompt] = judge_prompts(llm)
    assert "1. Get the lacquers cut" in prompt and PROBABLE in prompt and "said by the user" in prompt
    assert "step 1" in prompt
    item = await status_of(judged, task_id, "lacquers")
    assert (item.status, item.status_source, item.status_message_id) == (
        COMPLETED, task_pb2.PLAN_ITEM_STATUS_SOURCE_INFERRED, posted.message.id)
    listed = await judged.ListEvents(pb.ListEventsRequest(task_ids=[task_id], after_cursor=0,
                                                          types=[event_pb2.EVENT_TYPE_PLAN_ITEM_UPDATED]))
    inference = json_format.MessageToDict(listed.events[-1].payload)["inference"]
    assert inference["judged_by"].startswith("scripted: the lacquers being cut") and inference["evidence"]


async def test_the_models_no_dismisses_the_question_and_leaves_the_step(judged: TaskServiceStub,
                                                                        llm: ScriptedLLM) -> None:
    llm.answer = answering("not_finished")
    task_id = await pressing_task(judged)
    posted = await say(judged, task_id, PROBABLE)
    assert not posted.inferred_items and not posted.plan_item_questions
    progress = await judged.GetProgress(pb.GetProgressRequest(task_id=task_id))
    assert not progress.completed and not progress.plan_item_questions


@pytest.mark.parametrize("reply", ["unsure", "I cannot tell from this message."])
async def test_what_the_model_cannot_settle_stays_a_question(judged: TaskServiceStub, llm: ScriptedLLM,
                                                             reply: str) -> None:
    llm.answer = answering(reply)
    task_id = await pressing_task(judged)
    posted = await say(judged, task_id, PROBABLE)
    assert not posted.inferred_items and [q.item_id for q in posted.plan_item_questions] == ["lacquers"]
    progress = await judged.GetProgress(pb.GetProgressRequest(task_id=task_id))
    assert [q.item_id for q in progress.plan_item_questions] == ["lacquers"]


async def test_a_certain_finish_never_asks_the_model(judged: TaskServiceStub, llm: ScriptedLLM) -> None:
    llm.answer = answering("not_finished")
    task_id = await pressing_task(judged)
    assert [i.id for i in (await say(judged, task_id, CERTAIN)).inferred_items] == ["sleeve"]
    assert judge_prompts(llm) == []
