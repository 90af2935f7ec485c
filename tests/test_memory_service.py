"""MemoryService end to end against a real server with the builtin embedding model and a scripted
loopback utility model: memory entries with exact filters, search in three modes, extraction,
project knowledge, episodes, artifacts and learned patterns."""

from __future__ import annotations

import hashlib
import json
import signal
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import pytest
from google.protobuf import duration_pb2, struct_pb2

from taskmem.v1 import event_pb2, memory_pb2
from taskmem.v1 import memory_service_pb2 as pb
from taskmem.v1 import task_service_pb2 as tpb
from taskmem.v1.memory_service_pb2_grpc import MemoryServiceStub
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from tests.support.fake_embeddings import FakeEmbeddings, fake_embeddings
from tests.support.rpc_errors import assert_rpc_error, error_info
from tests.support.scripted_llm import ScriptedLLM, scripted_llm
from tests.support.server_process import ServerProcess

DECISION, ERROR, TOOL_RESULT = (memory_pb2.MEMORY_TYPE_DECISION, memory_pb2.MEMORY_TYPE_ERROR,
                                memory_pb2.MEMORY_TYPE_TOOL_RESULT)
DISCOVERY, INSTRUCTION, CONTEXT = (memory_pb2.MEMORY_TYPE_DISCOVERY, memory_pb2.MEMORY_TYPE_USER_INSTRUCTION,
                                   memory_pb2.MEMORY_TYPE_CONTEXT)
FULLTEXT, SEMANTIC, HYBRID = (memory_pb2.SEARCH_MODE_FULLTEXT, memory_pb2.SEARCH_MODE_SEMANTIC,
                              memory_pb2.SEARCH_MODE_HYBRID)
INVALID = grpc.StatusCode.INVALID_ARGUMENT


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedLLM]:
    with scripted_llm() as model:
        yield model


@pytest.fixture(scope="module")
def memory_server(tmp_path_factory: pytest.TempPathFactory, llm: ScriptedLLM) -> Iterator[ServerProcess]:
    """One server for the module: builtin embeddings, the scripted model with a 1 s timeout and no retries."""
    process = ServerProcess(tmp_path_factory.mktemp("memory") / "taskmem.db", env={
        "TASKMEM_LLM_BASE_URL": llm.base_url, "TASKMEM_LLM_MODEL": "scripted", "TASKMEM_LLM_RETRIES": "0",
        "TASKMEM_LLM_TIMEOUT_SECONDS": "1"})
    process.start()
    yield process
    process.stop()


@pytest.fixture
async def rpc(memory_server: ServerProcess) -> AsyncIterator[tuple[TaskServiceStub, MemoryServiceStub]]:
    async with grpc.aio.insecure_channel(memory_server.address) as channel:
        yield TaskServiceStub(channel), MemoryServiceStub(channel)


async def _task(tasks: TaskServiceStub, name: str = "Migrate the database") -> str:
    return (await tasks.CreateTask(tpb.CreateTaskRequest(name=name, goal="Move MySQL to PostgreSQL"))).task.id


def _entry(task_id: str, summary: str, kind: int = DISCOVERY, **fields: object) -> pb.NewMemoryEntry:
    return pb.NewMemoryEntry(task_id=task_id, type=kind, summary=summary, **fields)


async def _add(memory: MemoryServiceStub, *entries: pb.NewMemoryEntry) -> list[memory_pb2.MemoryEntry]:
    return list((await memory.AddMemoryEntries(pb.AddMemoryEntriesRequest(entries=list(entries)))).entries)


async def _error(call: object) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await call  # type: ignore[misc]
    return raised.value


# --- AddMemoryEntries / QueryMemoryEntries / GetRelevantMemories -----------------------------------

async def test_a_batch_is_stored_in_order_with_one_event_per_entry(rpc) -> None:
    tasks, memory = rpc
    task_id = await _task(tasks)
    stored = await _add(memory, _entry(task_id, "Using pgloader", DECISION, subtask_id="plan", tags=["db", " tools "]),
                        _entry(task_id, "SPATIAL index not supported", ERROR, detail="ERROR 1464", relevance_to=["b"]))
    assert [e.summary for e in stored] == ["Using pgloader", "SPATIAL index not supported"]
    assert stored[0].id.startswith("mem_") and stored[0].source == "api" and list(stored[0].tags) == ["db", "tools"]
    assert stored[1].detail == "ERROR 1464" and list(stored[1].relevance_to) == ["b"]
    events = await tasks.ListEvents(tpb.ListEventsRequest(
        task_ids=[task_id], types=[event_pb2.EVENT_TYPE_MEMORY_ENTRY_ADDED]))
    added = [event.payload["id"] for event in events.events]
    assert added == [e.id for e in stored]


async def test_a_retried_batch_with_the_same_request_id_lands_once(rpc) -> None:
    tasks, memory = rpc
    task_id = await _task(tasks)
    request = pb.AddMemoryEntriesRequest(request_id="batch-1", entries=[_entry(task_id, "Found 3 tables")])
    first, again = await memory.AddMemoryEntries(request), await memory.AddMemoryEntries(request)
    assert first == again
    listed = await memory.QueryMemoryEntries(pb.QueryMemoryEntriesRequest(
        filter=memory_pb2.MemoryFilter(task_id=task_id)))
    assert [e.id for e in listed.entries] == [first.entries[0].id]


async def test_bad_entries_are_rejected_naming_the_entry_and_field(rpc) -> None:
    tasks, memory = rpc
    task_id = await _task(tasks)
    long = await _error(memory.AddMemoryEntries(pb.AddMemoryEntriesRequest(entries=[
        _entry(task_id, "fine"), _entry(task_id, "x" * 301)])))
    assert_rpc_error(long, INVALID, "ERROR_REASON_LIMIT_EXCEEDED", "entries[1].summary")
    untyped = await _error(memory.AddMemoryEntries(pb.AddMemoryEntriesRequest(entries=[
        pb.NewMemoryEntry(task_id=task_id, summary="no type")])))
    assert_rpc_error(untyped, INVALID, "ERROR_REASON_INVALID_FIELD", "entries[0].type")
    empty_tag = await _error(memory.AddMemoryEntries(pb.AddMemoryEntriesRequest(entries=[
        _entry(task_id, "tagged", tags=["ok", " "])])))
    assert_rpc_error(empty_tag, INVALID, "ERROR_REASON_INVALID_FIELD", "entries[0].tags[1]")
    none = await _error(memory.AddMemoryEntries(pb.AddMemoryEntriesRequest()))
    assert_rpc_error(none, INVALID, "ERROR_REASON_INVALID_FIELD", "entries")
    missing = await _error(memory.AddMemoryEntries(pb.AddMemoryEntriesRequest(entries=[_entry("tsk_nope", "x")])))
    assert_rpc_error(missing, grpc.StatusCode.NOT_FOUND, "ERROR_REASON_NOT_FOUND")
    assert not (await memory.QueryMemoryEntries(pb.QueryMemoryEntriesRequest(
        filter=memory_pb2.MemoryFilter(task_id=task_id)))).entries


