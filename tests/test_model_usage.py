"""Cost accounting of the server's model calls end to end (issue 29, point 4): a scripted chat model and a fake
embedding endpoint on loopback report `usage`; GetTaskUsage sums a task's calls by model and purpose beside the
tokens its agents reported, /metrics shows them by model, the CLI prints them, and a namespace whose budget is
used up has its model steps skipped (the writes still succeed, and each says so)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import pytest
from prometheus_client.parser import text_string_to_metric_families

from taskmem.v1 import memory_pb2
from taskmem.v1 import memory_service_pb2 as mpb
from taskmem.v1 import state_pb2, task_pb2
from taskmem.v1 import state_service_pb2 as spb
from taskmem.v1 import task_service_pb2 as pb
from taskmem.v1.memory_service_pb2_grpc import MemoryServiceStub
from taskmem.v1.state_service_pb2_grpc import StateServiceStub
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from tests.support.fake_embeddings import FakeEmbeddings, fake_embeddings
from tests.support.scripted_llm import ScriptedLLM, scripted_llm
from tests.support.server_process import ServerProcess
from tests.support.eventually import HANG_GUARD_SECONDS, eventually

METRICS_PREFIX = "taskmem: metrics on "
FREE_KEY, TIGHT_KEY = "free-key", "tight-key"
TIGHT_BUDGET = 100  # tokens in plus out: one extraction answered with usage (100, 20) uses it up
EXTRACTION, QUERY, EMBEDDING = (task_pb2.MODEL_CALL_PURPOSE_STATE_EXTRACTION, task_pb2.MODEL_CALL_PURPOSE_QUERY,
                                task_pb2.MODEL_CALL_PURPOSE_EMBEDDING)


@pytest.fixture(scope="module")
def endpoints() -> Iterator[tuple[ScriptedLLM, FakeEmbeddings]]:
    with scripted_llm() as llm, fake_embeddings() as embeddings:
        yield llm, embeddings


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory,
           endpoints: tuple[ScriptedLLM, FakeEmbeddings]) -> Iterator[ServerProcess]:
    llm, embeddings = endpoints
    process = ServerProcess(tmp_path_factory.mktemp("usage") / "taskmem.db", "--metrics-listen", "127.0.0.1:0", env={
        "TASKMEM_LLM_BASE_URL": llm.base_url, "TASKMEM_LLM_MODEL": "small-local", "TASKMEM_LLM_RETRIES": "0",
        "TASKMEM_EMBEDDING_BACKEND": "openai", "TASKMEM_EMBEDDING_URL": embeddings.base_url,
        "TASKMEM_EMBEDDING_MODEL": "words-16", "TASKMEM_EMBEDDING_DIMENSION": "16",
        "TASKMEM_RUNNING_SUMMARY_EVERY_MESSAGES": "0", "TASKMEM_RECONCILE_ADJUDICATION": "off",
        "TASKMEM_API_KEYS": f"{FREE_KEY}:free;{TIGHT_KEY}:tight",
        "TASKMEM_MODEL_TOKEN_BUDGETS": f"tight={TIGHT_BUDGET}"})
    process.start()
    yield process
    process.stop()


@pytest.fixture
async def channel(server: ServerProcess, endpoints: tuple[ScriptedLLM, FakeEmbeddings]) -> AsyncIterator[
        grpc.aio.Channel]:
    llm, _ = endpoints
    llm.answer = lambda system, user: "[]" if "Question:" not in user else "you were deploying"
    llm.usage = (100, 20)
    async with grpc.aio.insecure_channel(server.address) as channel:
        yield channel


def _key(key: str) -> dict[str, list[tuple[str, str]]]:
    """The call's metadata for an API key ("" : none, for a server without keys)."""
    return {"metadata": [("authorization", f"Bearer {key}")]} if key else {}


async def _task_with_user_message(tasks: TaskServiceStub, key: str, text: str) -> str:
    task = (await tasks.CreateTask(pb.CreateTaskRequest(name="deploy"), **_key(key))).task
    await tasks.PostMessage(pb.PostMessageRequest(task_id=task.id, role=task_pb2.MESSAGE_ROLE_USER, content=text),
                            **_key(key))
    return task.id


