"""Nested JSON values for the depth tests: `levels` objects or lists, each the only value of the one around it."""

from __future__ import annotations

from typing import Any


def objects(levels: int, leaf: Any = "leaf") -> Any:
    """{"k": {"k": ... leaf}} with `levels` objects."""
    value = leaf
    for _ in range(levels):
        value = {"k": value}
    return value


def lists(levels: int, leaf: Any = 1) -> Any:
    """[[... leaf]] with `levels` lists."""
    value = leaf
    for _ in range(levels):
        value = [value]
    return value
