"""`taskmem state show ID` (the task-state YAML) and `taskmem state items ID` (the structured state)."""

from __future__ import annotations

from typing import TextIO

from taskmem.commands.connection import TaskClient
from taskmem.v1 import state_service_pb2 as pb


async def show_task_state(client: TaskClient, out: TextIO, err: TextIO, task_id: str, *, budget: int) -> None:
    """The task-state YAML under the budget; what the budget left out goes to stderr, so the YAML pipes clean."""
    state = await client.state.GetTaskState(pb.GetTaskStateRequest(task_id=task_id, token_budget=budget),
                                            **client.unary)
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
