"""Store items (issue 39): a framework's namespaced key-value memory, as LangGraph's BaseStore defines it (pure).

A path's labels are kept joined, each followed by U+001F (`path_key`), so every path under a prefix is one
range of keys. Filters and namespace matches follow LangGraph's own stores (langgraph.store.memory): a filter
key names a top-level field of the value; its JSON must equal the field's (an object compares by its own
keys, recursively; a list element by element), or an object of operators $eq $ne $gt $gte $lt $lte must all
hold (ordering operators compare as numbers).
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
from collections.abc import Sequence
from typing import Any

from taskmem.core.errors import InvalidArgument

SEPARATOR = "\x1f"
# 31: an index entry carries a tag per prefix and STORE_TAG, and at most 32 tags.
LABELS_MAX, LABEL_MAX = 31, 256
# The tag every store item's index entry carries, and the prefix of its path tags.
STORE_TAG = "langgraph-store"
_OPERATORS = frozenset({"$eq", "$ne", "$gt", "$gte", "$lt", "$lte"})


class MatchType(enum.StrEnum):
    PREFIX = "prefix"
    SUFFIX = "suffix"


@dataclasses.dataclass(frozen=True)
class StoreItem:
    path: tuple[str, ...]
    key: str
    value_json: str
    created_at: int
    updated_at: int
    expires_at: int | None = None
    ttl_us: int | None = None
    memory_entry_id: str = ""


@dataclasses.dataclass(frozen=True)
class StoreWrite:
    path: tuple[str, ...]
    key: str
    value_json: str  # "": delete
    ttl_us: int | None = None
    index_text: str = ""


def check_path(field: str, labels: Sequence[str], *, allow_empty: bool = False, wildcard: bool = False) -> tuple[str, ...]:
    if not labels and not allow_empty:
        raise InvalidArgument(field, "is required (at least one label)")
    if len(labels) > LABELS_MAX:
        raise InvalidArgument(field, f"has {len(labels)} labels; at most {LABELS_MAX}")
    for position, label in enumerate(labels):
        if not label:
            raise InvalidArgument(f"{field}[{position}]", "is empty")
        if len(label) > LABEL_MAX:
            raise InvalidArgument(f"{field}[{position}]", f"is longer than {LABEL_MAX} characters")
        if "." in label or SEPARATOR in label or "\x00" in label:
            raise InvalidArgument(f"{field}[{position}]", "contains '.', U+001F or NUL")
        if label == "*" and not wildcard:
            raise InvalidArgument(f"{field}[{position}]", "'*' is only a wildcard in a namespace match")
    return tuple(labels)


def path_key(path: Sequence[str]) -> str:
    return "".join(label + SEPARATOR for label in path)


def path_of(key: str) -> tuple[str, ...]:
    return tuple(key.split(SEPARATOR)[:-1])


def prefix_range(prefix: Sequence[str]) -> tuple[str, str] | None:
    """The [low, high) range of path keys under the prefix; None: every path."""
    if not prefix:
        return None
    low = path_key(prefix)
    return low, low[:-1] + chr(ord(SEPARATOR) + 1)


def path_tags(path: Sequence[str]) -> tuple[str, ...]:
    """The tags of an item's index entry: STORE_TAG and one per prefix of its path (hashed: labels may be
    longer than a tag), so a search under a prefix filters by one tag."""
    return (STORE_TAG, *(prefix_tag(path[:depth]) for depth in range(1, len(path) + 1)))


def prefix_tag(prefix: Sequence[str]) -> str:
    if not prefix:
        return STORE_TAG
    return "lgs-" + hashlib.sha256(path_key(prefix).encode()).hexdigest()[:24]


def parse_object(field: str, text: str) -> dict[str, Any]:
    try:
        found = json.loads(text)
    except ValueError as error:
        raise InvalidArgument(field, f"is not JSON: {error}") from None
    if not isinstance(found, dict):
        raise InvalidArgument(field, "is not a JSON object")
    return found


def check_filter(field: str, wanted: dict[str, Any]) -> dict[str, Any]:
    for key, condition in wanted.items():
        if isinstance(condition, dict) and any(k.startswith("$") for k in condition):
            unknown = sorted(set(condition) - _OPERATORS)
            if unknown:
                raise InvalidArgument(f"{field}.{key}", f"unknown operator {unknown[0]!r}; one of {sorted(_OPERATORS)}")
    return wanted


def matches(value: dict[str, Any], wanted: dict[str, Any]) -> bool:
    return all(_compare(value.get(key), condition) for key, condition in wanted.items())


def _compare(value: Any, condition: Any) -> bool:
    if isinstance(condition, dict):
        if any(k.startswith("$") for k in condition):
            return all(_operator(value, op, operand) for op, operand in condition.items())
        return isinstance(value, dict) and all(_compare(value.get(k), v) for k, v in condition.items())
    if isinstance(condition, list):
        return (isinstance(value, list) and len(value) == len(condition)
                and all(_compare(a, b) for a, b in zip(value, condition)))
    return bool(value == condition)


def _operator(value: Any, operator: str, operand: Any) -> bool:
    if operator == "$eq":
        return bool(value == operand)
    if operator == "$ne":
        return bool(value != operand)
    try:
        left, right = float(value), float(operand)
    except (TypeError, ValueError):
        return False  # an ordering against a value that is no number holds for no item
    return {"$gt": left > right, "$gte": left >= right, "$lt": left < right, "$lte": left <= right}[operator]


def path_matches(path: Sequence[str], match_type: MatchType, labels: Sequence[str]) -> bool:
    if len(path) < len(labels):
        return False
    pairs = zip(path, labels) if match_type is MatchType.PREFIX else zip(reversed(path), reversed(labels))
    return all(want == "*" or label == want for label, want in pairs)


def list_namespaces(paths: Sequence[tuple[str, ...]], conditions: Sequence[tuple[MatchType, tuple[str, ...]]],
                    max_depth: int, offset: int, limit: int) -> list[tuple[str, ...]]:
    """The matching paths cut to max_depth (0: whole), distinct, sorted, then paged."""
    kept = {path[:max_depth] if max_depth else path for path in paths
            if all(path_matches(path, match_type, labels) for match_type, labels in conditions)}
    return sorted(kept)[offset:offset + limit]
