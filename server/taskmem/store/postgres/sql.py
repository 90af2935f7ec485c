"""The store's SQL as PostgreSQL runs it.

The store writes its SQL once, in the portable subset both engines run (row values,
ON CONFLICT … DO UPDATE, RETURNING, substr). What differs is spelled here, once, and
applied to every statement the PostgreSQL engine runs (the result is cached per
statement text):
- parameters: SQLite's `?` marks become psycopg's `%s` (a literal `%` is doubled);
- SQLite planner hints mean nothing to PostgreSQL's planner and are dropped:
  `NOT INDEXED`, and `CROSS JOIN … ON` (SQLite's "join in this order") becomes `JOIN … ON`.
Anything else SQLite-only (FTS5, vec0) lives in engine modules, never here.
"""

from __future__ import annotations

import functools
import re

_HINTS = [(re.compile(r"\s+NOT INDEXED\b"), ""), (re.compile(r"\bCROSS JOIN\b"), "JOIN")]


@functools.lru_cache(maxsize=4096)
def to_postgres(sql: str) -> str:
    for pattern, replacement in _HINTS:
        sql = pattern.sub(replacement, sql)
    return sql.replace("%", "%%").replace("?", "%s")
