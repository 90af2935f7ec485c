"""The MCP tools and resources: each one validates what the RPC cannot, makes the call(s), and
renders the answer as compact text for a model."""

from __future__ import annotations

import asyncio
from typing import Annotated, Literal

from google.protobuf import duration_pb2, field_mask_pb2
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

from taskmem.mcp import render
from taskmem.commands.connection import AGENT_HEADER
from taskmem.mcp.backend import Backend, Caller
from taskmem.v1 import memory_pb2, memory_service_pb2, state_pb2, state_service_pb2, task_pb2, task_service_pb2
from taskmem.v1 import wait_pb2, wait_service_pb2

INSTRUCTIONS = (
    "Persistent task memory that survives context compaction. Register a task with its plan, post progress as you "
    "go (task_update), record decisions and errors, and after a compaction or restart call task_query to learn "
    "where you were.")

ItemStatus = Literal["pending", "in_progress", "completed", "failed", "skipped", "blocked"]
TaskStatus = Literal["pending", "planning", "executing", "synthesizing", "completed", "failed", "cancelled",
                     "paused", "archived", "input_required", "auth_required"]
NoteKind = Literal["decision", "constraint", "question"]
QuestionAnswer = Literal["replaces", "stands_beside", "same"]
MemoryType = Literal["decision", "error", "tool_result", "user_instruction", "discovery", "artifact", "context"]
KnowledgeCategory = Literal["convention", "architecture", "decision", "fact"]
WaitKind = Literal["timer", "external", "http", "file", "task_status", "input", "auth"]

_READ = ToolAnnotations(read_only_hint=True)
_WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False)

TaskId = Annotated[str, Field(description="The task id returned by task_register, e.g. tsk_0192…")]


class PlanStep(BaseModel):
    """One plan item; a plain string in `plan` is a step with that title."""

    title: str = Field(description="What the step does.")
    id: str = Field("", description="Stable id (letters, digits, - _ .); default: its position, 1, 2, …")
    depends_on: list[str] = Field(default_factory=list, description="Ids of steps that must be done first.")


def _enum(enum_type: object, prefix: str, name: str) -> int:
    return int(enum_type.Value(prefix + name.upper()))  # type: ignore[attr-defined]


def _caller(ctx: Context | None) -> Caller | None:
    """Over HTTP the caller's own bearer (the taskmem server checks it) and x-taskmem-agent are forwarded;
    None on stdio, where the process's own --token and --agent are sent."""
    headers = ctx.headers if ctx is not None else None
    if headers is None:
        return None
    scheme, _, token = (headers.get("authorization") or "").partition(" ")
    return Caller(token.strip() if scheme.lower() == "bearer" else "", headers.get(AGENT_HEADER) or "")


def _seconds(value: float) -> duration_pb2.Duration:
    duration = duration_pb2.Duration()
    duration.FromNanoseconds(int(value * 1e9))
    return duration