async def test_subtask_tags_and_relevance_match_whole_values_only(rpc) -> None:
    tasks, memory = rpc
    task_id = await _task(tasks)
    build, docs = await _add(
        memory, _entry(task_id, "Compiled with -O2", subtask_id="build", tags=["build"], relevance_to=["build"]),
        _entry(task_id, "Sphinx needs a theme", subtask_id="build-docs", tags=["build-docs"],
               relevance_to=["build-docs"]))

    async def ids(**f: object) -> list[str]:
        found = await memory.QueryMemoryEntries(pb.QueryMemoryEntriesRequest(
            filter=memory_pb2.MemoryFilter(task_id=task_id, **f)))
        return [e.id for e in found.entries]

    assert await ids(subtask_id="build") == [build.id]
    assert await ids(tags=["build"]) == [build.id]
    assert await ids(relevance_to=["build"]) == [build.id]
    assert await ids(tags=["buil"]) == [] and await ids(subtask_id="build-") == []
    assert await ids(tags=["build", "build-docs"]) == [docs.id, build.id]


async def test_tag_filters_match_any_or_all_types_and_time_range_newest_first(rpc) -> None:
    tasks, memory = rpc
    task_id = await _task(tasks)
    a = (await _add(memory, _entry(task_id, "a", DECISION, tags=["db", "schema"])))[0]
    b = (await _add(memory, _entry(task_id, "b", ERROR, tags=["db"])))[0]
    c = (await _add(memory, _entry(task_id, "c", DECISION, tags=["schema"])))[0]

    async def ids(**f: object) -> list[str]:
        found = await memory.QueryMemoryEntries(pb.QueryMemoryEntriesRequest(
            filter=memory_pb2.MemoryFilter(task_id=task_id, **f)))
        return [e.id for e in found.entries]

    assert await ids() == [c.id, b.id, a.id]
    assert await ids(tags=["db", "schema"]) == [c.id, b.id, a.id]
    assert await ids(tags=["db", "schema"], match_all_tags=True) == [a.id]
    assert await ids(types=[DECISION]) == [c.id, a.id]
    assert await ids(create_time_after=b.create_time) == [c.id, b.id]
    assert await ids(create_time_before=b.create_time) == [a.id]


async def test_query_pages_follow_aip_158(rpc) -> None:
    tasks, memory = rpc
    task_id = await _task(tasks)
    stored = await _add(memory, *[_entry(task_id, f"note {n}") for n in range(5)])
    f = memory_pb2.MemoryFilter(task_id=task_id)
    seen, token = [], ""
    while True:
        page = await memory.QueryMemoryEntries(pb.QueryMemoryEntriesRequest(filter=f, page_size=2, page_token=token))
        seen += [e.id for e in page.entries]
        token = page.next_page_token
        if not token:
            break
    assert seen == [e.id for e in reversed(stored)]
    first = await memory.QueryMemoryEntries(pb.QueryMemoryEntriesRequest(filter=f, page_size=2))
    other = await _error(memory.QueryMemoryEntries(pb.QueryMemoryEntriesRequest(
        filter=memory_pb2.MemoryFilter(task_id=task_id, types=[ERROR]), page_token=first.next_page_token)))
    assert_rpc_error(other, INVALID, "ERROR_REASON_INVALID_FIELD", "page_token")
    big = await _error(memory.QueryMemoryEntries(pb.QueryMemoryEntriesRequest(page_size=501)))
    assert_rpc_error(big, INVALID, "ERROR_REASON_INVALID_FIELD", "page_size")


async def test_relevant_memories_are_the_subtasks_own_those_naming_it_and_every_decision(rpc) -> None:
    tasks, memory = rpc
    task_id = await _task(tasks)
    other_task = await _task(tasks, "Other")
    stored = await _add(
        memory, _entry(task_id, "own", TOOL_RESULT, subtask_id="load"),
        _entry(task_id, "names it", DISCOVERY, subtask_id="schema", relevance_to=["load"]),
        _entry(task_id, "a decision elsewhere", DECISION, subtask_id="schema"),
        _entry(task_id, "an instruction", INSTRUCTION),
        _entry(task_id, "an error", ERROR, subtask_id="x"),
        _entry(task_id, "unrelated discovery", DISCOVERY, subtask_id="load-docs"),
        _entry(task_id, "context elsewhere", CONTEXT, subtask_id="schema"),
        _entry(other_task, "another task's decision", DECISION, subtask_id="load"))
    found = await memory.GetRelevantMemories(pb.GetRelevantMemoriesRequest(task_id=task_id, subtask_id="load"))
    assert [e.summary for e in found.entries] == ["an error", "an instruction", "a decision elsewhere", "names it",
                                                  "own"]
    limited = await memory.GetRelevantMemories(pb.GetRelevantMemoriesRequest(task_id=task_id, subtask_id="load",
                                                                             limit=2))
    assert [e.id for e in limited.entries] == [stored[4].id, stored[3].id]
    missing = await _error(memory.GetRelevantMemories(pb.GetRelevantMemoriesRequest(task_id="tsk_nope")))
    assert_rpc_error(missing, grpc.StatusCode.NOT_FOUND, "ERROR_REASON_NOT_FOUND")
    negative = await _error(memory.GetRelevantMemories(pb.GetRelevantMemoriesRequest(task_id=task_id, limit=-1)))
    assert_rpc_error(negative, INVALID, "ERROR_REASON_INVALID_FIELD", "limit")


# --- SearchMemories -------------------------------------------------------------------------------

CORPUS = [
    "Use Redis as the cache layer for user sessions",
    "The Redis cluster runs on three nodes in eu-west",
    "Memoize expensive lookups in an in-process LRU store",
    "PostgreSQL CHECK constraints replace MySQL ENUM columns",
    "The CI pipeline runs on Node 20",
    "Grep found 47 references to the deprecated payments API",
]


