"""The clause every read of an item that can expire carries (core/retention.py): memory entries, messages
and episodes are gone from the instant they expire, whether or not maintenance has deleted them yet."""

from __future__ import annotations

from typing import Any

from taskmem.core.ids import now_us


def unexpired_sql(alias: str = "") -> tuple[str, list[Any]]:
    """The clause over `alias`.expires_at (the bare column without an alias), and its parameter: now."""
    column = f"{alias}.expires_at" if alias else "expires_at"
    return f"({column} IS NULL OR {column} > ?)", [now_us()]
