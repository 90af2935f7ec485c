"""A SQLite connection confined to one thread, taking whole functions from the event loop.

aiosqlite hops to its thread once per statement; a mutation of five statements
then costs five round trips through the event loop. Running each whole read,
and each whole group-commit batch, as one function in the connection's thread
costs one round trip, which is what lets many small writes approach the speed
of a bare RPC.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import sqlean as sqlite3

T = TypeVar("T")

_STOP = object()


class SqliteThread:
    def __init__(self, connect: Callable[[], sqlite3.Connection], name: str) -> None:
        self._jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._connect = connect
        self._thread = threading.Thread(target=self._work, name=name, daemon=True)
        self.connection: sqlite3.Connection | None = None

    async def start(self) -> None:
        self._thread.start()
        await self.run(lambda connection: None)

    async def run(self, function: Callable[[sqlite3.Connection], T]) -> T:
        """Run function(connection) in the connection's thread and return its result."""
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._jobs.put((future, function))
        return await future

    async def close(self) -> None:
        await self.run(lambda connection: connection.close())
        self._jobs.put(_STOP)
        await asyncio.to_thread(self._thread.join)

    def _work(self) -> None:
        connection = self._connect()
        self.connection = connection
        while (job := self._jobs.get()) is not _STOP:
            future, function = job
            try:
                result = function(connection)
            except BaseException as error:  # handed to the awaiting coroutine, not lost
                future.get_loop().call_soon_threadsafe(_settle, future, None, error)
            else:
                future.get_loop().call_soon_threadsafe(_settle, future, result, None)


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.cancelled():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)
