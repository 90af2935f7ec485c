"""StateService: a translating servicer over the state engine (its data plane): validate the request, call
the engine, convert the result. Locks, transactions, events and idempotent writes live in the engine."""

from __future__ import annotations

from typing import Any

import grpc

from taskmem.api import state_convert as sconvert
from taskmem.api import task_convert, validate
from taskmem.api.idempotent import request_once
from taskmem.api.list_page import SortKey, list_page
from taskmem.api.scope import current_scope
from taskmem.core.context_budget import ContextMode
from taskmem.core.errors import InvalidArgument
from taskmem.core.model_routing import ModelTier
from taskmem.core.open_conflicts import Answer
from taskmem.core.state_items import VALID_STATUSES, StateItemType
from taskmem.core.state_notes import DECISION_KIND, ERROR_KIND
from taskmem.core.state_records import StoredStateItem
from taskmem.core.state_render import render_order, render_state
from taskmem.core.valid_time import StateVersion
from taskmem.core.working_memory import WorkingMemory
from taskmem.state.engine import StateEngine, Statement
from taskmem.v1 import state_pb2, state_service_pb2 as pb, state_service_pb2_grpc

DEFAULT_TASK_STATE_BUDGET, DEFAULT_RENDER_BUDGET, BUDGET_MAX, CONTEXT_BUDGET_MAX = 1500, 1000, 100_000, 200_000
DECISION_MAX, DETAIL_MAX, RESOLUTION_MAX, QUESTION_MAX = 300, 100_000, 1_000, 2_000
CANDIDATES_MAX, CANDIDATE_TEXT_MAX, REFS_MAX, TAGS_MAX, QUERY_MAX = 25, 1_000, 100, 10, 2_000
PLAN_TEXT_MAX, LIST_MAX, LINE_MAX = 20_000, 200, 2_000


def thread_of(task_id: str, thread_id: str) -> tuple[str, str]:
    """(thread id, task id or "") of a request naming one of the two."""
    validate.identifier("task_id", task_id, required=False)
    validate.identifier("thread_id", thread_id, required=False)
    if not task_id and not thread_id:
        raise InvalidArgument("task_id", "either task_id or thread_id is required")
    if task_id and thread_id and task_id != thread_id:
        raise InvalidArgument("thread_id", "a task's thread id is its task id; send one of the two")
    return task_id or thread_id, task_id


def _candidates(request: pb.UpsertStateItemsRequest) -> list[Any]:
    validate.count("items", request.items, CANDIDATES_MAX, required=True)
    found = []
    for n, c in enumerate(request.items):
        at = f"items[{n}]"
        if not c.type:
            raise InvalidArgument(f"{at}.type", "is required")
        validate.enum(f"{at}.type", c.type, state_pb2.StateItemType, _WireType)
        validate.enum(f"{at}.status", c.status, state_pb2.StateItemStatus, _WireStatus)
        validate.enum(f"{at}.confidence", c.confidence, state_pb2.StateItemConfidence, _WireConfidence)
        validate.text(f"{at}.text", c.text, CANDIDATE_TEXT_MAX, required=True)
        validate.count(f"{at}.refs", c.refs, REFS_MAX)
        for ref in c.refs:
            validate.identifier(f"{at}.refs", ref)
        validate.count(f"{at}.topic_tags", c.topic_tags, TAGS_MAX)
        for tag in c.topic_tags:
            validate.text(f"{at}.topic_tags", tag, 64)
        validate.identifier(f"{at}.supersedes", c.supersedes, required=False)
        found.append(sconvert.candidate(c))
    return found


def _enum_of(wrapper: Any) -> Any:
    import enum
    return enum.StrEnum(wrapper.DESCRIPTOR.name, {name: name for name in wrapper.keys()})


_WireType = _enum_of(state_pb2.StateItemType)
_WireStatus = _enum_of(state_pb2.StateItemStatus)
_WireConfidence = _enum_of(state_pb2.StateItemConfidence)
_WireMode = _enum_of(state_pb2.ContextMode)
_ANSWERS = {pb.QUESTION_ANSWER_REPLACES: Answer.REPLACES, pb.QUESTION_ANSWER_STANDS_BESIDE: Answer.STANDS_BESIDE,
            pb.QUESTION_ANSWER_SAME: Answer.SAME}
ANSWERED_BY_MAX = 64