@pytest.fixture
async def corpus(rpc) -> tuple[str, list[memory_pb2.MemoryEntry]]:
    tasks, memory = rpc
    task_id = await _task(tasks, "Search corpus")
    return task_id, await _add(memory, *[_entry(task_id, text) for text in CORPUS])


async def _search(memory: MemoryServiceStub, query: str, mode: int, task_id: str,
                  limit: int = 10, wait: bool = True) -> pb.SearchMemoriesResponse:
    """A search within the task; by default after the entries added before it are embedded."""
    return await memory.SearchMemories(pb.SearchMemoriesRequest(
        query=query, mode=mode, limit=limit, filter=memory_pb2.MemoryFilter(task_id=task_id),
        wait_for_embeddings=wait), timeout=30)


async def test_fulltext_ranks_by_bm25_stems_words_and_marks_the_match(rpc, corpus) -> None:
    _, memory = rpc
    task_id, stored = corpus
    found = await _search(memory, "caching", FULLTEXT, task_id)
    assert [h.entry.id for h in found.hits] == [stored[0].id] and found.mode == FULLTEXT
    hit = found.hits[0]
    assert "[cache]" in hit.snippet and hit.score > 0 and list(hit.found_by) == [FULLTEXT]
    assert (hit.fulltext_rank, hit.semantic_rank) == (1, 0)
    assert not (await _search(memory, "kubernetes", FULLTEXT, task_id)).hits


async def test_semantic_finds_a_paraphrase_with_no_shared_word(rpc, corpus) -> None:
    _, memory = rpc
    task_id, stored = corpus
    found = await _search(memory, "which database enforces the allowed values", SEMANTIC, task_id, limit=3)
    assert found.hits[0].entry.id == stored[3].id and list(found.hits[0].found_by) == [SEMANTIC]
    assert found.hits[0].snippet == "" and 0 < found.hits[0].score <= 1
    assert [h.score for h in found.hits] == sorted((h.score for h in found.hits), reverse=True)
    assert not (await _search(memory, "which database enforces the allowed values", FULLTEXT, task_id)).hits


async def test_hybrid_puts_the_entry_both_modes_agree_on_first(rpc, corpus) -> None:
    _, memory = rpc
    task_id, stored = corpus
    found = await _search(memory, "Redis cache", HYBRID, task_id, limit=4)
    top = found.hits[0]
    assert top.entry.id == stored[0].id and set(top.found_by) == {FULLTEXT, SEMANTIC}
    assert (top.fulltext_rank, top.semantic_rank) == (1, 1)
    # 0.4 × its full-text share (of the most BM25 can give the words, on either engine)
    # + 0.6 × its cosine similarity
    assert 0.6 * 0.5 < top.score <= 1
    semantic_only = [h for h in found.hits if list(h.found_by) == [SEMANTIC]]
    assert semantic_only and all(h.fulltext_rank == 0 and not h.snippet for h in semantic_only)
    assert [h.score for h in found.hits] == sorted((h.score for h in found.hits), reverse=True)
    default = await memory.SearchMemories(pb.SearchMemoriesRequest(
        query="Redis cache", filter=memory_pb2.MemoryFilter(task_id=task_id), wait_for_embeddings=True))
    assert default.mode == HYBRID and default.hits[0].entry.id == stored[0].id


async def test_search_applies_the_filter_to_both_modes(rpc) -> None:
    tasks, memory = rpc
    task_id = await _task(tasks, "Filtered search")
    wanted, _ = await _add(memory, _entry(task_id, "Use Redis for caching", DECISION, tags=["cache"]),
                           _entry(task_id, "Redis caching was slow", ERROR, tags=["cache-misses"]))
    for mode in (FULLTEXT, SEMANTIC, HYBRID):
        found = await memory.SearchMemories(pb.SearchMemoriesRequest(query="Redis caching", mode=mode, filter=(
            memory_pb2.MemoryFilter(task_id=task_id, tags=["cache"])), wait_for_embeddings=True))
        assert [h.entry.id for h in found.hits] == [wanted.id], mode


async def test_search_errors_name_the_field(rpc) -> None:
    _, memory = rpc
    empty = await _error(memory.SearchMemories(pb.SearchMemoriesRequest(query=" ")))
    assert_rpc_error(empty, INVALID, "ERROR_REASON_INVALID_FIELD", "query")
    too_many = await _error(memory.SearchMemories(pb.SearchMemoriesRequest(query="x", limit=101)))
    assert_rpc_error(too_many, INVALID, "ERROR_REASON_INVALID_FIELD", "limit")
    mode = await _error(memory.SearchMemories(pb.SearchMemoriesRequest(query="x", mode=42)))
    assert_rpc_error(mode, INVALID, "ERROR_REASON_INVALID_FIELD", "mode")


def _bearer(key: str) -> list[tuple[str, str]]:
    return [("authorization", f"Bearer {key}")]


async def test_search_sees_only_the_callers_namespace(fresh_server: ServerProcess) -> None:
    server = ServerProcess(fresh_server.database, "--api-key", "alpha-key:alpha", "--api-key", "beta-key:beta")
    server.start()
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            tasks, memory = TaskServiceStub(channel), MemoryServiceStub(channel)
            alpha, beta = _bearer("alpha-key"), _bearer("beta-key")
            a_task = (await tasks.CreateTask(tpb.CreateTaskRequest(name="a"), metadata=alpha)).task.id
            b_task = (await tasks.CreateTask(tpb.CreateTaskRequest(name="b"), metadata=beta)).task.id
            await memory.AddMemoryEntries(pb.AddMemoryEntriesRequest(entries=[
                _entry(a_task, "Alpha uses Redis for caching")]), metadata=alpha)
            await memory.AddMemoryEntries(pb.AddMemoryEntriesRequest(entries=[
                _entry(b_task, "Beta uses Redis for caching")]), metadata=beta)
            for mode in (FULLTEXT, SEMANTIC, HYBRID):
                found = await memory.SearchMemories(pb.SearchMemoriesRequest(
                    query="Redis caching", mode=mode, wait_for_embeddings=True), metadata=beta)
                assert [h.entry.summary for h in found.hits] == ["Beta uses Redis for caching"], mode
            listed = await memory.QueryMemoryEntries(pb.QueryMemoryEntriesRequest(), metadata=alpha)
            assert [e.summary for e in listed.entries] == ["Alpha uses Redis for caching"]
            cross = await _error(memory.AddMemoryEntries(pb.AddMemoryEntriesRequest(entries=[
                _entry(a_task, "into alpha's task")]), metadata=beta))
            assert_rpc_error(cross, grpc.StatusCode.NOT_FOUND, "ERROR_REASON_NOT_FOUND")
    finally:
        server.stop()


