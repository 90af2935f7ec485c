"""The upgrade fixture: a small but complete database written through a server's gRPC API, and every read of it.

tests/data/upgrade/make_fixture.py runs write_fixture and read_everything against the previous release's own
server (its code on PYTHONPATH) and keeps the database and the reads; tests/test_upgrade.py opens that database
with the current code and asserts read_everything answers the same. Only the public API is used, so the module
runs unchanged against either release's stubs.
"""

from __future__ import annotations

from typing import Any

import grpc
from google.protobuf import duration_pb2, json_format, struct_pb2
from google.protobuf.message import Message

from taskmem.v1 import memory_pb2, state_pb2, task_pb2, wait_pb2
from taskmem.v1 import memory_service_pb2 as mpb
from taskmem.v1 import state_service_pb2 as spb
from taskmem.v1 import task_service_pb2 as tpb
from taskmem.v1 import wait_service_pb2 as wpb
from taskmem.v1.memory_service_pb2_grpc import MemoryServiceStub
from taskmem.v1.state_service_pb2_grpc import StateServiceStub
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from taskmem.v1.wait_service_pb2_grpc import WaitServiceStub
from tests.support.eventually import eventually

AGENT = "fixture-agent"
SEARCHES = ["connection pool exhausted", "which database engine did we pick", "flaky integration test"]
SEARCH_MODES = {"fulltext": memory_pb2.SEARCH_MODE_FULLTEXT, "semantic": memory_pb2.SEARCH_MODE_SEMANTIC,
                "hybrid": memory_pb2.SEARCH_MODE_HYBRID}


def _struct(values: dict[str, Any]) -> struct_pb2.Struct:
    found = struct_pb2.Struct()
    found.update(values)
    return found


