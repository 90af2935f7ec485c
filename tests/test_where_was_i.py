"""Issue 11 end to end: "where was I?" tells one truth. Decisions, constraints, questions, waits and
errors come from the task's reconciled state in every view (task-state YAML, GetProgress, QueryTask
without a model, BuildContext, RenderState, the YAML mirror), a superseded decision is never shown as
current, an explicit `supersedes` always retires its item, a long plan keeps its completed ids, and a
down embedding endpoint is EMBEDDING_UNAVAILABLE on every StateService path."""

from __future__ import annotations

import json
import re
from pathlib import Path

import grpc
import pytest
import yaml
from google.protobuf import duration_pb2, json_format

from taskmem.tiktoken_offline import token_counter
from taskmem.v1 import state_pb2, task_pb2, wait_pb2
from taskmem.v1 import state_service_pb2 as pb
from taskmem.v1 import task_service_pb2 as tpb
from taskmem.v1 import wait_service_pb2 as wpb
from taskmem.v1.state_service_pb2_grpc import StateServiceStub
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from taskmem.v1.wait_service_pb2_grpc import WaitServiceStub
from tests.support.rpc_errors import assert_rpc_error
from tests.support.scripted_llm import scripted_llm
from tests.support.server_process import ServerProcess
from tests.support.eventually import eventually

COUNTER = token_counter()
DECISION, CONSTRAINT, QUESTION = (state_pb2.STATE_ITEM_TYPE_DECISION, state_pb2.STATE_ITEM_TYPE_CONSTRAINT,
                                  state_pb2.STATE_ITEM_TYPE_QUESTION)
SUPERSEDED = state_pb2.STATE_ITEM_STATUS_SUPERSEDED
CHARTS = ["Use Chart.js for the dashboard charts", "Use Plotly for the dashboard charts instead of Chart.js",
          "Use Vega-Lite for the dashboard charts instead of Plotly"]


async def _task(tasks: TaskServiceStub, items: int = 2, done: int = 0) -> str:
    plan = [task_pb2.PlanItemSpec(id=f"s{n}", title=f"Step {n}") for n in range(items)]
    task = (await tasks.CreateTask(tpb.CreateTaskRequest(name="Dashboard", goal="Ship the dashboard",
                                                         plan=plan))).task
    for n in range(done):
        await tasks.UpdatePlanItem(tpb.UpdatePlanItemRequest(task_id=task.id, item_id=f"s{n}",
                                                             status=task_pb2.PLAN_ITEM_STATUS_COMPLETED))
    if done < items:
        await tasks.UpdatePlanItem(tpb.UpdatePlanItemRequest(task_id=task.id, item_id=f"s{done}",
                                                             status=task_pb2.PLAN_ITEM_STATUS_IN_PROGRESS))
    return task.id


@pytest.fixture
def rpc(channel: grpc.aio.Channel) -> tuple[TaskServiceStub, StateServiceStub, WaitServiceStub]:
    return TaskServiceStub(channel), StateServiceStub(channel), WaitServiceStub(channel)


async def test_a_superseded_decision_is_never_shown_as_current_in_any_view(rpc) -> None:
    tasks, state, _ = rpc
    task_id = await _task(tasks)
    added = [await state.AddDecision(pb.AddDecisionRequest(task_id=task_id, text=text)) for text in CHARTS]
    assert [a.report.superseded for a in added] == [0, 1, 1]
    assert added[1].item.uid != added[0].item.uid and all(a.decision.memory_entry_id for a in added)

    answer = await state.GetTaskState(pb.GetTaskStateRequest(task_id=task_id))
    assert yaml.safe_load(answer.yaml)["decisions_log"] == [CHARTS[2]]
    assert [d.text for d in answer.state.decisions] == [CHARTS[2]] and answer.state.decisions[0].uid
    progress = await tasks.GetProgress(tpb.GetProgressRequest(task_id=task_id))
    assert [d.text for d in progress.decisions] == [CHARTS[2]]
    assert CHARTS[2] in progress.summary and "Chart.js for" not in progress.summary
    rendered = (await state.RenderState(pb.RenderStateRequest(task_id=task_id))).text
    assert CHARTS[2] in rendered and CHARTS[0] not in rendered and CHARTS[1] not in rendered
    query = await state.QueryTask(pb.QueryTaskRequest(task_id=task_id, question="which chart library?"))
    assert not query.from_model and CHARTS[2] in query.answer and CHARTS[1] not in query.answer
    context = (await state.BuildContext(pb.BuildContextRequest(task_id=task_id, token_budget=4000,
                                                              query="charts Plotly"))).text
    assert "[decision]" not in context  # the memories section leaves decisions to the state section
    assert CHARTS[2] in context and CHARTS[0] not in context and CHARTS[1] not in context
    # The record stays complete: the retired decisions are superseded items and memory entries.
    old = (await state.ListStateItems(pb.ListStateItemsRequest(task_id=task_id, include_superseded=True))).items
    retired = {i.text: i for i in old if i.status == SUPERSEDED}
    assert set(retired) == {CHARTS[0], CHARTS[1]} and retired[CHARTS[1]].replaced_by == added[2].item.uid