async def test_semantic_search_finds_entries_after_a_restart(fresh_server: ServerProcess) -> None:
    fresh_server.start()
    async with grpc.aio.insecure_channel(fresh_server.address) as channel:
        tasks, memory = TaskServiceStub(channel), MemoryServiceStub(channel)
        task_id = await _task(tasks)
        stored = await _add(memory, *[_entry(task_id, text) for text in CORPUS])
    fresh_server.restart()
    async with grpc.aio.insecure_channel(fresh_server.address) as channel:
        found = await _search(MemoryServiceStub(channel), "which database enforces the allowed values",
                              SEMANTIC, task_id, limit=1)
    assert [h.entry.id for h in found.hits] == [stored[3].id]
    assert fresh_server.sql("SELECT model, dimension FROM memory_embedding_model") == [("all-MiniLM-L6-v2-int8", 384)]


async def test_without_embeddings_semantic_search_names_the_setting_and_hybrid_runs_fulltext(
        fresh_server: ServerProcess) -> None:
    server = ServerProcess(fresh_server.database, "--embedding-backend", "none")
    server.start()
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            tasks, memory = TaskServiceStub(channel), MemoryServiceStub(channel)
            task_id = await _task(tasks)
            stored = await _add(memory, _entry(task_id, "Use Redis for caching"))
            semantic = await _error(_search(memory, "Redis", SEMANTIC, task_id))
            assert_rpc_error(semantic, grpc.StatusCode.FAILED_PRECONDITION, "ERROR_REASON_NOT_CONFIGURED")
            assert error_info(semantic).metadata["setting"] == "embedding_backend"
            hybrid = await _search(memory, "Redis", HYBRID, task_id)
            assert hybrid.mode == FULLTEXT and [h.entry.id for h in hybrid.hits] == [stored[0].id]
    finally:
        server.stop()


def _fake_backend(fake: FakeEmbeddings, dimension: int = 64) -> list[str]:
    return ["--embedding-backend", "openai", "--embedding-url", fake.base_url, "--embedding-model",
            f"words-{dimension}", "--embedding-dimension", str(dimension)]


async def test_a_failing_embedding_endpoint_still_stores_and_acknowledges_the_entries(
        fresh_server: ServerProcess) -> None:
    server = ServerProcess(fresh_server.database, "--embedding-backend", "openai", "--embedding-url",
                           "http://127.0.0.1:9/v1", "--embedding-model", "nothing-listens", "--embedding-dimension",
                           "8", env={"TASKMEM_LLM_RETRIES": "0"})
    server.start()
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            tasks, memory = TaskServiceStub(channel), MemoryServiceStub(channel)
            task_id = await _task(tasks)
            [stored] = await _add(memory, _entry(task_id, "Use Redis for caching"))
            found = await _search(memory, "Redis caching", FULLTEXT, task_id, wait=False)
            assert [h.entry.id for h in found.hits] == [stored.id]
            assert found.hits[0].embedding_pending and found.unembedded_count == 1
            semantic = await _error(_search(memory, "Redis caching", SEMANTIC, task_id, wait=False))
            assert_rpc_error(semantic, grpc.StatusCode.UNAVAILABLE, "ERROR_REASON_EMBEDDING_UNAVAILABLE")
    finally:
        server.stop()


async def test_a_natural_question_finds_its_evidence_by_full_text_despite_its_stop_words(rpc) -> None:
    tasks, memory = rpc
    task_id = await _task(tasks, "Conversation")
    evidence, _ = await _add(memory, _entry(task_id, "Maria: I went to a climbing gym yesterday with my sister"),
                             _entry(task_id, "John: the weather in Lisbon was awful all week"))
    found = await _search(memory, "When did Maria go to the climbing gym?", FULLTEXT, task_id, wait=False)
    assert [h.entry.id for h in found.hits] == [evidence.id]
    assert "[climbing]" in found.hits[0].snippet and "[gym]" in found.hits[0].snippet


async def test_a_quoted_phrase_finds_only_entries_holding_it_as_written(rpc) -> None:
    tasks, memory = rpc
    task_id = await _task(tasks, "Phrases")
    phrase, _ = await _add(memory, _entry(task_id, "Booked the climbing gym for Friday"),
                           _entry(task_id, "The gym on Friday had no climbing wall"))
    found = await _search(memory, '"climbing gym" on Friday', FULLTEXT, task_id, wait=False)
    assert [h.entry.id for h in found.hits] == [phrase.id] and "[climbing gym]" in found.hits[0].snippet
    assert len((await _search(memory, "climbing gym on Friday", FULLTEXT, task_id, wait=False)).hits) == 2


async def test_an_entry_is_found_by_text_at_once_and_by_meaning_once_the_backlog_drains(
        fresh_server: ServerProcess) -> None:
    with fake_embeddings() as fake:
        server = ServerProcess(fresh_server.database, *_fake_backend(fake))
        server.start()
        try:
            async with grpc.aio.insecure_channel(server.address) as channel:
                tasks, memory = TaskServiceStub(channel), MemoryServiceStub(channel)
                task_id = await _task(tasks)
                fake.hold()  # the model does not answer: the entry is acknowledged anyway
                [stored] = (await memory.AddMemoryEntries(pb.AddMemoryEntriesRequest(entries=[
                    _entry(task_id, "Maria went bouldering at the climbing gym")]), timeout=5)).entries
                text = await _search(memory, "climbing gym", FULLTEXT, task_id, wait=False)
                assert [h.entry.id for h in text.hits] == [stored.id]
                assert text.hits[0].embedding_pending and text.unembedded_count == 1
                fake.release()
                meaning = await _search(memory, "bouldering Maria", SEMANTIC, task_id)
                assert [h.entry.id for h in meaning.hits] == [stored.id]
                assert not meaning.hits[0].embedding_pending and meaning.unembedded_count == 0
        finally:
            fake.release()
            server.stop()