async def write_fixture(channel: grpc.aio.Channel) -> dict[str, Any]:
    """Write one of everything (and a little more); returns the ids the reads need."""
    tasks, memory = TaskServiceStub(channel), MemoryServiceStub(channel)
    state, waits = StateServiceStub(channel), WaitServiceStub(channel)
    task = (await tasks.CreateTask(tpb.CreateTaskRequest(
        name="Migrate the billing database", goal="Move billing from MySQL to PostgreSQL without downtime",
        workspace="/srv/billing", context=_struct({"ticket": "OPS-118", "owner": "dana"}),
        metadata=_struct({"team": "payments"}), plan=[
            task_pb2.PlanItemSpec(id="dump", stage="prepare", title="Dump the MySQL schema"),
            task_pb2.PlanItemSpec(id="convert", stage="prepare", title="Convert types", depends_on=["dump"]),
            task_pb2.PlanItemSpec(id="cutover", stage="execute", title="Cut over", depends_on=["convert"],
                             tool_name="deploy", input=_struct({"window": "02:00"}))]))).task
    other = (await tasks.CreateTask(tpb.CreateTaskRequest(name="Rotate the TLS certificates"))).task
    await tasks.ReplacePlan(tpb.ReplacePlanRequest(task_id=task.id, reason="a dry run first", items=[
        task_pb2.PlanItemSpec(id="dump", stage="prepare", title="Dump the MySQL schema"),
        task_pb2.PlanItemSpec(id="convert", stage="prepare", title="Convert types", depends_on=["dump"]),
        task_pb2.PlanItemSpec(id="dry-run", stage="execute", title="Dry run on staging", depends_on=["convert"]),
        task_pb2.PlanItemSpec(id="cutover", stage="execute", title="Cut over", depends_on=["dry-run"])]))
    await tasks.UpdatePlanItem(tpb.UpdatePlanItemRequest(task_id=task.id, item_id="dump",
                                                         status=task_pb2.PLAN_ITEM_STATUS_COMPLETED,
                                                         summary="schema dumped: 41 tables"))
    await tasks.UpdatePlanItem(tpb.UpdatePlanItemRequest(task_id=task.id, item_id="convert",
                                                         status=task_pb2.PLAN_ITEM_STATUS_IN_PROGRESS,
                                                         active_issue="DATETIME(6) columns"))
    done = (await tasks.RecordAction(tpb.RecordActionRequest(
        task_id=task.id, plan_item_id="dump", type=task_pb2.ACTION_TYPE_CLI, tool_name="mysqldump",
        summary="mysqldump --no-data billing", status=task_pb2.ACTION_STATUS_SUCCEEDED,
        input=_struct({"args": ["--no-data", "billing"]}), output=_struct({"tables": 41}),
        duration=duration_pb2.Duration(seconds=3), tokens_in=120, tokens_out=40))).action
    running = (await tasks.RecordAction(tpb.RecordActionRequest(
        task_id=task.id, plan_item_id="convert", type=task_pb2.ACTION_TYPE_TOOL, tool_name="pgloader",
        summary="pgloader dry run", status=task_pb2.ACTION_STATUS_RUNNING))).action
    await tasks.AppendActionLog(tpb.AppendActionLogRequest(action_id=running.id, lines=[
        tpb.LogLineInput(stream="stdout", content="loading 41 tables"),
        tpb.LogLineInput(stream="stderr", content="warning: DATETIME(6) truncated to timestamp(6)")]))
    failed = (await tasks.RecordAction(tpb.RecordActionRequest(
        task_id=task.id, plan_item_id="convert", type=task_pb2.ACTION_TYPE_CLI, summary="psql -f schema.sql",
        status=task_pb2.ACTION_STATUS_RUNNING))).action
    await tasks.CompleteAction(tpb.CompleteActionRequest(action_id=failed.id, status=task_pb2.ACTION_STATUS_FAILED,
                                                         error="ERROR: type \"tinyint\" does not exist"))
    for role, content in [(task_pb2.MESSAGE_ROLE_USER, "Please move billing to PostgreSQL this week."),
                          (task_pb2.MESSAGE_ROLE_AGENT, "Dumped the schema: 41 tables."),
                          (task_pb2.MESSAGE_ROLE_TOOL, "pgloader: DATETIME(6) truncated"),
                          (task_pb2.MESSAGE_ROLE_USER, "Use PostgreSQL 16, not 15.")]:
        await tasks.PostMessage(tpb.PostMessageRequest(task_id=task.id, role=role, content=content))
    await tasks.PostMessage(tpb.PostMessageRequest(thread_id="standup", role=task_pb2.MESSAGE_ROLE_USER,
                                                   content="what is blocking billing?"))
    await tasks.RecordContextSnapshot(tpb.RecordContextSnapshotRequest(
        task_id=task.id, label="before cutover", content="plan v2, convert in progress", summarized=True))
    entries = (await memory.AddMemoryEntries(mpb.AddMemoryEntriesRequest(entries=[
        mpb.NewMemoryEntry(task_id=task.id, subtask_id="convert", type=memory_pb2.MEMORY_TYPE_ERROR,
                           summary="The connection pool was exhausted during the bulk load",
                           detail="pgbouncer pool_size 20; raised to 50", tags=["pgbouncer", "load"]),
        mpb.NewMemoryEntry(task_id=task.id, type=memory_pb2.MEMORY_TYPE_DECISION,
                           summary="We chose PostgreSQL 16 as the target engine", tags=["engine"],
                           relevance_to=["cutover"]),
        mpb.NewMemoryEntry(task_id=task.id, type=memory_pb2.MEMORY_TYPE_DISCOVERY,
                           summary="The integration test for invoices fails intermittently", tags=["tests"]),
        mpb.NewMemoryEntry(task_id=other.id, type=memory_pb2.MEMORY_TYPE_TOOL_RESULT,
                           summary="certbot renewed 3 certificates", pinned=True)]))).entries
    knowledge = (await memory.UpsertKnowledge(mpb.UpsertKnowledgeRequest(
        category=memory_pb2.KNOWLEDGE_CATEGORY_ARCHITECTURE, key="billing.database", value="PostgreSQL 16",
        source="decision", confidence=0.9))).knowledge
    await memory.UpsertKnowledge(mpb.UpsertKnowledgeRequest(
        category=memory_pb2.KNOWLEDGE_CATEGORY_CONVENTION, key="migrations.tool", value="sqitch",
        source="README", confidence=0.7))
    await memory.UpsertKnowledge(mpb.UpsertKnowledgeRequest(
        category=memory_pb2.KNOWLEDGE_CATEGORY_ARCHITECTURE, key="billing.database", value="PostgreSQL 16.4",
        source="ops", confidence=0.95))
    await memory.RecordEpisode(mpb.RecordEpisodeRequest(
        task_id=task.id, agent_id=AGENT, action=memory_pb2.EPISODE_ACTION_FAILED, approach="load with COPY",
        outcome="pool exhausted", duration=duration_pb2.Duration(seconds=90)))
    await memory.RegisterArtifact(mpb.RegisterArtifactRequest(
        task_id=task.id, agent_id=AGENT, type=memory_pb2.ARTIFACT_TYPE_FILE, path="out/schema.sql",
        description="converted schema", content=b"CREATE TABLE invoices (id bigint);\n"))
    await memory.RecordPattern(mpb.RecordPatternRequest(pattern_type="retry", pattern_key="pgloader",
                                                        data=_struct({"attempts": 3})))
    await state.UpsertStateItems(spb.UpsertStateItemsRequest(task_id=task.id, items=[
        state_pb2.StateItemCandidate(type=state_pb2.STATE_ITEM_TYPE_CONSTRAINT, text="No downtime during business hours",
                                     topic_tags=["cutover"]),
        state_pb2.StateItemCandidate(type=state_pb2.STATE_ITEM_TYPE_QUESTION, text="Who signs off the cutover?"),
        state_pb2.StateItemCandidate(type=state_pb2.STATE_ITEM_TYPE_RISK, text="Invoice totals could round differently")]))
    await state.AddDecision(spb.AddDecisionRequest(task_id=task.id, text="Target PostgreSQL 16",
                                                   detail="15 is out of support by the cutover"))
    await state.PutWorkingMemory(spb.PutWorkingMemoryRequest(working_memory=state_pb2.WorkingMemory(
        agent_id=AGENT, current_plan="convert types", active_constraints=["no downtime"],
        task_context=_struct({"task": task.id}), scratchpad="tinyint → smallint")))
    # An external wait with no timeout: still WAITING however long after the fixture was made the test runs.
    pending = (await waits.CreateWait(wpb.CreateWaitRequest(
        task_id=task.id, criteria="the change window opens",
        target=wait_pb2.WaitTarget(external=wait_pb2.ExternalTarget(resolver="change manager"))))).wait
    elapsed = (await waits.CreateWait(wpb.CreateWaitRequest(
        task_id=task.id, criteria="staging settles",
        target=wait_pb2.WaitTarget(timer=wait_pb2.TimerTarget(duration=duration_pb2.Duration(seconds=1)))))).wait
    await _until_ended(waits, elapsed.id)
    await memory.SearchMemories(mpb.SearchMemoriesRequest(query="pool", wait_for_embeddings=True))  # all embedded
    return {"task": task.id, "other": other.id, "actions": [done.id, running.id, failed.id],
            "entries": [entry.id for entry in entries], "knowledge": knowledge.id, "waits": [pending.id, elapsed.id]}