class StateService(state_service_pb2_grpc.StateServiceServicer):
    """Translates between protobuf and the state engine: validate, call the engine, convert."""

    def __init__(self, engine: StateEngine) -> None:
        self._engine = engine

    # --- task state (layer 1) -------------------------------------------------------------------

    async def GetTaskState(self, request: pb.GetTaskStateRequest,
                           context: grpc.aio.ServicerContext) -> pb.GetTaskStateResponse:
        task_id = validate.identifier("task_id", request.task_id)
        budget = validate.non_negative("token_budget", request.token_budget, BUDGET_MAX) or DEFAULT_TASK_STATE_BUDGET
        as_of = validate.as_of("as_of", request.as_of, request.HasField("as_of"))
        text, view, omitted = await self._engine.task_state(current_scope().namespace, task_id, budget, as_of)
        return pb.GetTaskStateResponse(yaml=text, state=sconvert.task_state(view),
                                       token_count=self._engine.counter.count(text), token_budget=budget,
                                       omitted=omitted)

    async def AddDecision(self, request: pb.AddDecisionRequest,
                          context: grpc.aio.ServicerContext) -> pb.AddDecisionResponse:
        task_id = validate.identifier("task_id", request.task_id)
        statement = Statement(DECISION_KIND, validate.text("text", request.text, DECISION_MAX, required=True),
                              validate.identifier("subtask_id", request.subtask_id, required=False),
                              validate.text("detail", request.detail, DETAIL_MAX),
                              validate.identifier("supersedes", request.supersedes, required=False))
        scope = current_scope()
        return await self._engine.add_statement(scope.namespace, scope.correlation_id, task_id, statement,
                                                sconvert.decision_added, request_once(request, pb.AddDecisionResponse))

    async def AddError(self, request: pb.AddErrorRequest, context: grpc.aio.ServicerContext) -> pb.AddErrorResponse:
        task_id = validate.identifier("task_id", request.task_id)
        statement = Statement(ERROR_KIND, validate.text("error", request.error, DECISION_MAX, required=True),
                              validate.identifier("subtask_id", request.subtask_id, required=False),
                              validate.text("resolution", request.resolution, RESOLUTION_MAX))
        scope = current_scope()
        return await self._engine.add_statement(scope.namespace, scope.correlation_id, task_id, statement,
                                                sconvert.error_added, request_once(request, pb.AddErrorResponse))

    # --- structured state -----------------------------------------------------------------------

    async def ExtractState(self, request: pb.ExtractStateRequest,
                           context: grpc.aio.ServicerContext) -> pb.ExtractStateResponse:
        thread_id, task_id = thread_of(request.task_id, request.thread_id)
        scope = current_scope()
        done = await self._engine.extract(scope.namespace, scope.correlation_id, thread_id, task_id)
        return pb.ExtractStateResponse(report=sconvert.report(done.report),
                                       items=[sconvert.state_item(i) for i in done.items])

    async def UpsertStateItems(self, request: pb.UpsertStateItemsRequest,
                               context: grpc.aio.ServicerContext) -> pb.UpsertStateItemsResponse:
        thread_id, task_id = thread_of(request.task_id, request.thread_id)
        candidates = _candidates(request)
        scope = current_scope()
        return await self._engine.upsert_items(scope.namespace, scope.correlation_id, thread_id, task_id, candidates,
                                               sconvert.upserted, request_once(request, pb.UpsertStateItemsResponse))

    async def ListStateItems(self, request: pb.ListStateItemsRequest,
                             context: grpc.aio.ServicerContext) -> pb.ListStateItemsResponse:
        thread_id, task_id = thread_of(request.task_id, request.thread_id)
        validate.count("types", request.types, validate.ENUM_FILTER_MAX)
        types = [sconvert.type_word(t) for t in dict.fromkeys(request.types) if validate.enum(
            "types", t, state_pb2.StateItemType, _WireType)]
        as_of = validate.as_of("as_of", request.as_of, request.HasField("as_of"))
        namespace = current_scope().namespace

        async def read(after: list[Any] | None, limit: int) -> list[StoredStateItem]:
            # In render order, which is not a key order: the page starts after the token's item.
            ordered = render_order(await self._engine.list_items(namespace, thread_id, task_id, types,
                                                                 request.include_superseded, as_of))
            start = 0
            if after is not None:
                start = next((n + 1 for n, item in enumerate(ordered) if item.uid == after[0]), len(ordered))
            return ordered[start:start + limit]

        page, token = await list_page(request, [thread_id, sorted(types), request.include_superseded,
                                                request.as_of.SerializeToString().hex()],
                                      SortKey((str,), lambda i: [i.uid]), read)
        return pb.ListStateItemsResponse(items=[sconvert.state_item(i) for i in page], next_page_token=token)

    async def RenderState(self, request: pb.RenderStateRequest,
                          context: grpc.aio.ServicerContext) -> pb.RenderStateResponse:
        thread_id, task_id = thread_of(request.task_id, request.thread_id)
        budget = validate.non_negative("token_budget", request.token_budget, BUDGET_MAX) or DEFAULT_RENDER_BUDGET
        max_items = (validate.non_negative("max_items", request.max_items, 10_000)
                     or self._engine.settings.max_active_items)
        items = await self._engine.current_items(current_scope().namespace, thread_id, task_id)
        text, rendered, omitted = render_state(items, self._engine.counter, budget, max_items)
        return pb.RenderStateResponse(text=text, token_count=self._engine.counter.count(text),
                                      items_rendered=rendered, items_omitted=omitted)

    async def ExpandStateItem(self, request: pb.ExpandStateItemRequest,
                              context: grpc.aio.ServicerContext) -> pb.ExpandStateItemResponse:
        thread_id, task_id = thread_of(request.task_id, request.thread_id)
        uid = validate.identifier("uid", request.uid)
        item, messages = await self._engine.expand_item(current_scope().namespace, thread_id, task_id, uid)
        return pb.ExpandStateItemResponse(item=sconvert.state_item(item),
                                          messages=[task_convert.message(m) for m in messages])

    async def PinStateItem(self, request: pb.PinStateItemRequest,
                           context: grpc.aio.ServicerContext) -> pb.PinStateItemResponse:
        thread_id, task_id = thread_of(request.task_id, request.thread_id)
        uid = validate.identifier("uid", request.uid)
        scope = current_scope()
        return await self._engine.change_item(
            scope.namespace, scope.correlation_id, thread_id, task_id, uid, pinned=request.pinned,
            respond=lambda item: pb.PinStateItemResponse(item=sconvert.state_item(item)),
            once=request_once(request, pb.PinStateItemResponse))

    async def SetStateItemStatus(self, request: pb.SetStateItemStatusRequest,
                                 context: grpc.aio.ServicerContext) -> pb.SetStateItemStatusResponse:
        thread_id, task_id = thread_of(request.task_id, request.thread_id)
        uid = validate.identifier("uid", request.uid)
        if not validate.enum("status", request.status, state_pb2.StateItemStatus, _WireStatus):
            raise InvalidArgument("status", "is required")
        status = sconvert.status_word(request.status)
        allowed = VALID_STATUSES[StateItemType(_type_of_uid(uid))] if _type_of_uid(uid) else None
        if allowed is not None and status not in allowed:
            raise InvalidArgument("status", f"a {_type_of_uid(uid)} may be {', '.join(sorted(allowed))}")
        scope = current_scope()
        return await self._engine.change_item(
            scope.namespace, scope.correlation_id, thread_id, task_id, uid, status=status,
            respond=lambda item: pb.SetStateItemStatusResponse(item=sconvert.state_item(item)),
            once=request_once(request, pb.SetStateItemStatusResponse))

    async def AnswerQuestion(self, request: pb.AnswerQuestionRequest,
                             context: grpc.aio.ServicerContext) -> pb.AnswerQuestionResponse:
        thread_id, task_id = thread_of(request.task_id, request.thread_id)
        new_uid = validate.identifier("new_uid", request.new_uid)
        old_uid = validate.identifier("old_uid", request.old_uid)
        if new_uid == old_uid:
            raise InvalidArgument("old_uid", "must name another item than new_uid")
        answer = _ANSWERS.get(request.answer)
        if answer is None:
            raise InvalidArgument("answer", "is required: QUESTION_ANSWER_REPLACES, _STANDS_BESIDE or _SAME"
                                  if request.answer == 0 else f"unknown value {request.answer}")
        by = validate.text("answered_by", request.answered_by, ANSWERED_BY_MAX).strip() or "agent"
        scope = current_scope()
        return await self._engine.answer_question(
            scope.namespace, scope.correlation_id, thread_id, task_id, new_uid, old_uid, answer, by,
            respond=lambda items: pb.AnswerQuestionResponse(items=[sconvert.state_item(i) for i in items]),
            once=request_once(request, pb.AnswerQuestionResponse))

    # --- working memory -------------------------------------------------------------------------

    async def GetWorkingMemory(self, request: pb.GetWorkingMemoryRequest,
                               context: grpc.aio.ServicerContext) -> pb.GetWorkingMemoryResponse:
        agent_id = validate.identifier("agent_id", request.agent_id)
        memory = await self._engine.working_memories.get(current_scope().namespace, agent_id)
        return pb.GetWorkingMemoryResponse(working_memory=sconvert.working_memory(memory))

    async def PutWorkingMemory(self, request: pb.PutWorkingMemoryRequest,
                               context: grpc.aio.ServicerContext) -> pb.PutWorkingMemoryResponse:
        w = request.working_memory
        validate.count("working_memory.active_constraints", w.active_constraints, 100)
        validate.count("working_memory.scratchpad", w.scratchpad, LIST_MAX)
        memory = WorkingMemory(
            agent_id=validate.identifier("working_memory.agent_id", w.agent_id),
            current_plan=validate.text("working_memory.current_plan", w.current_plan, PLAN_TEXT_MAX),
            active_constraints=[validate.text("working_memory.active_constraints", c, RESOLUTION_MAX)
                                for c in w.active_constraints],
            task_context=validate.struct("working_memory.task_context", w.task_context, w.HasField("task_context")),
            scratchpad=[validate.text("working_memory.scratchpad", note, LINE_MAX) for note in w.scratchpad])
        scope = current_scope()
        stored = await self._engine.working_memories.put(scope.namespace, scope.correlation_id, memory, w.etag)
        return pb.PutWorkingMemoryResponse(working_memory=sconvert.working_memory(stored))

    # --- one call for the prompt, and the live query --------------------------------------------

    async def BuildContext(self, request: pb.BuildContextRequest,
                           context: grpc.aio.ServicerContext) -> pb.BuildContextResponse:
        thread_id, task_id = thread_of(request.task_id, request.thread_id)
        if request.token_budget <= 0:
            raise InvalidArgument("token_budget", "is required and must be more than 0")
        budget = validate.non_negative("token_budget", request.token_budget, CONTEXT_BUDGET_MAX)
        validate.enum("mode", request.mode, state_pb2.ContextMode, _WireMode)
        mode = ContextMode.MINIMAL if request.mode == state_pb2.CONTEXT_MODE_MINIMAL else ContextMode.FULL
        query = validate.text("query", request.query, QUERY_MAX)
        as_of = validate.as_of("as_of", request.as_of, request.HasField("as_of"))
        text, sections = await self._engine.build_context(current_scope().namespace, thread_id, task_id, budget,
                                                          mode, query, as_of)
        return pb.BuildContextResponse(text=text, token_count=self._engine.counter.count(text), sections=[
            state_pb2.ContextSection(name=s.name, allowed_tokens=s.allowed, used_tokens=s.used,
                                     truncated=s.truncated, omitted=s.omitted) for s in sections])

    async def QueryTask(self, request: pb.QueryTaskRequest,
                        context: grpc.aio.ServicerContext) -> pb.QueryTaskResponse:
        task_id = validate.identifier("task_id", request.task_id)
        question = validate.text("question", request.question, QUESTION_MAX, required=True)
        model = validate.enum("model", request.model, state_pb2.ModelTier, ModelTier)
        answer = await self._engine.query_task(current_scope().namespace, task_id, question, model)
        return pb.QueryTaskResponse(answer=answer.answer, from_model=answer.from_model, note=answer.note,
                                    running_summary=answer.running_summary,
                                    messages_since_summary=answer.messages_since_summary,
                                    answered_by=answer.answered_by.value if answer.answered_by else None,
                                    answered_by_model=answer.answered_by_model, fell_back=answer.fell_back)

    # --- history (issue 29) ---------------------------------------------------------------------

    async def GetTaskStateHistory(self, request: pb.GetTaskStateHistoryRequest,
                                  context: grpc.aio.ServicerContext) -> pb.GetTaskStateHistoryResponse:
        task_id = validate.identifier("task_id", request.task_id)
        namespace = current_scope().namespace

        async def read(after: list[Any] | None, limit: int) -> list[StateVersion]:
            return await self._engine.state_history(namespace, task_id, after[0] if after else None, limit)

        page, token = await list_page(request, [task_id], SortKey((int,), lambda v: [v.cursor]), read)
        return pb.GetTaskStateHistoryResponse(versions=[sconvert.version(v) for v in page], next_page_token=token)

    async def DiffTaskState(self, request: pb.DiffTaskStateRequest,
                            context: grpc.aio.ServicerContext) -> pb.DiffTaskStateResponse:
        task_id = validate.identifier("task_id", request.task_id)
        from_cursor = validate.non_negative("from_cursor", request.from_cursor)
        to_cursor = validate.non_negative("to_cursor", request.to_cursor)
        found = await self._engine.state_diff(current_scope().namespace, task_id, from_cursor, to_cursor)
        return pb.DiffTaskStateResponse(diff=found.diff, from_yaml=found.from_yaml, to_yaml=found.to_yaml,
                                        resolved_to_cursor=found.to_cursor)


def _type_of_uid(uid: str) -> str:
    prefixes = {"d_": "decision", "c_": "constraint", "a_": "action", "q_": "question", "r_": "risk"}
    return prefixes.get(uid[:2], "")

