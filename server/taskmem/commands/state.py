"""`taskmem state show ID` (the task-state YAML, now or as of a cursor), `state items ID` (the structured
state), `state history ID` (its versions) and `state diff ID --from CURSOR` (what changed since)."""

from __future__ import annotations

from typing import TextIO

from taskmem.commands.connection import TaskClient
from taskmem.v1 import state_service_pb2 as pb


async def show_task_state(client: TaskClient, out: TextIO, err: TextIO, task_id: str, *, budget: int,
                          as_of_cursor: int | None = None) -> None:
    """The task-state YAML under the budget; what the budget left out goes to stderr, so the YAML pipes clean."""
    request = pb.GetTaskStateRequest(task_id=task_id, token_budget=budget)
    if as_of_cursor is not None:
        request.as_of.cursor = as_of_cursor
    state = await client.state.GetTaskState(request, **client.unary)
    print(state.yaml, end="" if state.yaml.endswith("\n") else "\n", file=out)
    if state.omitted:
        print(f"# {state.token_count}/{state.token_budget} tokens; left out: {', '.join(state.omitted)}", file=err)


async def show_state_items(client: TaskClient, out: TextIO, err: TextIO, task_id: str, *, budget: int,
                           max_items: int) -> None:
    """The current structured-state items, one line each, as RenderState lays them out for a prompt."""
    rendered = await client.state.RenderState(
        pb.RenderStateRequest(task_id=task_id, token_budget=budget, max_items=max_items), **client.unary)
    print(rendered.text.rstrip("\n") or "No current state items.", file=out)
    if rendered.items_omitted:
        print(f"# {rendered.items_omitted} more item{'s' if rendered.items_omitted != 1 else ''} left out"
              f" ({rendered.token_count} tokens shown)", file=err)


async def show_state_history(client: TaskClient, out: TextIO, task_id: str, *, limit: int) -> None:
    """One line per version, newest first: cursor, time (UTC), the event that made it, its correlation id."""
    page = await client.state.GetTaskStateHistory(pb.GetTaskStateHistoryRequest(task_id=task_id, page_size=limit),
                                                  **client.unary)
    for version in page.versions:
        when = version.create_time.ToDatetime().strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        change = version.change.removeprefix("EVENT_TYPE_").lower()
        print(f"{version.cursor}\t{when}\t{change}\t{version.correlation_id}", file=out)


async def show_state_diff(client: TaskClient, out: TextIO, task_id: str, from_cursor: int, to_cursor: int) -> None:
    """The unified diff, or a line saying nothing changed."""
    found = await client.state.DiffTaskState(
        pb.DiffTaskStateRequest(task_id=task_id, from_cursor=from_cursor, to_cursor=to_cursor), **client.unary)
    print(found.diff.rstrip("\n") or f"no change between {from_cursor} and {found.resolved_to_cursor}", file=out)