async def _until_ended(waits: WaitServiceStub, wait_id: str) -> None:
    async def ended() -> bool:
        return (await waits.GetWait(wpb.GetWaitRequest(wait_id=wait_id))).wait.status != wait_pb2.WAIT_STATUS_WAITING
    await eventually(ended, f"wait {wait_id} ended", interval=0.1)


def _plain(message: Message) -> dict[str, Any]:
    return json_format.MessageToDict(message, preserving_proto_field_name=True)


async def _replayed_events(tasks: TaskServiceStub, count: int) -> list[dict[str, Any]]:
    """The first `count` events a subscription from cursor 0 replays."""
    found: list[dict[str, Any]] = []
    stream = tasks.SubscribeEvents(tpb.SubscribeEventsRequest(after_cursor=0))
    async for response in stream:
        found.append(_plain(response))
        if len(found) == count:
            break
    stream.cancel()
    return found


async def read_everything(channel: grpc.aio.Channel, ids: dict[str, Any]) -> dict[str, Any]:
    """Every read of the fixture, by name, as JSON values."""
    tasks, memory = TaskServiceStub(channel), MemoryServiceStub(channel)
    state, waits = StateServiceStub(channel), WaitServiceStub(channel)
    task_id = ids["task"]
    reads: dict[str, Any] = {
        "GetTask": await tasks.GetTask(tpb.GetTaskRequest(task_id=task_id)),
        "GetTask(other)": await tasks.GetTask(tpb.GetTaskRequest(task_id=ids["other"])),
        "ListTasks": await tasks.ListTasks(tpb.ListTasksRequest(page_size=50)),
        "GetPlan": await tasks.GetPlan(tpb.GetPlanRequest(task_id=task_id)),
        "GetPlan(version 1)": await tasks.GetPlan(tpb.GetPlanRequest(task_id=task_id, version=1)),
        "ListActions": await tasks.ListActions(tpb.ListActionsRequest(task_id=task_id, page_size=50)),
        "ListMessages": await tasks.ListMessages(tpb.ListMessagesRequest(task_id=task_id, page_size=50)),
        "ListMessages(standup)": await tasks.ListMessages(tpb.ListMessagesRequest(thread_id="standup")),
        "ListContextSnapshots": await tasks.ListContextSnapshots(tpb.ListContextSnapshotsRequest(task_id=task_id)),
        "ListEvents": await tasks.ListEvents(tpb.ListEventsRequest(page_size=500)),
        "ListEvents(after 5, task)": await tasks.ListEvents(tpb.ListEventsRequest(task_ids=[task_id], after_cursor=5)),
        "QueryMemoryEntries": await memory.QueryMemoryEntries(mpb.QueryMemoryEntriesRequest(page_size=50)),
        "GetRelevantMemories": await memory.GetRelevantMemories(mpb.GetRelevantMemoriesRequest(
            task_id=task_id, subtask_id="cutover")),
        "GetKnowledge": await memory.GetKnowledge(mpb.GetKnowledgeRequest(id=ids["knowledge"])),
        "QueryKnowledge": await memory.QueryKnowledge(mpb.QueryKnowledgeRequest(page_size=50)),
        "QueryKnowledge(history)": await memory.QueryKnowledge(mpb.QueryKnowledgeRequest(include_history=True)),
        "ListEpisodes": await memory.ListEpisodes(mpb.ListEpisodesRequest(task_id=task_id)),
        "ListArtifacts": await memory.ListArtifacts(mpb.ListArtifactsRequest(task_id=task_id)),
        "ListPatterns": await memory.ListPatterns(mpb.ListPatternsRequest()),
        "ListStateItems": await state.ListStateItems(spb.ListStateItemsRequest(task_id=task_id,
                                                                               include_superseded=True)),
        "RenderState": await state.RenderState(spb.RenderStateRequest(task_id=task_id, token_budget=2000)),
        "GetWorkingMemory": await state.GetWorkingMemory(spb.GetWorkingMemoryRequest(agent_id=AGENT)),
        "ListWaits": await waits.ListWaits(wpb.ListWaitsRequest(task_id=task_id)),
    }
    for n, action_id in enumerate(ids["actions"]):
        # A finished action's tail ends after its stored lines; the running one's (n == 1) has two stored lines
        # and then would follow live ones, so it is read up to them.
        log = tasks.TailActionLog(tpb.TailActionLogRequest(action_id=action_id))
        lines = []
        async for line in log:
            lines.append(_plain(line))
            if n == 1 and len(lines) == 2:
                break
        log.cancel()
        reads[f"TailActionLog({n})"] = lines
    for wait_id in ids["waits"]:
        reads[f"GetWait({wait_id})"] = await waits.GetWait(wpb.GetWaitRequest(wait_id=wait_id))
    for query in SEARCHES:
        for name, mode in SEARCH_MODES.items():
            reads[f"SearchMemories({name}: {query})"] = await memory.SearchMemories(mpb.SearchMemoriesRequest(
                query=query, mode=mode, limit=5, wait_for_embeddings=True))
    events = reads["ListEvents"].events
    reads["SubscribeEvents(replay)"] = await _replayed_events(tasks, len(events))
    return {name: value if isinstance(value, list) else _plain(value) for name, value in reads.items()}