async def test_a_crash_with_a_backlog_loses_no_entry_and_leaves_none_unembedded_after_restart(
        fresh_server: ServerProcess) -> None:
    with fake_embeddings() as fake:
        server = ServerProcess(fresh_server.database, *_fake_backend(fake))
        server.start()
        try:
            async with grpc.aio.insecure_channel(server.address) as channel:
                tasks, memory = TaskServiceStub(channel), MemoryServiceStub(channel)
                task_id = await _task(tasks)
                fake.hold()
                stored = []
                for batch in range(3):
                    stored += await _add(memory, *[_entry(task_id, f"note {batch}-{n} about topic{batch * 50 + n}")
                                                   for n in range(50)])
            assert server.stop(signal.SIGKILL) != 0
            assert fresh_server.sql("SELECT count(*) FROM memory_entries") == [(150,)]
            assert fresh_server.sql("SELECT count(*) FROM memory_embedding_queue") == [(150,)]
            fake.release()
            server.start()
            async with grpc.aio.insecure_channel(server.address) as channel:
                found = await _search(MemoryServiceStub(channel), stored[137].summary, SEMANTIC, task_id, limit=1)
            assert [h.entry.id for h in found.hits] == [stored[137].id] and found.unembedded_count == 0
            assert fresh_server.sql("SELECT count(*) FROM memory_embedding_queue") == [(0,)]
            assert fresh_server.sql("SELECT count(*) FROM memory_embeddings") == [(150,)]
        finally:
            fake.release()
            server.stop()


def test_grpcurl_lists_and_describes_memory_service_by_reflection(memory_server: ServerProcess) -> None:
    grpcurl = Path(__file__).resolve().parents[1] / ".tools" / "bin" / "grpcurl"
    assert grpcurl.exists(), "make test installs grpcurl into .tools/bin"
    listed = subprocess.run([str(grpcurl), "-plaintext", memory_server.address, "list"],
                            capture_output=True, text=True, timeout=30, check=True).stdout
    assert "taskmem.v1.MemoryService" in listed.split()
    described = subprocess.run([str(grpcurl), "-plaintext", memory_server.address, "describe",
                                "taskmem.v1.SearchMemoriesRequest"], capture_output=True, text=True, timeout=30,
                               check=True).stdout
    assert ".taskmem.v1.SearchMode mode = 2;" in described and ".taskmem.v1.MemoryFilter filter = 3;" in described


# --- ExtractMemories ------------------------------------------------------------------------------

EXTRACTED = [
    {"type": "decision", "summary": "Using pgloader for the data migration", "detail": "faster than SQL dumps",
     "tags": ["migration", "pgloader"], "relevance_to": ["load-data"]},
    {"type": "error", "summary": "SPATIAL index not supported", "tags": "postgis, indexes"},
]


def _extract_request(task_id: str, **fields: object) -> pb.ExtractMemoriesRequest:
    arguments = struct_pb2.Struct()
    arguments.update({"path": "schema.sql"})
    return pb.ExtractMemoriesRequest(
        task_id=task_id, subtask_id="schema", model_output="Converted the schema; pgloader chosen.",
        tool_calls=[pb.ToolCallRecord(tool_name="read_file", arguments=arguments, result="CREATE TABLE {users}")],
        **fields)


async def test_extraction_stores_the_models_entries_with_the_prompt_template(rpc, llm: ScriptedLLM) -> None:
    tasks, memory = rpc
    task_id = await _task(tasks)
    llm.answer = lambda system, user: json.dumps(EXTRACTED)
    result = await memory.ExtractMemories(_extract_request(task_id))
    assert result.candidate_count == 2 and not result.dropped and not result.parse_error
    assert [(e.type, e.summary, e.source, e.subtask_id) for e in result.entries] == [
        (DECISION, "Using pgloader for the data migration", "extraction", "schema"),
        (ERROR, "SPATIAL index not supported", "extraction", "schema")]
    assert list(result.entries[1].tags) == ["indexes", "postgis"]
    prompt = llm.user_prompts[-1]
    assert "Subtask: schema" in prompt and 'read_file {"path": "schema.sql"}' in prompt
    assert "CREATE TABLE {users}" in prompt and "pgloader chosen" in prompt
    assert "memory extraction assistant" in llm.requests[-1]["messages"][0]["content"]
    relevant = await memory.GetRelevantMemories(pb.GetRelevantMemoriesRequest(task_id=task_id, subtask_id="load-data"))
    assert "Using pgloader for the data migration" in [e.summary for e in relevant.entries]
    events = await tasks.ListEvents(tpb.ListEventsRequest(task_ids=[task_id], types=[
        event_pb2.EVENT_TYPE_MEMORY_ENTRY_ADDED, event_pb2.EVENT_TYPE_MEMORY_EXTRACTION_COMPLETED]))
    assert [e.type for e in events.events] == [event_pb2.EVENT_TYPE_MEMORY_ENTRY_ADDED] * 2 + [
        event_pb2.EVENT_TYPE_MEMORY_EXTRACTION_COMPLETED]
    assert events.events[-1].payload["stored"] == 2 and events.events[-1].payload["subtask_id"] == "schema"


async def test_extraction_reads_fenced_and_cut_off_arrays(rpc, llm: ScriptedLLM) -> None:
    tasks, memory = rpc
    task_id = await _task(tasks)
    llm.answer = lambda system, user: "Here you go:\n```json\n" + json.dumps(EXTRACTED) + "\n```\nDone."
    fenced = await memory.ExtractMemories(_extract_request(task_id))
    assert len(fenced.entries) == 2 and not fenced.parse_error
    llm.answer = lambda system, user: json.dumps(EXTRACTED)[:-40]  # the token limit cut the second item
    partial = await memory.ExtractMemories(_extract_request(task_id))
    assert [e.summary for e in partial.entries] == ["Using pgloader for the data migration"]
    assert partial.candidate_count == 1


async def test_extraction_drops_invalid_candidates_with_reasons(rpc, llm: ScriptedLLM) -> None:
    tasks, memory = rpc
    task_id = await _task(tasks)
    llm.answer = lambda system, user: json.dumps([
        EXTRACTED[0], {"type": "rumour", "summary": "x"}, {"type": "discovery", "summary": "y" * 400}, "just text"])
    result = await memory.ExtractMemories(_extract_request(task_id))
    assert result.candidate_count == 4 and len(result.entries) == 1
    reasons = {d.index: d.reason for d in result.dropped}
    assert set(reasons) == {1, 2, 3}
    assert reasons[1].startswith("type: 'rumour' is not one of decision")
    assert reasons[2] == "summary: is 400 characters; at most 300" and "not an object" in reasons[3]
    assert json.loads(result.dropped[0].candidate) == {"type": "rumour", "summary": "x"}


