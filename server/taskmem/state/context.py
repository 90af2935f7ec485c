"""BuildContext's inputs, read in one go, and their section renderers (core/context_budget assembles them)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from taskmem.core.context_budget import (
    ContextMode, Renderer, Section, assemble_context, fit_lines_body, fit_tail_body, fit_text_body,
)
from taskmem.core.messages import Message
from taskmem.core.state_render import render_state
from taskmem.core.state_records import StoredStateItem
from taskmem.core.task_state_yaml import Fitted, TaskStateView, fit_task_state
from taskmem.core.tokens import TokenCounter

TAIL_MESSAGES = 200


@dataclasses.dataclass
class ContextInputs:
    running_summary: str
    task_state: TaskStateView | None  # None for a standalone thread
    items: list[StoredStateItem]
    knowledge: list[str]  # one line each, most useful first
    memories: list[str]
    messages: list[Message]  # the newest ones, oldest first


def message_line(message: Message) -> str:
    role = message.role.value.removeprefix("MESSAGE_ROLE_").lower()
    return f"{role}: {message.content}"


def build_context(counter: TokenCounter, budget: int, mode: ContextMode, inputs: ContextInputs,
                  max_items: int, fit_state: Callable[[TaskStateView, int], Fitted] | None = None,
                  ) -> tuple[str, list[Section]]:
    """fit_state fits the task state (default: fit_task_state with counter; the engine passes its memo)."""
    def summary(room: int) -> tuple[str, bool, str]:
        if inputs.running_summary:
            return fit_text_body(counter, inputs.running_summary, room, "running summary")
        if inputs.task_state is None:
            return "", False, ""
        if fit_state is None:
            text, _, omitted = fit_task_state(inputs.task_state, counter, room)
        else:
            text, _, omitted = fit_state(inputs.task_state, room)
        return text.rstrip("\n"), bool(omitted), "; ".join(omitted)

    def state(room: int) -> tuple[str, bool, str]:
        text, _, left = render_state(inputs.items, counter, room, max_items)
        return text, left > 0, f"{left} state items" if left else ""

    renderers: dict[str, Renderer] = {
        "summary": summary, "state": state,
        "knowledge": _lines(counter, inputs.knowledge, "knowledge entries"),
        "memories": _lines(counter, inputs.memories, "memories"),
        "tail": lambda room: fit_tail_body(counter, [message_line(m) for m in inputs.messages], room),
    }
    return assemble_context(counter, budget, mode, renderers)


def _lines(counter: TokenCounter, lines: list[str], noun: str) -> Callable[[int], tuple[str, bool, str]]:
    return lambda room: fit_lines_body(counter, lines, room, noun)
