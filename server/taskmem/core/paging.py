"""Opaque page tokens (AIP-158): the last row's sort key, bound to the filter that made it."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from taskmem.core.errors import InvalidArgument

T = TypeVar("T")

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 500


def page_size(requested: int) -> int:
    if requested < 0:
        raise InvalidArgument("page_size", "must not be negative")
    if requested > MAX_PAGE_SIZE:
        raise InvalidArgument("page_size", f"at most {MAX_PAGE_SIZE}")
    return requested or DEFAULT_PAGE_SIZE


def _fingerprint(filter_key: Any) -> str:
    return hashlib.sha256(json.dumps(filter_key, sort_keys=True, default=str).encode()).hexdigest()[:16]


def encode_token(last_key: list[Any], filter_key: Any) -> str:
    raw = json.dumps({"k": last_key, "f": _fingerprint(filter_key)}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_token(token: str, filter_key: Any, kinds: Sequence[type]) -> list[Any] | None:
    """The sort key after which the next page starts, of the types `kinds` (the shape the list issues);
    None for the first page."""
    if not token:
        return None
    try:
        raw = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        key, fingerprint = raw["k"], raw["f"]
    except (ValueError, KeyError, TypeError):
        raise InvalidArgument("page_token", "not a token this server issued") from None
    if fingerprint != _fingerprint(filter_key):
        raise InvalidArgument("page_token", "was issued for a different filter")
    # A token of the right filter but another shape was made by hand: it must not reach a query.
    if not isinstance(key, list) or len(key) != len(kinds) or not all(
            isinstance(value, kind) and not isinstance(value, bool) for value, kind in zip(key, kinds)):
        raise InvalidArgument("page_token", "not a token this server issued")
    return key


def page_of(rows: list[T], size: int, sort_key: Callable[[T], list[Any]], filter_key: Any) -> tuple[list[T], str]:
    """The page (rows were fetched with limit size + 1) and the token of the next one ("" on the last)."""
    if len(rows) <= size:
        return rows, ""
    return rows[:size], encode_token(sort_key(rows[size - 1]), filter_key)