def _scrape(server: ServerProcess) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    url = next(line for line in server.output if line.startswith(METRICS_PREFIX))[len(METRICS_PREFIX):].strip()
    with urllib.request.urlopen(url, timeout=HANG_GUARD_SECONDS) as response:
        text = response.read().decode()
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(text) for sample in family.samples}


async def test_task_usage_sums_the_servers_model_calls_by_model_and_purpose_beside_the_agents_tokens(
        channel: grpc.aio.Channel, server: ServerProcess) -> None:
    tasks, state = TaskServiceStub(channel), StateServiceStub(channel)
    task_id = await _task_with_user_message(tasks, FREE_KEY, "let us deploy on friday")
    await state.ExtractState(spb.ExtractStateRequest(task_id=task_id), **_key(FREE_KEY))
    answer = await state.QueryTask(spb.QueryTaskRequest(task_id=task_id, question="where was I?"), **_key(FREE_KEY))
    assert answer.from_model
    await state.AddDecision(spb.AddDecisionRequest(task_id=task_id, text="Use Redis for caching"), **_key(FREE_KEY))
    for tokens_in, tokens_out in ((7, 3), (5, 0)):
        await tasks.RecordAction(pb.RecordActionRequest(
            task_id=task_id, summary="called the planner", status=task_pb2.ACTION_STATUS_SUCCEEDED,
            tokens_in=tokens_in, tokens_out=tokens_out), **_key(FREE_KEY))

    usage = await tasks.GetTaskUsage(pb.GetTaskUsageRequest(task_id=task_id), **_key(FREE_KEY))

    chat = {line.purpose: line for line in usage.model_usage if line.model == "small-local"}
    assert {purpose: (line.calls, line.failed_calls, line.refused_calls, line.tokens_in, line.tokens_out)
            for purpose, line in chat.items()} == {EXTRACTION: (1, 0, 0, 100, 20), QUERY: (1, 0, 0, 100, 20)}
    assert all(line.latency.ToTimedelta().total_seconds() > 0 for line in chat.values())
    embedded = [line for line in usage.model_usage if line.model == "openai:words-16"]
    assert [line.purpose for line in embedded] == [EMBEDDING]
    assert embedded[0].calls >= 1 and embedded[0].tokens_in >= len("Use Redis for caching".split())
    assert embedded[0].tokens_out == 0
    assert (usage.model_tokens_in, usage.model_tokens_out) == (200 + embedded[0].tokens_in, 40)
    assert (usage.agent_tokens_in, usage.agent_tokens_out, usage.actions) == (12, 3, 2)
    assert (usage.tokens_in, usage.tokens_out) == (usage.model_tokens_in + 12, 43)
    assert not usage.HasField("namespace_budget")  # the namespace has no budget

    samples = _scrape(server)
    tokens = "taskmem_model_tokens_total"
    assert samples[(tokens, (("direction", "in"), ("model", "small-local"), ("purpose", "state_extraction")))] >= 100
    assert samples[(tokens, (("direction", "out"), ("model", "small-local"), ("purpose", "query")))] >= 20
    assert samples[(tokens, (("direction", "in"), ("model", "openai:words-16"), ("purpose", "embedding")))] > 0

    shown = subprocess.run([sys.executable, "-m", "taskmem", "tasks", "usage", task_id, "--address", server.address,
                            "--token", FREE_KEY], capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert "state_extraction" in shown.stdout and "query" in shown.stdout
    assert f"Total  in {usage.tokens_in}  out 43" in shown.stdout
    as_json = subprocess.run([sys.executable, "-m", "taskmem", "tasks", "usage", task_id, "--json", "--address",
                              server.address, "--token", FREE_KEY], capture_output=True, text=True, timeout=60)
    assert json.loads(as_json.stdout)["agent_tokens_in"] == "12"  # int64 is a string in proto JSON


async def test_a_used_up_namespace_budget_skips_model_steps_and_says_so_while_writes_succeed(
        channel: grpc.aio.Channel, server: ServerProcess, endpoints: tuple[ScriptedLLM, FakeEmbeddings]) -> None:
    llm, _ = endpoints
    tasks, state = TaskServiceStub(channel), StateServiceStub(channel)
    task_id = await _task_with_user_message(tasks, TIGHT_KEY, "we ship on friday")
    first = await state.ExtractState(spb.ExtractStateRequest(task_id=task_id), **_key(TIGHT_KEY))
    assert first.report.skipped_reason == state_pb2.EXTRACTION_SKIP_REASON_UNSPECIFIED  # 120 tokens: now used up
    asked = len(llm.requests)

    await tasks.PostMessage(pb.PostMessageRequest(task_id=task_id, role=task_pb2.MESSAGE_ROLE_USER,
                                                  content="actually ship on monday"), **_key(TIGHT_KEY))
    skipped = await state.ExtractState(spb.ExtractStateRequest(task_id=task_id), **_key(TIGHT_KEY))
    assert skipped.report.skipped_reason == state_pb2.EXTRACTION_SKIP_REASON_MODEL_BUDGET_EXHAUSTED
    again = await state.ExtractState(spb.ExtractStateRequest(task_id=task_id), **_key(TIGHT_KEY))
    # The watermark stayed: the unread message is still waiting for a model, not passed over.
    assert again.report.skipped_reason == state_pb2.EXTRACTION_SKIP_REASON_MODEL_BUDGET_EXHAUSTED
    assert again.report.messages_read == 1
    answer = await state.QueryTask(spb.QueryTaskRequest(task_id=task_id, question="where was I?"), **_key(TIGHT_KEY))
    assert not answer.from_model and "model budget" in answer.note and answer.answer
    decided = await state.AddDecision(spb.AddDecisionRequest(task_id=task_id, text="Ship on Monday"),
                                      **_key(TIGHT_KEY))
    assert decided.item.uid  # the write succeeds: embeddings are counted, never refused
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await MemoryServiceStub(channel).ExtractMemories(mpb.ExtractMemoriesRequest(
            task_id=task_id, subtask_id="s1", model_output="shipped"), **_key(TIGHT_KEY))
    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "model_token_budgets" in (refused.value.details() or "")
    assert len(llm.requests) == asked  # the chat model was not asked again

    events = await tasks.ListEvents(pb.ListEventsRequest(task_ids=[task_id]), **_key(TIGHT_KEY))
    reasons = [e.payload["skipped_reason"] for e in events.events if e.payload and "skipped_reason" in e.payload]
    assert reasons.count("model_budget_exhausted") == 2

    usage = await tasks.GetTaskUsage(pb.GetTaskUsageRequest(task_id=task_id), **_key(TIGHT_KEY))
    chat = {line.purpose: line for line in usage.model_usage if line.model == "small-local"}
    assert (chat[EXTRACTION].calls, chat[EXTRACTION].refused_calls, chat[EXTRACTION].tokens_in) == (3, 2, 100)
    assert (chat[QUERY].calls, chat[QUERY].refused_calls, chat[QUERY].tokens_in) == (1, 1, 0)
    assert chat[task_pb2.MODEL_CALL_PURPOSE_MEMORY_EXTRACTION].refused_calls == 1
    budget = usage.namespace_budget
    assert (budget.limit_tokens, budget.exhausted) == (TIGHT_BUDGET, True)
    assert budget.used_tokens >= 120
    refusals = _scrape(server)
    assert refusals[("taskmem_model_budget_refusals_total", (("purpose", "state_extraction"),))] >= 2
    assert refusals[("taskmem_model_budget_refusals_total", (("purpose", "query"),))] >= 1


async def test_the_background_embedding_of_memory_entries_is_shared_between_their_tasks(
        channel: grpc.aio.Channel) -> None:
    tasks, memory = TaskServiceStub(channel), MemoryServiceStub(channel)
    long_id, short_id = [(await tasks.CreateTask(pb.CreateTaskRequest(name=name), **_key(FREE_KEY))).task.id
                         for name in ("long", "short")]
    await memory.AddMemoryEntries(mpb.AddMemoryEntriesRequest(entries=[
        mpb.NewMemoryEntry(task_id=long_id, type=memory_pb2.MEMORY_TYPE_CONTEXT,
                           summary="alpha one two three four five six seven"),
        mpb.NewMemoryEntry(task_id=short_id, type=memory_pb2.MEMORY_TYPE_CONTEXT, summary="beta one")]),
        **_key(FREE_KEY))
    found = await memory.SearchMemories(mpb.SearchMemoriesRequest(
        query="alpha", mode=memory_pb2.SEARCH_MODE_FULLTEXT, wait_for_embeddings=True), **_key(FREE_KEY))
    assert found.unembedded_count == 0

    embedded = {}
    for task_id in (long_id, short_id):
        usage = await tasks.GetTaskUsage(pb.GetTaskUsageRequest(task_id=task_id), **_key(FREE_KEY))
        embedded[task_id] = [(line.model, line.purpose, line.calls, line.tokens_in) for line in usage.model_usage]
    # One endpoint call for both (10 words): its tokens split by the summaries' lengths (39 and 8 characters).
    assert embedded == {long_id: [("openai:words-16", EMBEDDING, 1, 9)],
                        short_id: [("openai:words-16", EMBEDDING, 1, 1)]}


async def test_a_background_running_summary_is_attributed_to_its_task(
        tmp_path: Path, endpoints: tuple[ScriptedLLM, FakeEmbeddings]) -> None:
    llm, _ = endpoints
    llm.answer, llm.usage = (lambda system, user: "deploying on friday"), (30, 6)
    process = ServerProcess(tmp_path / "taskmem.db", env={
        "TASKMEM_LLM_BASE_URL": llm.base_url, "TASKMEM_LLM_MODEL": "small-local", "TASKMEM_LLM_RETRIES": "0",
        "TASKMEM_EMBEDDING_BACKEND": "none", "TASKMEM_RUNNING_SUMMARY_EVERY_MESSAGES": "2"})
    process.start()
    try:
        async with grpc.aio.insecure_channel(process.address) as channel:
            tasks = TaskServiceStub(channel)
            task_id = await _task_with_user_message(tasks, "", "we deploy on friday")
            await tasks.PostMessage(pb.PostMessageRequest(task_id=task_id, role=task_pb2.MESSAGE_ROLE_AGENT,
                                                          content="noted, friday"))

            async def usage() -> list[task_pb2.ModelUsage]:  # the summary is written in the background
                return list((await tasks.GetTaskUsage(pb.GetTaskUsageRequest(task_id=task_id))).model_usage)
            lines = await eventually(usage, "the running summary's model usage")
    finally:
        process.stop()
    assert [(line.purpose, line.calls, line.tokens_in, line.tokens_out) for line in lines] == [
        (task_pb2.MODEL_CALL_PURPOSE_RUNNING_SUMMARY, 1, 30, 6)]


async def test_task_usage_of_an_unknown_task_is_not_found(channel: grpc.aio.Channel) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await TaskServiceStub(channel).GetTaskUsage(pb.GetTaskUsageRequest(task_id="tsk_missing"), **_key(FREE_KEY))
    assert raised.value.code() == grpc.StatusCode.NOT_FOUND


async def test_budgets_that_are_not_namespace_equals_tokens_are_refused_at_start(tmp_path: Path) -> None:
    process = subprocess.run([sys.executable, "-m", "taskmem", "serve", "--listen", "127.0.0.1:0", "--database",
                              str(tmp_path / "t.db")], capture_output=True, text=True, timeout=60,
                             env={**os.environ, "TASKMEM_MODEL_TOKEN_BUDGETS": "tight=lots"})
    assert process.returncode != 0
    assert "model_token_budgets" in process.stderr
