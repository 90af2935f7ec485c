"""A SQLite connection confined to aiosqlite's thread, taking whole functions from the event loop.

aiosqlite's public calls hop to its thread once per statement; a mutation of five
statements then costs five round trips through the event loop. Handing each whole
read, and each whole group-commit batch, to the connection's thread as one function
costs one round trip, which is what lets many small writes approach the speed of a
bare RPC. aiosqlite offers that only as Connection._execute (the primitive every one
of its own calls goes through), so the pinned version in pyproject.toml matters.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import aiosqlite
import sqlean as sqlite3

T = TypeVar("T")


class SqliteThread:
    def __init__(self, connect: Callable[[], sqlite3.Connection], name: str) -> None:
        self.name = name
        self._database = aiosqlite.Connection(connect, iter_chunk_size=64)

    async def start(self) -> None:
        """Start the thread and open the connection in it."""
        await self._database

    async def run(self, function: Callable[[sqlite3.Connection], T]) -> T:
        """Run function(connection) in the connection's thread and return its result."""
        database = self._database
        result: T = await database._execute(lambda: function(database._conn))
        return result

    async def close(self) -> None:
        """Finish the queued functions, close the connection, end the thread."""
        await self._database.close()
