"""One TaskmemClient per event loop, made from the same settings.

A grpc.aio channel works only on the loop it was made on, and an adapter is used from the caller's loop
(async methods) and from its private loop (sync methods): each gets a client of its own.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from typing import Any

from taskmem_client import TaskmemClient


class Connection:
    def __init__(self, client: TaskmemClient | None, settings: dict[str, Any]) -> None:
        self._settings = settings
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, TaskmemClient] = (
            weakref.WeakKeyDictionary())
        self._lock = threading.Lock()
        self._given = client
        if client is not None and "address" not in settings:
            settings["address"] = client.address

    def client(self) -> TaskmemClient:
        """The client for the running loop: the one given, if it was made on this loop, else one made here."""
        loop = asyncio.get_running_loop()
        with self._lock:
            found = self._clients.get(loop)
            if found is None:
                found = self._given if self._given is not None and _made_on(self._given, loop) else (
                    TaskmemClient(**self._settings))
                self._clients[loop] = found
            return found

    async def close(self) -> None:
        """Close the clients this connection made on the running loop (a given client is the caller's)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            found = self._clients.pop(loop, None)
        if found is not None and found is not self._given:
            await found.close()


def _made_on(client: TaskmemClient, loop: asyncio.AbstractEventLoop) -> bool:
    channel_loop = getattr(client.channel, "_loop", None)
    return channel_loop is None or channel_loop is loop
