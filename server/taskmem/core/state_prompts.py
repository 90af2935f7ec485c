"""Prompts for the utility model (state extraction, reconciliation adjudication, running summary, live query) and
reading its answers."""

from __future__ import annotations

import dataclasses
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


ADJUDICATION_SYSTEM = """You settle open questions of a task-memory service. Its state holds items (decision, constraint, action, question, risk). A new item B was just recorded near an existing item A of the same type, and nothing certain said how the two relate.

For each question decide exactly one answer:
- "replaces": B replaces A. A no longer holds: someone changed their mind, a value was changed, or B settles or refutes what A said.
- "stands_beside": B and A are two different items that both hold: another subject, object, scope, place, time or measure, or an addition.
- "same": B says the same as A, in other words (a restatement, perhaps with detail that changes nothing).
- "unsure": the texts do not tell; a person will be asked.

You are shown what the service saw: A's text, B's text, who said B ("said_by": user, agent, document or tool) and the words of the message behind B ("message", when there is one). The user's own words weigh most: a user who asks for a new value replaces the old one; a user who adds something ("also", "too") keeps both.

Rules:
- "reason": at most 15 words.
- Answer every question once, by its "id".
- Return ONLY a JSON array, one object per question: {"id": <id>, "answer": "replaces"|"stands_beside"|"same"|"unsure", "reason": "<short>"}. No prose. No markdown fences.

Example:
Questions:
[{"id": 0, "type": "decision", "A": "Cache sessions in Redis", "B": "Cache sessions in Memcached", "said_by": "user", "message": "Redis keeps falling over, let's go with Memcached."}]
-> [{"id": 0, "answer": "replaces", "reason": "the user moves the session cache to Memcached"}]"""


@dataclasses.dataclass(frozen=True)
class AdjudicationQuestion:
    """One open question put to the model: A (the existing item) and B (the candidate), who said B and the
    words of the message behind it."""

    id: int
    type_tag: str
    existing_uid: str
    existing: str
    candidate: str
    said_by: str
    message: str = ""


@dataclasses.dataclass(frozen=True)
class AdjudicationAnswer:
    """The model's answer to one question, as given (checked when it is applied)."""

    id: int
    answer: str
    reason: str


def adjudication_user_prompt(questions: Sequence[AdjudicationQuestion]) -> str:
    """The questions as one JSON array (one model call for a whole reconcile batch)."""
    return "Questions:\n" + json.dumps([
        {"id": q.id, "type": q.type_tag, "A": q.existing, "B": q.candidate, "said_by": q.said_by,
         **({"message": q.message} if q.message else {})}
        for q in questions], ensure_ascii=False)


REASON_CHARS = 200


def parse_adjudications(answer: str, asked: Sequence[AdjudicationQuestion]) -> dict[int, AdjudicationAnswer]:
    """The answers to the questions asked, by id. An entry that is not an object, names no question asked,
    answers one a second time, or has no answer word is left out (that question stays open). One question
    asked and a bare answer word given ("replaces") reads as its answer. Raises ModelOutputInvalid when
    nothing can be read."""
    ids = {q.id for q in asked}
    words = re.findall(r"\b(replaces|stands_beside|same|unsure)\b", answer.lower())
    if len(asked) == 1 and words and "[" not in answer:
        return {asked[0].id: AdjudicationAnswer(asked[0].id, words[0], "")}
    found: dict[int, AdjudicationAnswer] = {}
    for entry in _json_array(answer):
        if not isinstance(entry, dict):
            continue
        raw_id, said = entry.get("id"), entry.get("answer", entry.get("outcome"))
        if isinstance(raw_id, bool) or not isinstance(raw_id, (int, str)) or not isinstance(said, str):
            continue
        try:
            number = int(raw_id)
        except ValueError:
            continue
        if number in ids and number not in found:
            found[number] = AdjudicationAnswer(number, said.strip().lower().replace(" ", "_"),
                                               str(entry.get("reason") or "")[:REASON_CHARS])
    return found