@pytest.mark.parametrize(("words", "retired"), [
    ("Mailchimp's pricing jumped again. Let's move the newsletter from Mailchimp to Buttondown.", True),
    ("Mailchimp's pricing jumped again. Let's move the newsletter over to Buttondown.", False),
])
async def test_a_decision_the_user_retires_is_never_shown_in_force_without_a_question_beside_it(
        rpc, words: str, retired: bool) -> None:
    # The agent records the new decision from the user's message (its ref), names nothing it replaces and
    # passes no supersedes. When the message names the old value as retired ("from Mailchimp to") it is
    # retired everywhere; in plainer words it is asked, the question beside it in every view.
    tasks, state, _ = rpc
    task_id = await _task(tasks)
    old = "Send the newsletter with Mailchimp"
    new = "Send the newsletter with Buttondown"
    await state.AddDecision(pb.AddDecisionRequest(task_id=task_id, text=old))
    said = (await tasks.PostMessage(tpb.PostMessageRequest(
        task_id=task_id, role=task_pb2.MESSAGE_ROLE_USER, content=words))).message.id
    recorded = await state.UpsertStateItems(pb.UpsertStateItemsRequest(task_id=task_id, items=[
        state_pb2.StateItemCandidate(type=DECISION, text=new, refs=[said])]))
    assert (recorded.report.superseded, recorded.report.conflicted) == ((1, 0) if retired else (0, 1))
    items = (await state.ListStateItems(pb.ListStateItemsRequest(task_id=task_id, include_superseded=True))).items
    if retired:
        assert next(i for i in items if i.text == old).supersession_evidence.ref_message_id == said
    question = "stand beside it, or say the same?"

    def in_force_alone(text: str) -> bool:
        """The old decision shown with no question beside it."""
        return old in text and question not in text
    data = yaml.safe_load((await state.GetTaskState(pb.GetTaskStateRequest(task_id=task_id))).yaml)
    assert data.get("decisions_log", []) == ([new] if retired else [])
    progress = await tasks.GetProgress(tpb.GetProgressRequest(task_id=task_id))
    assert [d.text for d in progress.decisions] == ([new] if retired else [])
    rendered = (await state.RenderState(pb.RenderStateRequest(task_id=task_id))).text
    built = (await state.BuildContext(pb.BuildContextRequest(task_id=task_id, token_budget=4000))).text
    for text in (yaml.safe_dump(data), progress.summary, rendered, built):
        assert new in text and not in_force_alone(text)
        assert (old not in text) if retired else (question in text)


