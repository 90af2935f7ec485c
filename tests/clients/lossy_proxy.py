"""A loopback TCP proxy in front of a server that can lose the server's replies, as a network can."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable


class _Link:
    def __init__(self, client: asyncio.StreamWriter, upstream: asyncio.StreamWriter) -> None:
        self.client = client
        self.upstream = upstream
        self.losing_replies = False

    def close(self) -> None:
        for writer in (self.client, self.upstream):
            writer.close()


class LossyProxy:
    """Forwards bytes both ways between its clients and upstream ("host:port").

    lose_replies() makes every connection open at that moment drop what the server sends, so a
    request reaches the server (and commits) but its reply never arrives. New connections are
    forwarded normally.
    """

    def __init__(self, upstream: str) -> None:
        host, port = upstream.rsplit(":", 1)
        self._upstream = (host, int(port))
        self._links: set[_Link] = set()
        self._server: asyncio.Server | None = None
        self.address = ""

    async def start(self) -> str:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.address = f"127.0.0.1:{port}"
        return self.address

    def lose_replies(self) -> None:
        for link in self._links:
            link.losing_replies = True

    async def close(self) -> None:
        for link in list(self._links):
            link.close()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _accept(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(*self._upstream)
        except OSError:
            client_writer.close()  # the server is down: the client sees the connection fail
            return
        link = _Link(client_writer, upstream_writer)
        self._links.add(link)
        try:
            await asyncio.gather(self._pipe(client_reader, upstream_writer, lambda: False),
                                 self._pipe(upstream_reader, client_writer, lambda: link.losing_replies))
        finally:
            self._links.discard(link)
            link.close()

    @staticmethod
    async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, losing: Callable[[], bool]) -> None:
        with contextlib.suppress(ConnectionError):
            while data := await reader.read(65536):
                if not losing():
                    writer.write(data)
                    await writer.drain()
        writer.close()  # one side ended: end the other, as a broken network path would
