"""QueryTask model routing end to end: a utility and a second scripted model on loopback; each kind of
question reaches its model, the override wins, and when the chosen model is down the other answers."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import pytest

from taskmem.v1 import event_pb2, state_pb2, task_pb2
from taskmem.v1 import state_service_pb2 as pb
from taskmem.v1 import task_service_pb2 as tpb
from taskmem.v1.state_service_pb2_grpc import StateServiceStub
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from tests.support.scripted_llm import ScriptedLLM, scripted_llm
from tests.support.server_process import ServerProcess
from tests.support.eventually import eventually

UTILITY, SECOND = state_pb2.MODEL_TIER_UTILITY, state_pb2.MODEL_TIER_SECOND


def _down(system: str, user: str) -> str:
    raise RuntimeError("this model is down")  # the handler thread dies: the client sees a dropped connection


@pytest.fixture(scope="module")
def models() -> Iterator[tuple[ScriptedLLM, ScriptedLLM]]:
    with scripted_llm() as utility, scripted_llm() as second:
        yield utility, second


@pytest.fixture(scope="module")
def routed_server(tmp_path_factory: pytest.TempPathFactory,
                  models: tuple[ScriptedLLM, ScriptedLLM]) -> Iterator[ServerProcess]:
    utility, second = models
    process = ServerProcess(tmp_path_factory.mktemp("routing") / "taskmem.db", env={
        "TASKMEM_LLM_BASE_URL": utility.base_url, "TASKMEM_LLM_MODEL": "small-local",
        "TASKMEM_LLM_SECOND_BASE_URL": second.base_url, "TASKMEM_LLM_SECOND_MODEL": "big-remote",
        "TASKMEM_LLM_RETRIES": "0", "TASKMEM_RUNNING_SUMMARY_EVERY_MESSAGES": "0"})
    process.start()
    yield process
    process.stop()


@pytest.fixture
async def rpc(routed_server: ServerProcess, models: tuple[ScriptedLLM, ScriptedLLM]) -> AsyncIterator[
        tuple[StateServiceStub, str]]:
    utility, second = models
    utility.answer = lambda system, user: "utility says"
    second.answer = lambda system, user: "second says"
    utility.requests.clear()
    second.requests.clear()
    async with grpc.aio.insecure_channel(routed_server.address) as channel:
        task = (await TaskServiceStub(channel).CreateTask(tpb.CreateTaskRequest(name="migrate"))).task
        yield StateServiceStub(channel), task.id


async def _ask(state: StateServiceStub, task_id: str, question: str, model: int = 0) -> pb.QueryTaskResponse:
    reply: pb.QueryTaskResponse = await state.QueryTask(pb.QueryTaskRequest(task_id=task_id, question=question,
                                                                            model=model))
    return reply


async def test_status_questions_go_to_the_utility_model_and_analysis_to_the_second(
        rpc: tuple[StateServiceStub, str], models: tuple[ScriptedLLM, ScriptedLLM]) -> None:
    state, task_id = rpc
    utility, second = models
    for question in ("where was I?", "what's next?"):
        reply = await _ask(state, task_id, question)
        assert (reply.answer, reply.answered_by, reply.answered_by_model, reply.fell_back) == (
            "utility says", UTILITY, "small-local", False)
    for question in ("should I change the plan?", "analyze the errors"):
        reply = await _ask(state, task_id, question)
        assert (reply.answer, reply.answered_by, reply.answered_by_model, reply.fell_back) == (
            "second says", SECOND, "big-remote", False)
    assert [p.rsplit("Question: ", 1)[1].split("\n")[0] for p in utility.user_prompts] == ["where was I?",
                                                                                          "what's next?"]
    assert [p.rsplit("Question: ", 1)[1].split("\n")[0] for p in second.user_prompts] == [
        "should I change the plan?", "analyze the errors"]


async def test_the_per_call_override_replaces_the_rule(rpc: tuple[StateServiceStub, str]) -> None:
    state, task_id = rpc
    assert (await _ask(state, task_id, "where was I?", SECOND)).answered_by == SECOND
    assert (await _ask(state, task_id, "analyze the errors", UTILITY)).answered_by == UTILITY


async def test_when_the_chosen_model_is_down_the_other_answers_and_says_so(
        rpc: tuple[StateServiceStub, str], models: tuple[ScriptedLLM, ScriptedLLM]) -> None:
    state, task_id = rpc
    utility, second = models
    second.answer = _down
    reply = await _ask(state, task_id, "should I change the plan?")
    assert (reply.answer, reply.answered_by, reply.fell_back) == ("utility says", UTILITY, True)
    second.answer = lambda system, user: "second says"
    utility.answer = _down
    reply = await _ask(state, task_id, "where was I?")
    assert (reply.answer, reply.answered_by, reply.answered_by_model, reply.fell_back) == (
        "second says", SECOND, "big-remote", True)


async def test_when_both_models_are_down_the_call_fails_naming_both(
        rpc: tuple[StateServiceStub, str], models: tuple[ScriptedLLM, ScriptedLLM]) -> None:
    state, task_id = rpc
    for model in models:
        model.answer = _down
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await _ask(state, task_id, "where was I?")
    assert raised.value.code() == grpc.StatusCode.UNAVAILABLE
    assert "second model also failed" in (raised.value.details() or "")


async def test_extraction_and_running_summaries_always_use_the_utility_model(
        tmp_path: Path, models: tuple[ScriptedLLM, ScriptedLLM]) -> None:
    utility, second = models
    line = re.compile(r"^\[(msg_[0-9a-f]+)\] user: (.*)$", re.MULTILINE)

    def utility_answer(system: str, user: str) -> str:
        if "structured state extractor" not in system:
            return "Caching was chosen: Redis."
        return json.dumps([{"type_tag": "decision", "text": "Use Redis for caching", "status": "active",
                            "confidence": "high", "topic_tags": ["caching"], "refs": [message_id],
                            "supersedes": None, "conflict": False}
                           for message_id, text in line.findall(user) if "Redis" in text])
    utility.answer = utility_answer
    second.answer = lambda system, user: "second says"
    utility.requests.clear()
    second.requests.clear()
    server = ServerProcess(tmp_path / "taskmem.db", env={
        "TASKMEM_LLM_BASE_URL": utility.base_url, "TASKMEM_LLM_MODEL": "small-local",
        "TASKMEM_LLM_SECOND_BASE_URL": second.base_url, "TASKMEM_LLM_SECOND_MODEL": "big-remote",
        "TASKMEM_LLM_RETRIES": "0", "TASKMEM_RUNNING_SUMMARY_EVERY_MESSAGES": "2"})
    server.start()
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            tasks, state = TaskServiceStub(channel), StateServiceStub(channel)
            task_id = (await tasks.CreateTask(tpb.CreateTaskRequest(name="cache"))).task.id
            for role, content in ((task_pb2.MESSAGE_ROLE_USER, "Let's use Redis for caching"),
                                  (task_pb2.MESSAGE_ROLE_AGENT, "OK, Redis it is")):
                await tasks.PostMessage(tpb.PostMessageRequest(task_id=task_id, role=role, content=content))
            extracted = await state.ExtractState(pb.ExtractStateRequest(task_id=task_id))
            assert extracted.report.inserted == 1 and extracted.items[0].text == "Use Redis for caching"
            async def summaries() -> list[event_pb2.Event]:  # the running summary is written in the background
                return list((await tasks.ListEvents(tpb.ListEventsRequest(
                    task_ids=[task_id], types=[event_pb2.EVENT_TYPE_RUNNING_SUMMARY_UPDATED]))).events)
            await eventually(summaries, "the running summary")
            # even an analysis question's model is never asked to extract or summarise
            assert (await _ask(state, task_id, "analyze the caching choice")).answered_by == SECOND
    finally:
        server.stop()
    systems = [request["messages"][0]["content"] for request in utility.requests]
    assert any("structured state extractor" in system for system in systems)
    assert any("Previous summary:" in prompt for prompt in utility.user_prompts)
    assert len(second.requests) == 1 and "analyze the caching choice" in second.user_prompts[0]
