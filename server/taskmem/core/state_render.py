"""RenderState's compact rendering of structured state: one line per item, a freshness header, a budget.

    State (updated: 2026-02-16T15:42Z, items: 12)
    [d_abc123def456] DECISION (active) auth: Use OAuth2 PKCE flow [refs:2]
    [q_mno345abc012] QUESTION (open, low) arch: Cache embeddings client-side? [refs:1] CONFLICT
    QUESTION DECISION does [d_6f5e4d3c2b1a] Use Memcached replace [d_1a2b3c4d5e6f] Use Redis, stand beside it, or say the same?

Items linked by an open question (core/open_conflicts) are one QUESTION line, the question naming each
side, first of all; a single CONFLICT mark ends the line of an item flagged with no rival named.

Works on any item with these field names (uid, text, type_tag, status, confidence, topic_tags, refs,
conflict, conflict_with, pinned, last_seen_at, updated_at); enum values and plain strings both render
as their lower-case word.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from typing import Any

from taskmem.core.open_conflicts import OpenConflict, flagged_alone, split_conflicts
from taskmem.core.tokens import TokenCounter

TYPE_PRIORITY = {"decision": 0, "constraint": 1, "action": 2, "risk": 3, "question": 4}
CONFIDENCE_PRIORITY = {"high": 0, "medium": 1, "low": 2}
_PREFIXES = ("STATE_ITEM_TYPE_", "STATE_ITEM_STATUS_", "STATE_ITEM_CONFIDENCE_")


def word(value: Any) -> str:
    """An enum member or a string as its lower-case word: STATE_ITEM_STATUS_OPEN → open."""
    text = str(getattr(value, "value", value))
    for prefix in _PREFIXES:
        text = text.removeprefix(prefix)
    return text.lower()


def render_order(items: Sequence[Any]) -> list[Any]:
    """Pinned first, then type (decision > constraint > action > risk > question), confidence, newest seen."""
    return sorted(items, key=lambda i: (
        not i.pinned, TYPE_PRIORITY.get(word(i.type_tag), 9), CONFIDENCE_PRIORITY.get(word(i.confidence), 1),
        -(i.last_seen_at or 0), i.uid))


def render_item_line(item: Any) -> str:
    status = word(item.status)
    if word(item.confidence) == "low":
        status += ", low"
    topic = f" {item.topic_tags[0]}:" if item.topic_tags else ""
    line = f"[{item.uid}] {word(item.type_tag).upper()} ({status}){topic} {item.text} [refs:{len(item.refs)}]"
    return line + " CONFLICT" if flagged_alone(item) else line


def render_conflict_line(conflict: OpenConflict[Any]) -> str:
    kinds = "/".join(dict.fromkeys(word(item.type_tag).upper() for item in conflict.items))
    return f"QUESTION {kinds} {conflict.question()}"


def _minute(us: int) -> str:
    return datetime.datetime.fromtimestamp(us // 1_000_000, datetime.UTC).strftime("%Y-%m-%dT%H:%MZ")


def render_header(items: Sequence[Any]) -> str:
    newest = max((max(getattr(i, "updated_at", 0) or 0, i.last_seen_at or 0) for i in items), default=0)
    return f"State (updated: {_minute(newest)}, items: {len(items)})"


def render_state(items: Sequence[Any], counter: TokenCounter, budget: int,
                 max_items: int) -> tuple[str, int, int]:
    """(text, items rendered, items left out). Empty text when there is no item or not even the header fits.
    Open questions come first; max_items counts the items a question line names."""
    if not items:
        return "", 0, 0
    plain, conflicts = split_conflicts(render_order(items))
    lines = [(render_conflict_line(c), len(c.items)) for c in conflicts] + [(render_item_line(i), 1) for i in plain]
    shown: list[tuple[str, int]] = []
    room = max_items
    for line, count in lines:
        if count > room:
            break
        shown.append((line, count))
        room -= count
    text, kept = counter.fit_lines([line for line, _ in shown], budget, header=render_header(items))
    rendered = sum(count for _, count in shown[:kept])
    return text, rendered, len(items) - rendered
