"""A private event loop on a daemon thread, for the synchronous methods of the adapters.

grpc.aio channels belong to the loop that made them, and LangGraph's synchronous API (graph.invoke) calls
the saver from threads that have no loop, or from inside a running one. Either way the call is run here
and its result waited for, so sync and async methods share one implementation.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class LoopThread:
    def __init__(self, name: str) -> None:
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()

    @property
    def started(self) -> bool:
        return self._loop is not None

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name=self._name, daemon=True).start()
                self._loop = loop
            return self._loop

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run the coroutine on this thread's loop and wait for its result."""
        loop = self.loop
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            coroutine.close()
            raise RuntimeError("a synchronous method was called from the adapter's own loop: use its a* twin")
        return asyncio.run_coroutine_threadsafe(coroutine, loop).result()

    def close(self) -> None:
        with self._lock:
            if self._loop is not None:
                self._loop.call_soon_threadsafe(self._loop.stop)
                self._loop = None