async def test_a_prose_answer_stores_nothing_and_says_why(rpc, llm: ScriptedLLM) -> None:
    tasks, memory = rpc
    task_id = await _task(tasks)
    llm.answer = lambda system, user: "I could not find anything worth remembering, sorry!"
    result = await memory.ExtractMemories(_extract_request(task_id))
    assert not result.entries and result.candidate_count == 0 and "no JSON array" in result.parse_error
    assert not (await memory.QueryMemoryEntries(pb.QueryMemoryEntriesRequest(
        filter=memory_pb2.MemoryFilter(task_id=task_id)))).entries


async def test_a_retried_extraction_does_not_call_the_model_again(rpc, llm: ScriptedLLM) -> None:
    tasks, memory = rpc
    task_id = await _task(tasks)
    llm.answer = lambda system, user: json.dumps(EXTRACTED)
    request = _extract_request(task_id, request_id="extract-1")
    first = await memory.ExtractMemories(request)
    calls = len(llm.requests)
    assert await memory.ExtractMemories(request) == first and len(llm.requests) == calls


async def test_a_model_that_does_not_answer_in_time_is_a_deadline_error(rpc, llm: ScriptedLLM) -> None:
    tasks, memory = rpc
    task_id = await _task(tasks)
    llm.hold.set()
    try:
        late = await _error(memory.ExtractMemories(_extract_request(task_id)))
    finally:
        llm.hold.clear()
        llm.release.set()
    assert_rpc_error(late, grpc.StatusCode.DEADLINE_EXCEEDED, "ERROR_REASON_MODEL_TIMEOUT")
    assert not (await memory.QueryMemoryEntries(pb.QueryMemoryEntriesRequest(
        filter=memory_pb2.MemoryFilter(task_id=task_id)))).entries


async def test_extraction_errors_name_the_field_or_the_task(rpc) -> None:
    tasks, memory = rpc
    missing = await _error(memory.ExtractMemories(_extract_request("tsk_nope")))
    assert_rpc_error(missing, grpc.StatusCode.NOT_FOUND, "ERROR_REASON_NOT_FOUND")
    no_subtask = await _error(memory.ExtractMemories(pb.ExtractMemoriesRequest(task_id=await _task(tasks))))
    assert_rpc_error(no_subtask, INVALID, "ERROR_REASON_INVALID_FIELD", "subtask_id")
    unnamed = await _error(memory.ExtractMemories(pb.ExtractMemoriesRequest(
        task_id="t", subtask_id="s", tool_calls=[pb.ToolCallRecord(result="x")])))
    assert_rpc_error(unnamed, INVALID, "ERROR_REASON_INVALID_FIELD", "tool_calls[0].tool_name")


async def test_extraction_without_a_model_says_which_setting_to_set(channel: grpc.aio.Channel) -> None:
    tasks, memory = TaskServiceStub(channel), MemoryServiceStub(channel)
    task_id = await _task(tasks)
    error = await _error(memory.ExtractMemories(_extract_request(task_id)))
    assert_rpc_error(error, grpc.StatusCode.FAILED_PRECONDITION, "ERROR_REASON_NOT_CONFIGURED")
    assert "llm_base_url" in error.details() and "llm_model" in error.details()


# --- project knowledge ----------------------------------------------------------------------------

CONVENTION = memory_pb2.KNOWLEDGE_CATEGORY_CONVENTION
OUTCOME = pb.UpsertKnowledgeOutcome


async def _upsert(memory: MemoryServiceStub, key: str, value: str, confidence: float, source: str = "agent",
                  **fields: object) -> pb.UpsertKnowledgeResponse:
    return await memory.UpsertKnowledge(pb.UpsertKnowledgeRequest(
        category=CONVENTION, key=key, value=value, confidence=confidence, source=source, **fields))


async def test_higher_confidence_wins_a_tie_goes_to_the_newer_and_losers_stay_in_history(rpc) -> None:
    _, memory = rpc
    created = await _upsert(memory, "imports", "use the node: prefix", 0.6, "agent-1")
    assert created.outcome == OUTCOME.UPSERT_KNOWLEDGE_OUTCOME_CREATED and created.knowledge.revision == 1
    weaker = await _upsert(memory, "imports", "bare builtin names", 0.4, "agent-2")
    assert weaker.outcome == OUTCOME.UPSERT_KNOWLEDGE_OUTCOME_REJECTED
    assert weaker.knowledge.value == "use the node: prefix" and weaker.knowledge.revision == 1
    tie = await _upsert(memory, "imports", "node: prefix, sorted", 0.6, "agent-3")
    assert tie.outcome == OUTCOME.UPSERT_KNOWLEDGE_OUTCOME_REPLACED and tie.knowledge.value == "node: prefix, sorted"
    got = (await memory.GetKnowledge(pb.GetKnowledgeRequest(category=CONVENTION, key="imports"))).knowledge
    assert [(h.value, h.source, h.outcome) for h in got.history] == [
        ("bare builtin names", "agent-2", memory_pb2.KNOWLEDGE_VALUE_OUTCOME_REJECTED),
        ("use the node: prefix", "agent-1", memory_pb2.KNOWLEDGE_VALUE_OUTCOME_REPLACED)]
    assert got.revision == 2 and got.source == "agent-3"
    same = await _upsert(memory, "imports", "node: prefix, sorted", 0.9, "user")
    assert same.outcome == OUTCOME.UPSERT_KNOWLEDGE_OUTCOME_CONFIRMED
    assert (same.knowledge.confidence, same.knowledge.source) == (0.9, "user")


