"""Learned patterns: (type, key) pairs seen again and again, counted."""

from __future__ import annotations

import dataclasses
from typing import Any


@dataclasses.dataclass(frozen=True)
class Pattern:
    namespace: str
    id: str
    pattern_type: str
    pattern_key: str
    data: dict[str, Any]
    frequency: int
    created_at: int
    last_seen: int
