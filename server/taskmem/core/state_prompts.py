"""Prompts for the utility model (state extraction, running summary, live query) and reading its answers."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from taskmem.core.errors import ModelOutputInvalid
from taskmem.core.messages import Message
from taskmem.core.state_items import Candidate, StateItem

EXTRACTION_SYSTEM = """You are a structured state extractor. Given conversation messages and existing state, extract new/updated items.

Types: decision, constraint, action, question, risk. DO NOT invent new item types.

Each item: {"type_tag", "text", "status", "confidence", "topic_tags": [], "refs": [], "supersedes": uid or null, "conflict": bool}

Rules:
- Only concrete, specific items. No vague observations.
- Reference existing items by UID. Do NOT repeat unchanged items.
- Only output NEW items or updates (supersede/conflict) supported by the new messages.
- refs must be message IDs from the provided transcript only. Never invent IDs.
- topic_tags: 1-3 short labels max.
- Mark supersedes ONLY with explicit change language (instead, replaced, switched, changed to, no longer).
- Otherwise set conflict=true for tensions.
- Return ONLY a JSON array. No prose. No markdown fences.

Examples:
Given:
[msg_a1] user: Let's use Redis for caching
[msg_a2] assistant: OK
-> [{"type_tag":"decision","text":"Use Redis for caching","status":"active","confidence":"high","topic_tags":["caching"],"refs":["msg_a1","msg_a2"],"supersedes":null,"conflict":false}]
Given:
[msg_b1] user: Let's switch to Memcached instead of Redis
Existing: [d_abc123] decision (active): Use Redis for caching
-> [{"type_tag":"decision","text":"Use Memcached for caching instead of Redis","status":"active","confidence":"high","topic_tags":["caching"],"refs":["msg_b1"],"supersedes":"d_abc123","conflict":false}]"""


def role_word(message: Message) -> str:
    word = message.role.value.removeprefix("MESSAGE_ROLE_").lower()
    return "assistant" if word == "agent" else word


def extraction_user_prompt(existing: Sequence[StateItem], batch: Sequence[Message]) -> str:
    lines = ["## Existing State (reference by UID — do NOT repeat unchanged items)"]
    lines.extend(f"[{i.uid}] {i.type_tag} ({i.status}): {i.text}" for i in existing)
    if not existing:
        lines.append("(none)")
    lines.append("")
    lines.append("## New messages")
    lines.extend(f"[{m.id}] {role_word(m)}: {m.content}" for m in batch)
    return "\n".join(lines)


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def parse_candidates(answer: str, source: str = "extraction") -> list[Candidate]:
    """The JSON array of candidate items in a model's answer (fenced or wrapped in prose is tolerated).

    Raises ModelOutputInvalid when no JSON array can be read; entries that are not objects are skipped
    (validation drops bad objects later, with reasons)."""
    data = _json_array(answer)
    found = []
    for entry in data:
        if not isinstance(entry, dict):
            continue
        found.append(Candidate(
            type_tag=str(entry.get("type_tag") or entry.get("type") or ""), text=str(entry.get("text") or ""),
            status=str(entry.get("status") or ""), confidence=str(entry.get("confidence") or ""),
            topic_tags=tuple(str(t) for t in _list(entry.get("topic_tags"))),
            refs=tuple(str(r) for r in _list(entry.get("refs"))),
            supersedes=str(entry["supersedes"]) if entry.get("supersedes") else None,
            conflict=entry.get("conflict") is True, source=source))
    return found


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _json_array(answer: str) -> list[Any]:
    attempts = [answer.strip(), *(m.strip() for m in _FENCE.findall(answer))]
    start, end = answer.find("["), answer.rfind("]")
    if 0 <= start < end:
        attempts.append(answer[start:end + 1])
    for text in attempts:
        try:
            data = json.loads(text)
        except ValueError:
            continue
        if isinstance(data, list):
            return data
    raise ModelOutputInvalid(f"the model's answer is not a JSON array: {answer[:200]!r}")


SUMMARY_SYSTEM = ("You keep a running summary of an agent's task. Write a concise summary of: 1. which plan "
                  "steps are completed, 2. what step is in progress, 3. blockers or issues noted, 4. key details "
                  "(versions, URLs, file paths) worth remembering. Be concise: 3-5 sentences.")


def summary_user_prompt(task_line: str, plan_lines: Sequence[str], previous: str,
                        messages: Sequence[Message]) -> str:
    parts = [task_line, "Plan:", *plan_lines, "", "Previous summary:", previous or "None.", "",
             "Messages since the previous summary:"]
    parts.extend(f"[{m.id}] {role_word(m)}: {m.content}" for m in messages)
    return "\n".join(parts)


QUERY_SYSTEM = "You answer questions about an agent's task from its record. Answer concisely and only from the record."


def query_user_prompt(task_line: str, plan_lines: Sequence[str], summary: str, messages: Sequence[Message],
                      question: str, state_lines: Sequence[str] = ()) -> str:
    """state_lines: the reconciled state (active decisions, constraints, open questions, waits); it is
    current where an older summary disagrees (a decision retired since is not in it)."""
    parts = [task_line, "Plan:", *plan_lines, ""]
    if state_lines:
        parts += ["Current state (overrides the summary where they disagree):", *state_lines, ""]
    parts += ["Summary:", summary or "No summary yet.", "", "Recent updates since summary:"]
    parts.extend([f"[{m.id}] {role_word(m)}: {m.content}" for m in messages] or ["None."])
    parts.extend(["", f"Question: {question}", "", "Answer concisely."])
    return "\n".join(parts)