async def test_an_explicit_supersedes_retires_the_item_whatever_the_similarity(rpc) -> None:
    tasks, state, _ = rpc
    task_id = await _task(tasks)
    first = await state.UpsertStateItems(pb.UpsertStateItemsRequest(task_id=task_id, items=[
        state_pb2.StateItemCandidate(type=DECISION, text="Use X for the charts")]))
    old = first.items[0].uid
    # Today this merged as a duplicate; stated explicitly, it must supersede.
    second = await state.UpsertStateItems(pb.UpsertStateItemsRequest(task_id=task_id, items=[
        state_pb2.StateItemCandidate(type=DECISION, text="Use Y instead of X for the charts", supersedes=old)]))
    assert second.report.superseded == 1 and second.report.results[0].target_uid == old
    new = second.report.results[0].uid
    # And one with nothing in common with what it replaces.
    third = await state.UpsertStateItems(pb.UpsertStateItemsRequest(task_id=task_id, items=[
        state_pb2.StateItemCandidate(type=DECISION, text="Draw no charts; ship tables", supersedes=new)]))
    assert third.report.superseded == 1
    every = (await state.ListStateItems(pb.ListStateItemsRequest(task_id=task_id, include_superseded=True))).items
    by_uid = {i.uid: i for i in every}
    assert by_uid[old].status == SUPERSEDED and by_uid[new].status == SUPERSEDED
    assert by_uid[new].supersession_evidence.matched_by == "stated by the caller"
    assert by_uid[new].replaced_by == third.report.results[0].uid
    decisions = yaml.safe_load((await state.GetTaskState(pb.GetTaskStateRequest(task_id=task_id))).yaml)
    assert decisions["decisions_log"] == ["Draw no charts; ship tables"]
    # AddDecision takes the same explicit statement.
    final = await state.AddDecision(pb.AddDecisionRequest(task_id=task_id, text="Tables only, in HTML",
                                                          supersedes=third.report.results[0].uid))
    assert final.report.superseded == 1
    progress = await tasks.GetProgress(tpb.GetProgressRequest(task_id=task_id))
    assert [d.text for d in progress.decisions] == ["Tables only, in HTML"]


async def test_a_sixty_item_plan_yaml_lists_every_completed_id_within_budget(rpc) -> None:
    tasks, state, _ = rpc
    task_id = await _task(tasks, items=60, done=29)
    answer = await state.GetTaskState(pb.GetTaskStateRequest(task_id=task_id, token_budget=1500))
    data = yaml.safe_load(answer.yaml)
    assert data["plan"]["completed"] == [f"s{n}" for n in range(29)]
    assert list(answer.state.completed_ids) == [f"s{n}" for n in range(29)]
    assert [s["id"] for s in data["subtasks"]] == ["s29", "s30", "s31", "s32"]
    assert answer.token_count <= 1500 and list(answer.omitted) == []
    # Tight: ids go oldest first, and the response says so; the current item stays.
    tight = await state.GetTaskState(pb.GetTaskStateRequest(task_id=task_id, token_budget=120))
    assert tight.token_count <= 120 and any("completed ids" in o for o in tight.omitted)
    assert "s29" in [s.id for s in tight.state.subtasks]


async def test_constraints_questions_risks_waits_and_errors_appear_in_yaml_and_progress(rpc) -> None:
    tasks, state, waits = rpc
    task_id = await _task(tasks)
    await state.UpsertStateItems(pb.UpsertStateItemsRequest(task_id=task_id, items=[
        state_pb2.StateItemCandidate(type=CONSTRAINT, text="Never deploy on Fridays"),
        state_pb2.StateItemCandidate(type=QUESTION, text="Which region hosts the staging cluster?"),
        state_pb2.StateItemCandidate(type=state_pb2.STATE_ITEM_TYPE_RISK, text="The CDN quota may run out")]))
    wait = (await waits.CreateWait(wpb.CreateWaitRequest(
        task_id=task_id, criteria="release approved",
        target=wait_pb2.WaitTarget(external=wait_pb2.ExternalTarget(resolver="release-manager")),
        timeout=duration_pb2.Duration(seconds=7200)))).wait
    await state.AddError(pb.AddErrorRequest(task_id=task_id, subtask_id="s0", error="npm ci failed: EAI_AGAIN"))

    data = yaml.safe_load((await state.GetTaskState(pb.GetTaskStateRequest(task_id=task_id))).yaml)
    assert data["constraints"] == ["Never deploy on Fridays"]
    assert data["open_questions"] == ["Which region hosts the staging cluster?"]
    assert data["open_risks"] == ["The CDN quota may run out"]
    opened = data["open_waits"][0]
    assert (opened["id"], opened["kind"], opened["criteria"], opened["timeout"]) == (
        wait.id, "external", "release approved", "2h")
    assert opened["since"].endswith("Z")
    assert data["errors_encountered"] == [{"subtask": "s0", "error": "npm ci failed: EAI_AGAIN"}]

    progress = await tasks.GetProgress(tpb.GetProgressRequest(task_id=task_id))
    assert [c.text for c in progress.constraints] == ["Never deploy on Fridays"]
    assert [q.text for q in progress.open_questions] == ["Which region hosts the staging cluster?"]
    assert [(w.wait_id, w.criteria, w.timeout.seconds) for w in progress.open_waits] == [
        (wait.id, "release approved", 7200)]
    for said in ("Never deploy on Fridays", "Which region hosts", "release approved", "EAI_AGAIN"):
        assert said in progress.summary, said
    # A resolution recorded for the same error marks it resolved rather than adding a second one.
    again = await state.AddError(pb.AddErrorRequest(task_id=task_id, subtask_id="s0",
                                                    error="npm ci failed: EAI_AGAIN", resolution="retried"))
    assert again.item.status == state_pb2.STATE_ITEM_STATUS_DONE
    data = yaml.safe_load((await state.GetTaskState(pb.GetTaskStateRequest(task_id=task_id))).yaml)
    assert data["errors_encountered"] == [{"subtask": "s0", "error": "npm ci failed: EAI_AGAIN",
                                           "resolution": "retried"}]
    # An answered wait leaves the views.
    await waits.ResolveWait(wpb.ResolveWaitRequest(wait_id=wait.id, result="approved"))
    assert "open_waits" not in yaml.safe_load((await state.GetTaskState(pb.GetTaskStateRequest(
        task_id=task_id))).yaml)


