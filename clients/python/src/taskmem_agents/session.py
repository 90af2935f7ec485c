"""TaskmemSession: an OpenAI Agents SDK Session kept in a taskmem task's transcript.

    from taskmem_agents import TaskmemSession
    session = TaskmemSession(task_id, address="127.0.0.1:50051")
    result = await Runner.run(agent, "Hello", session=session)

Each item the SDK adds is a message of the task's transcript (user, agent or tool; its readable text), so the
conversation is part of the task's record, events, web view, search and retention, and the item's exact JSON
is kept beside it and returned verbatim. pop_item and clear_session retract items from the session; their
messages stay in the transcript.
"""

from __future__ import annotations

import json
from typing import Any

from agents.items import TResponseInputItem
from agents.memory.session_settings import SessionSettings, resolve_session_limit

from taskmem.v1 import task_pb2, task_service_pb2 as pb
from taskmem_client import TaskmemClient

# A transcript message's longest content (the server's limit).
CONTENT_MAX = 100_000
_ROLES = {"user": task_pb2.MESSAGE_ROLE_USER, "assistant": task_pb2.MESSAGE_ROLE_AGENT,
          "system": task_pb2.MESSAGE_ROLE_SYSTEM, "developer": task_pb2.MESSAGE_ROLE_SYSTEM}


class TaskmemSession:
    """The session of one task: session_id is the task's id. Give an address (and TaskmemClient's other
    arguments) or a client; `for_new_task` creates the task first."""

    def __init__(self, task_id: str, address: str | None = None, *, client: TaskmemClient | None = None,
                 session_settings: SessionSettings | None = None, **client_settings: Any) -> None:
        self.session_id = task_id
        self.session_settings = session_settings
        if client is None:
            if address is not None:
                client_settings["address"] = address
            client = TaskmemClient(**client_settings)
            self._owned = True
        else:
            self._owned = False
        self._client = client

    @classmethod
    async def for_new_task(cls, name: str, address: str | None = None, *, goal: str = "",
                           client: TaskmemClient | None = None, **settings: Any) -> TaskmemSession:
        """A session on a new task (status EXECUTING) named `name`."""
        session = cls("", address, client=client, **settings)
        created = await session._client.tasks.CreateTask(pb.CreateTaskRequest(name=name, goal=goal))
        await session._client.tasks.UpdateTask(pb.UpdateTaskRequest(
            task=task_pb2.Task(id=created.task.id, status=task_pb2.TASK_STATUS_EXECUTING),
            update_mask={"paths": ["status"]}))
        session.session_id = created.task.id
        return session

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The items in order: all, or the newest `limit` (default: session_settings.limit)."""
        wanted = resolve_session_limit(limit, self.session_settings)
        if wanted is not None and wanted <= 0:
            return []
        found = await self._client.tasks.ListSessionItems(pb.ListSessionItemsRequest(
            task_id=self.session_id, limit=wanted or 0))
        return [json.loads(item.item_json) for item in found.items]

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        if not items:
            return
        specs = [_spec(item) for item in items]
        for start in range(0, len(specs), 100):
            await self._client.tasks.AddSessionItems(pb.AddSessionItemsRequest(
                task_id=self.session_id, items=specs[start:start + 100]))

    async def pop_item(self) -> TResponseInputItem | None:
        popped = await self._client.tasks.PopSessionItem(pb.PopSessionItemRequest(task_id=self.session_id))
        return json.loads(popped.item.item_json) if popped.HasField("item") else None

    async def clear_session(self) -> None:
        await self._client.tasks.ClearSessionItems(pb.ClearSessionItemsRequest(task_id=self.session_id))

    async def close(self) -> None:
        """Close the client this session made (a given client is the caller's)."""
        if self._owned:
            await self._client.close()


def _spec(item: TResponseInputItem) -> pb.SessionItemSpec:
    data = dict(item) if not isinstance(item, dict) else item
    role, content = _readable(data)
    text = content.strip() or str(data.get("type") or "item")
    return pb.SessionItemSpec(role=role, content=text[:CONTENT_MAX], item_json=json.dumps(data, ensure_ascii=False))


def _readable(item: dict[str, Any]) -> tuple[int, str]:
    """The transcript role and text of an item: a message's text, a tool call and its arguments, a tool's output."""
    kind = item.get("type")
    if kind in ("function_call", "custom_tool_call"):
        return task_pb2.MESSAGE_ROLE_AGENT, f"calls {item.get('name', '')}({item.get('arguments', item.get('input', ''))})"
    if kind in ("function_call_output", "custom_tool_call_output"):
        return task_pb2.MESSAGE_ROLE_TOOL, _text(item.get("output"))
    if "role" in item:
        return _ROLES.get(str(item["role"]), task_pb2.MESSAGE_ROLE_AGENT), _text(item.get("content"))
    return task_pb2.MESSAGE_ROLE_AGENT, _text(item.get("summary") or item.get("content") or "")


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text(part.get("text") or part.get("refusal") or "") if isinstance(part, dict) else str(part)
                         for part in content)
    return "" if content is None else json.dumps(content, ensure_ascii=False)