async def test_knowledge_is_read_by_id_queried_paged_and_deleted(rpc) -> None:
    _, memory = rpc
    first = (await _upsert(memory, "qk.lint", "ruff with line length 120", 1.0)).knowledge
    await _upsert(memory, "qk.tests", "pytest end to end against a real server", 1.0)
    await memory.UpsertKnowledge(pb.UpsertKnowledgeRequest(category=memory_pb2.KNOWLEDGE_CATEGORY_FACT,
                                                           key="qk.ci", value="CI runs on Node 20"))
    by_id = await memory.GetKnowledge(pb.GetKnowledgeRequest(id=first.id))
    assert by_id.knowledge.key == "qk.lint" and by_id.knowledge.confidence == 1.0
    page = await memory.QueryKnowledge(pb.QueryKnowledgeRequest(key_prefix="qk.", page_size=2))
    rest = await memory.QueryKnowledge(pb.QueryKnowledgeRequest(key_prefix="qk.", page_size=2,
                                                                page_token=page.next_page_token))
    assert [k.key for k in [*page.knowledge, *rest.knowledge]] == ["qk.lint", "qk.tests", "qk.ci"]
    assert not rest.next_page_token
    text = await memory.QueryKnowledge(pb.QueryKnowledgeRequest(text="NODE 20"))
    assert [k.key for k in text.knowledge] == ["qk.ci"]
    only = await memory.QueryKnowledge(pb.QueryKnowledgeRequest(category=CONVENTION, key_prefix="qk."))
    assert [k.key for k in only.knowledge] == ["qk.lint", "qk.tests"]
    await memory.DeleteKnowledge(pb.DeleteKnowledgeRequest(id=first.id))
    gone = await _error(memory.GetKnowledge(pb.GetKnowledgeRequest(id=first.id)))
    assert_rpc_error(gone, grpc.StatusCode.NOT_FOUND, "ERROR_REASON_NOT_FOUND")
    again = await _error(memory.DeleteKnowledge(pb.DeleteKnowledgeRequest(id=first.id)))
    assert_rpc_error(again, grpc.StatusCode.NOT_FOUND, "ERROR_REASON_NOT_FOUND")


async def test_knowledge_errors_name_the_field(rpc) -> None:
    _, memory = rpc
    cases = [
        (pb.UpsertKnowledgeRequest(key="k", value="v"), "category"),
        (pb.UpsertKnowledgeRequest(category=CONVENTION, value="v"), "key"),
        (pb.UpsertKnowledgeRequest(category=CONVENTION, key="k"), "value"),
        (pb.UpsertKnowledgeRequest(category=CONVENTION, key="k", value="v", confidence=1.5), "confidence"),
    ]
    for request, field in cases:
        error = await _error(memory.UpsertKnowledge(request))
        assert_rpc_error(error, INVALID, "ERROR_REASON_INVALID_FIELD", field)
    neither = await _error(memory.GetKnowledge(pb.GetKnowledgeRequest()))
    assert_rpc_error(neither, INVALID, "ERROR_REASON_INVALID_FIELD", "id")
    unknown = await _error(memory.GetKnowledge(pb.GetKnowledgeRequest(category=CONVENTION, key="never")))
    assert_rpc_error(unknown, grpc.StatusCode.NOT_FOUND, "ERROR_REASON_NOT_FOUND")


# --- episodes -------------------------------------------------------------------------------------

ATTEMPTED, FAILED, COMPLETED = (memory_pb2.EPISODE_ACTION_ATTEMPTED, memory_pb2.EPISODE_ACTION_FAILED,
                                memory_pb2.EPISODE_ACTION_COMPLETED)


async def test_episodes_are_recorded_and_listed_by_task_agent_and_action(rpc) -> None:
    tasks, memory = rpc
    task_id = await _task(tasks)
    recorded = []
    for agent, action, approach in [("coder", ATTEMPTED, "pgloader"), ("coder", FAILED, "pgloader"),
                                    ("reviewer", COMPLETED, "manual SQL")]:
        recorded.append((await memory.RecordEpisode(pb.RecordEpisodeRequest(
            task_id=task_id, agent_id=agent, action=action, approach=approach, outcome="see log",
            duration=duration_pb2.Duration(seconds=2, nanos=500_000_000), tokens_in=1200, tokens_out=300))).episode)
    assert recorded[0].id.startswith("epi_") and recorded[0].duration.ToMilliseconds() == 2500
    assert recorded[0].tokens_in == 1200 and not recorded[0].HasField("archive_time")
    listed = await memory.ListEpisodes(pb.ListEpisodesRequest(task_id=task_id))
    assert [e.id for e in listed.episodes] == [e.id for e in reversed(recorded)]
    coder_failed = await memory.ListEpisodes(pb.ListEpisodesRequest(task_id=task_id, agent_id="coder", action=FAILED))
    assert [e.id for e in coder_failed.episodes] == [recorded[1].id]
    paged = await memory.ListEpisodes(pb.ListEpisodesRequest(task_id=task_id, page_size=2))
    rest = await memory.ListEpisodes(pb.ListEpisodesRequest(task_id=task_id, page_size=2,
                                                            page_token=paged.next_page_token))
    assert [e.id for e in [*paged.episodes, *rest.episodes]] == [e.id for e in reversed(recorded)]


async def test_episode_errors_name_the_field(rpc) -> None:
    tasks, memory = rpc
    task_id = await _task(tasks)
    base = dict(task_id=task_id, agent_id="coder", action=ATTEMPTED, approach="x")
    for field, change in [("action", {"action": 0}), ("approach", {"approach": ""}), ("agent_id", {"agent_id": ""}),
                          ("tokens_in", {"tokens_in": -1})]:
        error = await _error(memory.RecordEpisode(pb.RecordEpisodeRequest(**{**base, **change})))
        assert_rpc_error(error, INVALID, "ERROR_REASON_INVALID_FIELD", field)
    missing = await _error(memory.RecordEpisode(pb.RecordEpisodeRequest(**{**base, "task_id": "tsk_nope"})))
    assert_rpc_error(missing, grpc.StatusCode.NOT_FOUND, "ERROR_REASON_NOT_FOUND")


async def test_episodes_archived_by_retention_are_listed_only_on_request(fresh_server: ServerProcess) -> None:
    fresh_server.start()
    async with grpc.aio.insecure_channel(fresh_server.address) as channel:
        tasks, memory = TaskServiceStub(channel), MemoryServiceStub(channel)
        task_id = await _task(tasks)
        old, new = [(await memory.RecordEpisode(pb.RecordEpisodeRequest(
            task_id=task_id, agent_id="coder", action=ATTEMPTED, approach=text))).episode for text in ("old", "new")]
    fresh_server.stop()
    # As retention leaves it: the row kept, marked archived.
    fresh_server.sql("UPDATE episodes SET archived_at = created_at + 1 WHERE id = ?", (old.id,))
    fresh_server.start()
    async with grpc.aio.insecure_channel(fresh_server.address) as channel:
        memory = MemoryServiceStub(channel)
        live = await memory.ListEpisodes(pb.ListEpisodesRequest(task_id=task_id))
        everything = await memory.ListEpisodes(pb.ListEpisodesRequest(task_id=task_id, include_archived=True))
    assert [e.id for e in live.episodes] == [new.id]
    assert [e.id for e in everything.episodes] == [new.id, old.id] and everything.episodes[1].HasField("archive_time")


