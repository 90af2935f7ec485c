"""Write-time extraction: the prompt for the utility model, and reading its reply into checked entries.

Models answer in many shapes: a bare JSON array, the array inside a ```json fence, an
object wrapping it ({"entries": [...]}), prose around it, or an array cut off by the
token limit. parse_candidates takes whatever complete objects it can find; check_candidates
turns each into a NewMemoryEntry or a reason it was dropped.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from taskmem.core.errors import InvalidArgument
from taskmem.core.memory import MemoryType, NewMemoryEntry, check_new_entry

TOOL_RESULT_BUDGET = 4000  # characters of each tool result shown to the model
MODEL_OUTPUT_BUDGET = 16000


@dataclasses.dataclass(frozen=True)
class PromptTemplate:
    system: str
    user: str


@dataclasses.dataclass(frozen=True)
class ToolCall:
    tool_name: str
    arguments: Mapping[str, Any]
    result: str
    error: str = ""


def _cut(text: str, budget: int) -> str:
    return text if len(text) <= budget else text[:budget] + f"\n…[{len(text) - budget} more characters]"


def format_tool_calls(calls: Sequence[ToolCall]) -> str:
    if not calls:
        return "(no tool calls)"
    blocks = []
    for number, call in enumerate(calls, start=1):
        arguments = json.dumps(dict(call.arguments), ensure_ascii=False, sort_keys=True)
        outcome = f"error: {call.error}" if call.error else f"result:\n{_cut(call.result, TOOL_RESULT_BUDGET)}"
        blocks.append(f"{number}. {call.tool_name} {arguments}\n{outcome}")
    return "\n\n".join(blocks)


def render_prompt(template: PromptTemplate, subtask_id: str, calls: Sequence[ToolCall],
                  model_output: str) -> tuple[str, str]:
    """(system, user) messages. Placeholders are replaced in one pass, literally, so braces in the
    inputs (even a placeholder's own name inside a tool result) are left as they are."""
    values = {"{subtask_id}": subtask_id, "{tool_calls_formatted}": format_tool_calls(calls),
              "{model_output}": _cut(model_output, MODEL_OUTPUT_BUDGET) or "(no output)"}
    return template.system, _PLACEHOLDER.sub(lambda match: values[match.group(0)], template.user)


_PLACEHOLDER = re.compile(r"\{subtask_id\}|\{tool_calls_formatted\}|\{model_output\}")


class NoArrayFound(ValueError):
    """The reply holds no JSON array or object at all."""


_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)(?:```|$)", re.DOTALL)


def parse_candidates(reply: str) -> list[Any]:
    """The items of the JSON array in the reply, as far as they can be read.

    Tries, in order: a fenced block, the whole reply, the first '[' onwards. An array cut
    off mid-item yields the complete items before the cut. A lone object is one item, unless
    it wraps an array under some key ({"entries": [...]}). Raises NoArrayFound for prose.
    """
    texts = [match.group(1) for match in _FENCE.finditer(reply)] + [reply]
    for text in texts:
        items = _items_of(text.strip())
        if items is not None:
            return items
    raise NoArrayFound("the reply holds no JSON array of entries")


def _items_of(text: str) -> list[Any] | None:
    decoder = json.JSONDecoder()
    for start in [i for i, ch in enumerate(text) if ch in "[{"][:50]:
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            if text[start] == "[":
                partial = _partial_array(text, start)
                if partial:
                    return partial
            continue
        if isinstance(value, list):
            return value
        if isinstance(value, dict):
            wrapped = next((v for v in value.values() if isinstance(v, list)), None)
            return wrapped if wrapped is not None else [value]
    return None


def _partial_array(text: str, start: int) -> list[Any]:
    """The complete items at the start of an array that is cut off or broken later on."""
    decoder = json.JSONDecoder()
    items: list[Any] = []
    position = start + 1
    while True:
        while position < len(text) and text[position] in " \t\r\n,":
            position += 1
        if position >= len(text) or text[position] == "]":
            return items
        try:
            item, position = decoder.raw_decode(text, position)
        except json.JSONDecodeError:
            return items
        items.append(item)


@dataclasses.dataclass(frozen=True)
class Dropped:
    index: int
    reason: str
    candidate: str


def _labels(value: Any) -> tuple[str, ...]:
    """Tags or relevance_to as a list, or as the comma-separated string the seed's prompt asks for."""
    if value is None or value == "":
        return ()
    if isinstance(value, str):
        return tuple(part for part in (p.strip() for p in value.split(",")) if part)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(v for v in (s.strip() for s in value) if v)
    raise InvalidArgument("tags", "must be a list of strings or a comma-separated string")


def _candidate_entry(item: Any, task_id: str, subtask_id: str) -> NewMemoryEntry:
    if not isinstance(item, dict):
        raise InvalidArgument("entry", f"is a {type(item).__name__}, not an object")
    kind = item.get("type")
    memory_type = MemoryType.from_short(kind) if isinstance(kind, str) else None
    if memory_type is None:
        raise InvalidArgument("type", f"{kind!r} is not one of {', '.join(t.short for t in MemoryType)}")
    summary, detail = item.get("summary", ""), item.get("detail", "")
    if not isinstance(summary, str):
        raise InvalidArgument("summary", "must be a string")
    if not isinstance(detail, str):
        detail = json.dumps(detail, ensure_ascii=False)
    try:
        relevance = _labels(item.get("relevance_to"))
    except InvalidArgument:
        raise InvalidArgument("relevance_to", "must be a list of strings or a comma-separated string") from None
    entry = NewMemoryEntry(task_id=task_id, subtask_id=subtask_id, type=memory_type, summary=summary,
                           detail=detail, tags=_labels(item.get("tags")), relevance_to=relevance,
                           source="extraction")
    return check_new_entry(entry, field="entry")


def check_candidates(items: Sequence[Any], task_id: str, subtask_id: str) -> tuple[list[NewMemoryEntry], list[Dropped]]:
    """The valid entries (for the task and subtask) and the dropped candidates with the reason of each."""
    valid: list[NewMemoryEntry] = []
    dropped: list[Dropped] = []
    for index, item in enumerate(items):
        try:
            valid.append(_candidate_entry(item, task_id, subtask_id))
        except InvalidArgument as error:
            reason = error.message.removeprefix("entry.")
            dropped.append(Dropped(index, reason, json.dumps(item, ensure_ascii=False, default=str)[:1000]))
    return valid, dropped