async def test_get_progress_of_a_sixty_item_plan_is_small_and_names_every_completed_id(rpc) -> None:
    tasks, state, _ = rpc
    task_id = await _task(tasks, items=60, done=29)
    for text in CHARTS:
        await state.AddDecision(pb.AddDecisionRequest(task_id=task_id, text=text))
    progress = await tasks.GetProgress(tpb.GetProgressRequest(task_id=task_id))
    assert COUNTER.count(progress.summary) < 400
    named = set(re.findall(r"\bs\d+\b", progress.summary.split("\n")[0]))
    assert {f"s{n}" for n in range(29)} <= named
    as_json = json.dumps(json_format.MessageToDict(progress))
    assert COUNTER.count(as_json) < 3000  # was 6.4k tokens
    assert [i.id for i in progress.completed] == [f"s{n}" for n in range(29)]


async def test_the_yaml_mirror_shows_only_active_decisions(fresh_server: ServerProcess, tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    server = ServerProcess(fresh_server.database, env={"TASKMEM_STATE_YAML_MIRROR_DIR": str(mirror)})
    server.start()
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            tasks, state = TaskServiceStub(channel), StateServiceStub(channel)
            task_id = await _task(tasks)
            for text in CHARTS:
                await state.AddDecision(pb.AddDecisionRequest(task_id=task_id, text=text))
            path = mirror / "default" / f"{task_id}.yaml"
            await eventually(lambda: path.exists() and CHARTS[2] in path.read_text(), "the YAML mirror")
            assert yaml.safe_load(path.read_text())["decisions_log"] == [CHARTS[2]]
    finally:
        server.stop()


async def test_a_down_embedding_endpoint_is_embedding_unavailable_on_every_state_path(
        fresh_server: ServerProcess) -> None:
    with scripted_llm() as llm:
        llm.answer = lambda system, user: json.dumps([{
            "type_tag": "decision", "text": "Use Redis for caching", "status": "active", "confidence": "high",
            "refs": re.findall(r"\[(msg_[^\]]+)\] user:", user)}])
        server = ServerProcess(fresh_server.database, "--embedding-backend", "openai", "--embedding-url",
                               "http://127.0.0.1:9/v1", "--embedding-model", "nothing-listens",
                               "--embedding-dimension", "8",
                               env={"TASKMEM_LLM_RETRIES": "0", "TASKMEM_LLM_BASE_URL": llm.base_url,
                                    "TASKMEM_LLM_MODEL": "scripted"})
        server.start()
        try:
            async with grpc.aio.insecure_channel(server.address) as channel:
                tasks, state = TaskServiceStub(channel), StateServiceStub(channel)
                task_id = await _task(tasks)
                await tasks.PostMessage(tpb.PostMessageRequest(task_id=task_id, role=task_pb2.MESSAGE_ROLE_USER,
                                                               content="Let's use Redis for caching."))
                calls = [
                    state.AddDecision(pb.AddDecisionRequest(task_id=task_id, text="Use Redis")),
                    state.AddError(pb.AddErrorRequest(task_id=task_id, error="Redis refused the connection")),
                    state.UpsertStateItems(pb.UpsertStateItemsRequest(task_id=task_id, items=[
                        state_pb2.StateItemCandidate(type=DECISION, text="Use Redis")])),
                    state.ExtractState(pb.ExtractStateRequest(task_id=task_id)),
                ]
                for call in calls:
                    with pytest.raises(grpc.aio.AioRpcError) as failed:
                        await call
                    assert_rpc_error(failed.value, grpc.StatusCode.UNAVAILABLE, "ERROR_REASON_EMBEDDING_UNAVAILABLE")
                assert llm.requests, "ExtractState reached the embedding step"
                items = (await state.ListStateItems(pb.ListStateItemsRequest(task_id=task_id))).items
                assert list(items) == []  # nothing half-written
        finally:
            server.stop()


async def test_decisions_recorded_before_the_state_held_them_are_adopted_at_start(fresh_server: ServerProcess) -> None:
    fresh_server.start()
    async with grpc.aio.insecure_channel(fresh_server.address) as channel:
        tasks, state = TaskServiceStub(channel), StateServiceStub(channel)
        task_id = await _task(tasks)
        for text in CHARTS:
            await state.AddDecision(pb.AddDecisionRequest(task_id=task_id, text=text))
        await state.AddError(pb.AddErrorRequest(task_id=task_id, error="CSP blocks the CDN"))
    fresh_server.stop()
    # A database from before issue 11: the memory entries, and no state item or link for them.
    fresh_server.sql("DELETE FROM state_items")
    fresh_server.sql("DELETE FROM state_item_entries")
    fresh_server.start()
    async with grpc.aio.insecure_channel(fresh_server.address) as channel:
        state = StateServiceStub(channel)
        data = yaml.safe_load((await state.GetTaskState(pb.GetTaskStateRequest(task_id=task_id))).yaml)
        assert data["decisions_log"] == [CHARTS[2]]
        assert data["errors_encountered"] == [{"error": "CSP blocks the CDN"}]
        every = (await state.ListStateItems(pb.ListStateItemsRequest(task_id=task_id, include_superseded=True))).items
        assert sorted(i.text for i in every if i.status == SUPERSEDED) == sorted(CHARTS[:2])
    fresh_server.restart()  # adopted once: nothing new the second time
    async with grpc.aio.insecure_channel(fresh_server.address) as channel:
        again = (await StateServiceStub(channel).ListStateItems(pb.ListStateItemsRequest(
            task_id=task_id, include_superseded=True))).items
        assert len(again) == len(every)


async def test_query_task_with_a_model_is_given_the_current_state_not_the_retired_decisions(
        fresh_server: ServerProcess) -> None:
    with scripted_llm() as llm:
        llm.answer = lambda system, user: "You chose Vega-Lite."
        server = ServerProcess(fresh_server.database, env={"TASKMEM_LLM_BASE_URL": llm.base_url,
                                                           "TASKMEM_LLM_MODEL": "scripted", "TASKMEM_LLM_RETRIES": "0"})
        server.start()
        try:
            async with grpc.aio.insecure_channel(server.address) as channel:
                tasks, state = TaskServiceStub(channel), StateServiceStub(channel)
                task_id = await _task(tasks)
                for text in CHARTS:
                    await state.AddDecision(pb.AddDecisionRequest(task_id=task_id, text=text))
                answer = await state.QueryTask(pb.QueryTaskRequest(task_id=task_id, question="which charts?"))
                assert answer.from_model and answer.answer == "You chose Vega-Lite."
                prompt = llm.user_prompts[-1]
                assert f"Decisions: {CHARTS[2]}." in prompt.splitlines()
                assert CHARTS[0] not in prompt and CHARTS[1] not in prompt
        finally:
            server.stop()