# --- artifacts ------------------------------------------------------------------------------------

FILE, PATCH = memory_pb2.ARTIFACT_TYPE_FILE, memory_pb2.ARTIFACT_TYPE_PATCH


async def test_the_server_computes_size_and_sha256_from_the_content(rpc) -> None:
    tasks, memory = rpc
    task_id = await _task(tasks)
    content = b"CREATE TABLE users (id serial primary key);\n"
    digest = hashlib.sha256(content).hexdigest()
    computed = (await memory.RegisterArtifact(pb.RegisterArtifactRequest(
        task_id=task_id, agent_id="coder", type=FILE, path="out/migrate.sql", content=content))).artifact
    assert (computed.size_bytes, computed.sha256) == (len(content), digest) and computed.id.startswith("art_")
    checked = (await memory.RegisterArtifact(pb.RegisterArtifactRequest(
        task_id=task_id, type=FILE, path="out/copy.sql", content=content, sha256=digest.upper(),
        size_bytes=len(content)))).artifact
    assert checked.sha256 == digest
    given = (await memory.RegisterArtifact(pb.RegisterArtifactRequest(
        task_id=task_id, type=PATCH, path="patches/1.diff", sha256=digest, size_bytes=7))).artifact
    assert (given.size_bytes, given.sha256) == (7, digest)
    bare = (await memory.RegisterArtifact(pb.RegisterArtifactRequest(task_id=task_id, type=FILE, path="x"))).artifact
    assert not bare.HasField("size_bytes") and bare.sha256 == ""


async def test_a_wrong_checksum_or_size_is_rejected_naming_the_field(rpc) -> None:
    tasks, memory = rpc
    task_id = await _task(tasks)
    base = dict(task_id=task_id, type=FILE, path="a.txt", content=b"hello")
    wrong_sha = await _error(memory.RegisterArtifact(pb.RegisterArtifactRequest(**base, sha256="0" * 64)))
    assert_rpc_error(wrong_sha, INVALID, "ERROR_REASON_CHECKSUM_MISMATCH", "sha256")
    wrong_size = await _error(memory.RegisterArtifact(pb.RegisterArtifactRequest(**base, size_bytes=4)))
    assert_rpc_error(wrong_size, INVALID, "ERROR_REASON_CHECKSUM_MISMATCH", "size_bytes")
    not_hex = await _error(memory.RegisterArtifact(pb.RegisterArtifactRequest(**base, sha256="abc")))
    assert_rpc_error(not_hex, INVALID, "ERROR_REASON_INVALID_FIELD", "sha256")
    no_path = await _error(memory.RegisterArtifact(pb.RegisterArtifactRequest(task_id=task_id, type=FILE)))
    assert_rpc_error(no_path, INVALID, "ERROR_REASON_INVALID_FIELD", "path")
    assert not (await memory.ListArtifacts(pb.ListArtifactsRequest(task_id=task_id))).artifacts


async def test_artifacts_are_listed_by_type_and_path_prefix_and_deleted(rpc) -> None:
    tasks, memory = rpc
    task_id = await _task(tasks)
    made = [(await memory.RegisterArtifact(pb.RegisterArtifactRequest(task_id=task_id, type=kind, path=path))).artifact
            for kind, path in [(FILE, "src/a.py"), (PATCH, "src/a.diff"), (FILE, "docs/a.md")]]
    by_prefix = await memory.ListArtifacts(pb.ListArtifactsRequest(task_id=task_id, path_prefix="src/"))
    assert [a.id for a in by_prefix.artifacts] == [made[1].id, made[0].id]
    files = await memory.ListArtifacts(pb.ListArtifactsRequest(task_id=task_id, type=FILE))
    assert [a.id for a in files.artifacts] == [made[2].id, made[0].id]
    await memory.DeleteArtifact(pb.DeleteArtifactRequest(id=made[0].id))
    left = await memory.ListArtifacts(pb.ListArtifactsRequest(task_id=task_id))
    assert [a.id for a in left.artifacts] == [made[2].id, made[1].id]
    gone = await _error(memory.DeleteArtifact(pb.DeleteArtifactRequest(id=made[0].id)))
    assert_rpc_error(gone, grpc.StatusCode.NOT_FOUND, "ERROR_REASON_NOT_FOUND")


# --- learned patterns -----------------------------------------------------------------------------

async def test_a_repeated_pattern_counts_up_and_keeps_its_data_unless_replaced(rpc) -> None:
    _, memory = rpc
    data = struct_pb2.Struct()
    data.update({"model": "small", "ok": True})
    first = (await memory.RecordPattern(pb.RecordPatternRequest(
        pattern_type="rp_subtask_success", pattern_key="schema", data=data))).pattern
    second = (await memory.RecordPattern(pb.RecordPatternRequest(
        pattern_type="rp_subtask_success", pattern_key="schema"))).pattern
    assert (first.frequency, second.frequency) == (1, 2) and second.id == first.id
    assert dict(second.data) == {"model": "small", "ok": True}
    assert second.last_seen_time.ToMicroseconds() >= first.last_seen_time.ToMicroseconds()
    await memory.RecordPattern(pb.RecordPatternRequest(pattern_type="rp_subtask_success", pattern_key="load"))
    listed = await memory.ListPatterns(pb.ListPatternsRequest(pattern_type="rp_subtask_success"))
    assert [(p.pattern_key, p.frequency) for p in listed.patterns] == [("schema", 2), ("load", 1)]
    frequent = await memory.ListPatterns(pb.ListPatternsRequest(pattern_type="rp_subtask_success", min_frequency=2))
    assert [p.pattern_key for p in frequent.patterns] == ["schema"]
    paged = await memory.ListPatterns(pb.ListPatternsRequest(pattern_type="rp_subtask_success", page_size=1))
    rest = await memory.ListPatterns(pb.ListPatternsRequest(pattern_type="rp_subtask_success", page_size=1,
                                                            page_token=paged.next_page_token))
    assert [p.pattern_key for p in [*paged.patterns, *rest.patterns]] == ["schema", "load"]
    missing = await _error(memory.RecordPattern(pb.RecordPatternRequest(pattern_type="rp")))
    assert_rpc_error(missing, INVALID, "ERROR_REASON_INVALID_FIELD", "pattern_key")