def build_mcp_server(backend: Backend) -> MCPServer:
    server = MCPServer("taskmem", instructions=INSTRUCTIONS, version="0.1.0")

    @server.tool(annotations=_WRITE)
    async def task_register(
        name: Annotated[str, Field(description="Short task name, e.g. 'Deploy coursefolio'.")],
        plan: Annotated[list[str | PlanStep], Field(description="The steps in order: titles, or objects with id, "
                                                                "title and depends_on.")] = [],  # noqa: B006
        goal: Annotated[str, Field(description="The user's request, verbatim.")] = "",
        workspace: Annotated[str, Field(description="Absolute path of the working directory, if any.")] = "",
        ctx: Context | None = None,
    ) -> str:
        """Start tracking a task with its plan; returns the task id and the plan item ids to report progress on."""
        specs = []
        for position, step in enumerate(plan, start=1):
            if isinstance(step, str):
                step = PlanStep(title=step)
            specs.append(task_pb2.PlanItemSpec(id=step.id or str(position), title=step.title,
                                               depends_on=step.depends_on))
        created = await backend.call(backend.tasks.CreateTask, task_service_pb2.CreateTaskRequest(
            name=name, goal=goal, workspace=workspace, plan=specs), caller=_caller(ctx))
        plan_response = None
        if specs:
            plan_response = (await backend.call(backend.tasks.GetPlan, task_service_pb2.GetPlanRequest(
                task_id=created.task.id), caller=_caller(ctx))).plan
        return render.registered(created.task, plan_response)

    @server.tool(annotations=_WRITE)
    async def task_update(
        task_id: TaskId,
        message: Annotated[str, Field(description="What happened, e.g. 'Step 2 done — pushed v1.2.3 to ghcr.io'.")] = "",
        plan_item: Annotated[str, Field(description="The plan item id this update is about.")] = "",
        item_status: Annotated[ItemStatus | None, Field(description="New status of plan_item.")] = None,
        issue: Annotated[str, Field(description="What blocks plan_item now, if anything.")] = "",
        task_status: Annotated[TaskStatus | None, Field(description="New status of the whole task, e.g. "
                                                                    "'executing' or 'completed'.")] = None,
        holder: Annotated[str, Field(description="Your holder id, when you claimed plan_item with task_claim: the "
                                                 "update is refused if you no longer hold it.")] = "",
        dismiss_question: Annotated[bool, Field(description="Answer no to plan_item's 'may be finished' question "
                                                            "(the message did not finish it); its status stays.")] = False,
        ctx: Context | None = None,
    ) -> str:
        """Record progress on a task: a message, a plan item's new status, and/or the task's new status."""
        caller = _caller(ctx)
        if not (message.strip() or item_status or task_status or issue or dismiss_question):
            raise ToolError("message: give a message, an item_status or a task_status")
        if (item_status or issue or dismiss_question) and not plan_item:
            raise ToolError("plan_item: required with item_status, issue or dismiss_question")
        if plan_item:
            request = task_service_pb2.UpdatePlanItemRequest(task_id=task_id, item_id=plan_item, holder_id=holder,
                                                             dismiss_question=dismiss_question)
            if item_status:
                request.status = _enum(task_pb2.PlanItemStatus, "PLAN_ITEM_STATUS_", item_status)
            if issue:
                request.active_issue = issue
            await backend.call(backend.tasks.UpdatePlanItem, request, caller=caller,
                               fields={"item_id": "plan_item", "status": "item_status", "active_issue": "issue",
                                       "holder_id": "holder"})
        if message.strip():
            await backend.call(backend.tasks.PostMessage, task_service_pb2.PostMessageRequest(
                task_id=task_id, role=task_pb2.MESSAGE_ROLE_AGENT, kind=task_pb2.MESSAGE_KIND_PROGRESS,
                content=message), caller=caller, fields={"content": "message"})
        if task_status:
            await backend.call(backend.tasks.UpdateTask, task_service_pb2.UpdateTaskRequest(
                task=task_pb2.Task(id=task_id, status=_enum(task_pb2.TaskStatus, "TASK_STATUS_", task_status)),
                update_mask=field_mask_pb2.FieldMask(paths=["status"])), caller=caller,
                fields={"task.status": "task_status", "task.id": "task_id", "task": "task_status"})
        progress = await backend.call(backend.tasks.GetProgress, task_service_pb2.GetProgressRequest(
            task_id=task_id), caller=caller)
        return f"Recorded on {task_id}.\n{progress.summary}"

    @server.tool(annotations=_WRITE)
    async def task_claim(
        task_id: TaskId,
        holder: Annotated[str, Field(description="Your own id among the agents sharing this plan, e.g. 'agent-3'; "
                                                 "pass it to task_update for the item you claim.")],
        plan_item: Annotated[str, Field(description="Claim this item only; default: the next ready one.")] = "",
        stage: Annotated[str, Field(description="Only an item of this stage.")] = "",
        lease_seconds: Annotated[float, Field(description="How long you hold it unless you claim it again or "
                                                          "finish it (1 to 3600).")] = 600,
        ctx: Context | None = None,
    ) -> str:
        """Take the next ready plan item for yourself, so no other agent on the plan starts it too; finish it with
        task_update (plan_item, item_status, holder). Claiming the item you hold again renews your lease."""
        caller = _caller(ctx)
        fields = {"holder_id": "holder", "item_id": "plan_item", "lease": "lease_seconds", "stages": "stage"}
        if plan_item:
            renewed = await _renew_own(task_id, plan_item, holder, lease_seconds, caller)
            if renewed:
                return renewed
        answer = await backend.call(backend.tasks.ClaimPlanItem, task_service_pb2.ClaimPlanItemRequest(
            task_id=task_id, holder_id=holder, item_id=plan_item, stages=[stage] if stage else [],
            lease=_seconds(lease_seconds)), caller=caller, fields=fields)
        return render.claimed(answer)

    @server.tool(annotations=_WRITE)
    async def task_fork(
        task_id: TaskId,
        at_cursor: Annotated[int, Field(description="Fork the task as it stood just after this event cursor "
                                                    "(from its state history); default 0: as it stands now.")] = 0,
        name: Annotated[str, Field(description="The new task's name; default: the original's + ' (fork)'.")] = "",
        ctx: Context | None = None,
    ) -> str:
        """Try an alternative without touching a task: a new task with its plan, decisions and other state as they
        stood then; its transcript and actions continue the original's. Claims and waits are not copied."""
        forked = await backend.call(backend.tasks.ForkTask, task_service_pb2.ForkTaskRequest(
            task_id=task_id, at_cursor=at_cursor, name=name), caller=_caller(ctx))
        return render.forked(forked)

    async def _renew_own(task_id: str, item_id: str, holder: str, lease_seconds: float, caller: Caller | None) -> str:
        """'Renewed …' when the holder holds the item already, else "" (then it is claimed afresh)."""
        try:
            renewed = await backend.call(backend.tasks.RenewClaim, task_service_pb2.RenewClaimRequest(
                task_id=task_id, item_id=item_id, holder_id=holder, lease=_seconds(lease_seconds)), caller=caller,
                fields={"holder_id": "holder", "item_id": "plan_item", "lease": "lease_seconds"})
        except ToolError:
            return ""
        return f"Renewed: you ({holder}) hold {item_id} until {render.display_time(renewed.claim.expire_time)}."

    @server.tool(annotations=_READ)
    async def task_query(
        task_id: TaskId,
        question: Annotated[str, Field(description="What you want to know; default 'where was I?'.")] = "where was I?",
        ctx: Context | None = None,
    ) -> str:
        """Ask 'where was I?' about a task: done, current and next steps, decisions, constraints, questions, waits."""
        caller = _caller(ctx)
        progress, answer, items = await asyncio.gather(
            backend.call(backend.tasks.GetProgress, task_service_pb2.GetProgressRequest(
                task_id=task_id, recent_message_count=5), caller=caller),
            backend.call(backend.state.QueryTask, state_service_pb2.QueryTaskRequest(
                task_id=task_id, question=question), caller=caller),
            backend.call(backend.state.ListStateItems, state_service_pb2.ListStateItemsRequest(
                task_id=task_id, types=[state_pb2.STATE_ITEM_TYPE_RISK, state_pb2.STATE_ITEM_TYPE_ACTION],
                page_size=100), caller=caller))
        current = [item for item in items.items if render.is_current(item)]
        return render.where_was_i(progress, answer.answer, answer.from_model, current)

    @server.tool(annotations=_READ)
    async def task_list(
        statuses: Annotated[list[TaskStatus], Field(description="Only tasks in these statuses; empty: all.")] = [],  # noqa: B006
        limit: Annotated[int, Field(ge=1, le=200, description="At most this many, newest update first.")] = 20,
        awaiting_person: Annotated[bool, Field(description="Only tasks waiting on a person's answer or "
                                                           "authorisation (the task or one of its items).")] = False,
        ctx: Context | None = None,
    ) -> str:
        """List tasks, most recently updated first, one line each: id, status, name."""
        listed = await backend.call(backend.tasks.ListTasks, task_service_pb2.ListTasksRequest(
            statuses=[_enum(task_pb2.TaskStatus, "TASK_STATUS_", status) for status in statuses], page_size=limit,
            awaiting_person=awaiting_person),
            caller=_caller(ctx), fields={"page_size": "limit"})
        return "\n".join(render.task_line(task) for task in listed.tasks) or "No tasks."

    @server.tool(annotations=_WRITE)
    async def task_note(
        task_id: TaskId,
        kind: Annotated[NoteKind, Field(description="decision, constraint (a rule to respect) or open question.")],
        text: Annotated[str, Field(description="One sentence, e.g. 'Use PostgreSQL instead of MySQL'.")],
        replaces: Annotated[str, Field(description="The id ([d_…]) of the decision this one replaces; it is then "
                                                   "retired everywhere. Say what changed in text.")] = "",
        ctx: Context | None = None,
    ) -> str:
        """Record a decision, constraint or open question in the task's state; returns its id."""
        caller = _caller(ctx)
        if replaces:
            # Named by the agent, the old item is retired before the new one is reconciled, so the new
            # one can neither merge into it nor be held as a conflict with it (reconciliation alone
            # supersedes only on a user's word).
            await _set_item_status(task_id, replaces, state_pb2.STATE_ITEM_STATUS_SUPERSEDED, caller)
        candidate = state_pb2.StateItemCandidate(
            type=_enum(state_pb2.StateItemType, "STATE_ITEM_TYPE_", kind), text=text,
            confidence=state_pb2.STATE_ITEM_CONFIDENCE_HIGH)
        try:
            upserted = await backend.call(backend.state.UpsertStateItems, state_service_pb2.UpsertStateItemsRequest(
                task_id=task_id, items=[candidate]), caller=caller,
                fields={"items[0].text": "text", "items[0].type": "kind", "items": "text"})
            result = upserted.report.results[0]
            if result.outcome == state_pb2.RECONCILE_OUTCOME_DROPPED:
                raise ToolError(f"text: not recorded ({result.reason})")
        except ToolError:
            if replaces:
                await _set_item_status(task_id, replaces, state_pb2.STATE_ITEM_STATUS_ACTIVE, caller)
            raise
        return render.recorded_state(result, replaces)

    async def _open_questions(task_id: str, caller: Caller | None) -> str:
        progress = await backend.call(backend.tasks.GetProgress, task_service_pb2.GetProgressRequest(
            task_id=task_id, recent_message_count=0), caller=caller)
        return render.open_questions(progress.open_conflicts)

    @server.tool(annotations=_READ)
    async def task_questions(task_id: TaskId, ctx: Context | None = None) -> str:
        """List the task's open questions: state items near each other that nothing certain relates ("does B
        replace A, stand beside it, or say the same?"), each with the uids answer_question needs."""
        return await _open_questions(task_id, _caller(ctx))

    @server.tool(annotations=_WRITE)
    async def answer_question(
        task_id: TaskId,
        new_uid: Annotated[str, Field(description="B: the newer item of the question ([d_…]).")],
        old_uid: Annotated[str, Field(description="A: the item B may replace ([d_…]).")],
        answer: Annotated[QuestionAnswer, Field(description="replaces (A is retired), stands_beside (both hold) "
                                                            "or same (B is merged into A).")],
        ctx: Context | None = None,
    ) -> str:
        """Answer an open question of the task's state in one call; returns what changed and the questions left."""
        caller = _caller(ctx)
        answered = await backend.call(backend.state.AnswerQuestion, state_service_pb2.AnswerQuestionRequest(
            task_id=task_id, new_uid=new_uid, old_uid=old_uid, answered_by="agent",
            answer=_enum(state_service_pb2.QuestionAnswer, "QUESTION_ANSWER_", answer)), caller=caller)
        return render.answered(answer, answered.items) + "\n" + await _open_questions(task_id, caller)

    async def _set_item_status(task_id: str, uid: str, status: int, caller: Caller | None) -> None:
        await backend.call(backend.state.SetStateItemStatus, state_service_pb2.SetStateItemStatusRequest(
            task_id=task_id, uid=uid, status=status), caller=caller, fields={"uid": "replaces", "status": "replaces"})

    @server.tool(annotations=_WRITE)
    async def task_error(
        task_id: TaskId,
        error: Annotated[str, Field(description="What went wrong, at most 300 characters.")],
        resolution: Annotated[str, Field(description="How it was handled, if it was.")] = "",
        plan_item: Annotated[str, Field(description="The plan item id it happened in, if any.")] = "",
        ctx: Context | None = None,
    ) -> str:
        """Record an error met on a task (and how it was handled) so it is not repeated after a compaction."""
        added = await backend.call(backend.state.AddError, state_service_pb2.AddErrorRequest(
            task_id=task_id, error=error, resolution=resolution, subtask_id=plan_item), caller=_caller(ctx),
            fields={"subtask_id": "plan_item"})
        return f"Recorded error {added.error.memory_entry_id} on {task_id}: {added.error.error}"

    @server.tool(annotations=_WRITE)
    async def wait_create(
        kind: Annotated[WaitKind, Field(description="timer (seconds), external (resolved with wait_resolve), "
                                                    "http (url answers 200), file (path exists), task_status; "
                                                    "input / auth: ask a person a question (or to authorise "
                                                    "something): the task, or plan_item_id, waits until answered.")],
        criteria: Annotated[str, Field(description="What is awaited, in words, e.g. 'CI green on main'.")] = "",
        task_id: Annotated[str, Field(description="Link to this task: the outcome is written into its history.")] = "",
        seconds: Annotated[float | None, Field(gt=0, description="timer: how long to wait.")] = None,
        url: Annotated[str, Field(description="http: the URL to poll.")] = "",
        path: Annotated[str, Field(description="file: a path under the task's workspace.")] = "",
        contains: Annotated[str, Field(description="http/file: text the body or file must contain.")] = "",
        watch_task_id: Annotated[str, Field(description="task_status: the task to watch.")] = "",
        statuses: Annotated[list[TaskStatus], Field(description="task_status: the statuses that resolve it.")] = [],  # noqa: B006
        timeout_seconds: Annotated[float | None, Field(gt=0, description="Give up after this long.")] = None,
        question: Annotated[str, Field(description="input/auth: what the person is asked.")] = "",
        asked_of: Annotated[str, Field(description="input/auth: who must answer, e.g. 'release manager'.")] = "",
        plan_item_id: Annotated[str, Field(description="input/auth: the plan item that waits (default: the task).")] = "",
        ctx: Context | None = None,
    ) -> str:
        """Start a smart wait the server watches for you, linked to a task; check it later with wait_check. With
        kind input or auth, ask a person: the answer arrives in the task's history (task_query shows it)."""
        target = wait_pb2.WaitTarget()
        if kind == "timer":
            if seconds is None:
                raise ToolError("seconds: required for a timer wait")
            target.timer.duration.CopyFrom(_seconds(seconds))
        elif kind == "external":
            target.external.resolver = "agent"
        elif kind in ("input", "auth"):
            target.external.kind = _enum(wait_pb2.ExternalWaitKind, "EXTERNAL_WAIT_KIND_", kind)  # type: ignore[assignment]
            target.external.resolver, target.external.question = asked_of, question
            target.external.plan_item_id = plan_item_id
        elif kind == "http":
            target.http.url, target.http.body_contains = url, contains
        elif kind == "file":
            target.file.path, target.file.contains = path, contains
        else:
            target.task_status.task_id = watch_task_id
            target.task_status.statuses.extend(_enum(task_pb2.TaskStatus, "TASK_STATUS_", s) for s in statuses)
        request = wait_service_pb2.CreateWaitRequest(task_id=task_id, criteria=criteria, target=target)
        if timeout_seconds is not None:
            request.timeout.CopyFrom(_seconds(timeout_seconds))
        created = await backend.call(backend.waits.CreateWait, request, caller=_caller(ctx), fields={
            "target.http.url": "url", "target.http.body_contains": "contains", "target.file.path": "path",
            "target.file.contains": "contains", "target.task_status.task_id": "watch_task_id",
            "target.task_status.statuses": "statuses", "target.timer.duration": "seconds",
            "timeout": "timeout_seconds", "target.external.question": "question",
            "target.external.resolver": "asked_of", "target.external.plan_item_id": "plan_item_id"})
        return render.wait_line(created.wait)

    @server.tool(annotations=_READ)
    async def wait_check(
        wait_id: Annotated[str, Field(description="The wait id returned by wait_create.")],
        ctx: Context | None = None,
    ) -> str:
        """Check a smart wait: waiting, resolved (with its result), timed out, cancelled or failed."""
        fetched = await backend.call(backend.waits.GetWait, wait_service_pb2.GetWaitRequest(wait_id=wait_id),
                                     caller=_caller(ctx))
        return render.wait_line(fetched.wait)

    @server.tool(annotations=_WRITE)
    async def wait_resolve(
        wait_id: Annotated[str, Field(description="The id of an external wait.")],
        result: Annotated[str, Field(description="The outcome in words, e.g. 'approved by alex'.")],
        failed: Annotated[bool, Field(description="True if the outcome is a failure, e.g. 'rejected'.")] = False,
        ctx: Context | None = None,
    ) -> str:
        """Resolve an external wait with its outcome; the linked task's history records it."""
        resolved = await backend.call(backend.waits.ResolveWait, wait_service_pb2.ResolveWaitRequest(
            wait_id=wait_id, result=result,
            status=wait_pb2.WAIT_STATUS_FAILED if failed else wait_pb2.WAIT_STATUS_RESOLVED), caller=_caller(ctx))
        return render.wait_line(resolved.wait)

    @server.tool(annotations=_WRITE)
    async def memory_add(
        summary: Annotated[str, Field(description="One line worth remembering.")],
        type: Annotated[MemoryType, Field(description="What kind of memory it is.")],
        task_id: TaskId,
        detail: Annotated[str, Field(description="Longer detail, if any.")] = "",
        tags: Annotated[list[str], Field(description="Tags to find it by.")] = [],  # noqa: B006
        ctx: Context | None = None,
    ) -> str:
        """Keep something in the long-term memory archive, searchable later with memory_search."""
        added = await backend.call(backend.memory.AddMemoryEntries, memory_service_pb2.AddMemoryEntriesRequest(
            entries=[memory_service_pb2.NewMemoryEntry(
                task_id=task_id, type=_enum(memory_pb2.MemoryType, "MEMORY_TYPE_", type), summary=summary,
                detail=detail, tags=tags)]), caller=_caller(ctx), fields={f"entries[0].{name}": name for name in ("summary", "type", "task_id", "detail", "tags")})
        return f"Remembered {added.entries[0].id}."

    @server.tool(annotations=_READ)
    async def memory_search(
        query: Annotated[str, Field(description="What to look for, as a plain question; text in double quotes is"
                                    " an exact phrase every full-text hit must contain.")],
        task_id: Annotated[str, Field(description="Only this task's memories.")] = "",
        mode: Annotated[Literal["hybrid", "fulltext", "semantic"], Field(description="How to match.")] = "hybrid",
        limit: Annotated[int, Field(ge=1, le=100, description="At most this many hits.")] = 10,
        ctx: Context | None = None,
    ) -> str:
        """Search the memory archive (full text and meaning); hits best first with score, id, type and summary."""
        found = await backend.call(backend.memory.SearchMemories, memory_service_pb2.SearchMemoriesRequest(
            query=query, mode=_enum(memory_pb2.SearchMode, "SEARCH_MODE_", mode),
            filter=memory_pb2.MemoryFilter(task_id=task_id), limit=limit), caller=_caller(ctx),
            fields={"filter.task_id": "task_id"})
        return render.search_hits(found.hits)

    @server.tool(annotations=_WRITE)
    async def knowledge_upsert(
        category: Annotated[KnowledgeCategory, Field(description="What kind of project knowledge it is.")],
        key: Annotated[str, Field(description="A stable key, e.g. 'db.engine'.")],
        value: Annotated[str, Field(description="The value.")],
        source: Annotated[str, Field(description="Who or what says so.")] = "",
        confidence: Annotated[float | None, Field(ge=0, le=1, description="0..1; default 1.")] = None,
        ctx: Context | None = None,
    ) -> str:
        """Set a piece of long-term project knowledge (a convention, architecture fact or decision) by key."""
        request = memory_service_pb2.UpsertKnowledgeRequest(
            category=_enum(memory_pb2.KnowledgeCategory, "KNOWLEDGE_CATEGORY_", category), key=key, value=value,
            source=source)
        if confidence is not None:
            request.confidence = confidence
        upserted = await backend.call(backend.memory.UpsertKnowledge, request, caller=_caller(ctx))
        return render.knowledge_lines([upserted.knowledge])

    @server.tool(annotations=_READ)
    async def knowledge_query(
        category: Annotated[KnowledgeCategory | None, Field(description="Only this category.")] = None,
        key_prefix: Annotated[str, Field(description="Only keys starting with this.")] = "",
        text: Annotated[str, Field(description="Only entries whose key or value contains this.")] = "",
        limit: Annotated[int, Field(ge=1, le=500, description="At most this many.")] = 50,
        ctx: Context | None = None,
    ) -> str:
        """Look up project knowledge by category, key prefix or text."""
        request = memory_service_pb2.QueryKnowledgeRequest(key_prefix=key_prefix, text=text, page_size=limit)
        if category is not None:
            request.category = _enum(memory_pb2.KnowledgeCategory, "KNOWLEDGE_CATEGORY_", category)
        found = await backend.call(backend.memory.QueryKnowledge, request, caller=_caller(ctx),
                                   fields={"page_size": "limit"})
        return render.knowledge_lines(found.knowledge)

    @server.tool(annotations=_READ)
    async def context_build(
        task_id: TaskId,
        token_budget: Annotated[int, Field(ge=1, le=200_000, description="Never more than this many tokens.")] = 2000,
        query: Annotated[str, Field(description="What the next step is about; picks relevant memories.")] = "",
        minimal: Annotated[bool, Field(description="Only summary, state and tail.")] = False,
        ctx: Context | None = None,
    ) -> str:
        """Build a prompt context for a task (summary, state, knowledge, memories, recent messages) under a budget."""
        built = await backend.call(backend.state.BuildContext, state_service_pb2.BuildContextRequest(
            task_id=task_id, token_budget=token_budget, query=query,
            mode=state_pb2.CONTEXT_MODE_MINIMAL if minimal else state_pb2.CONTEXT_MODE_FULL), caller=_caller(ctx))
        return built.text

    @server.resource("taskmem://tasks/{task_id}/state", mime_type="application/yaml",
                     description="The task-state YAML (plan, subtasks, decisions, errors) under 1,500 tokens.")
    async def task_state(task_id: str, ctx: Context) -> str:
        try:
            state = await backend.call(backend.state.GetTaskState, state_service_pb2.GetTaskStateRequest(
                task_id=task_id), caller=_caller(ctx))
        except ToolError as error:
            raise ResourceError(str(error)) from None
        return state.yaml

    @server.resource("taskmem://tasks/{task_id}/plan", mime_type="text/plain",
                     description="The task's current plan: each item's id, status, title and summary.")
    async def task_plan(task_id: str, ctx: Context) -> str:
        try:
            fetched = await backend.call(backend.tasks.GetPlan, task_service_pb2.GetPlanRequest(task_id=task_id),
                                         caller=_caller(ctx))
        except ToolError as error:
            raise ResourceError(str(error)) from None
        return render.plan_text(fetched.plan)

    return server
