"""Outbound HTTP to allow-listed destinations only (http waits, webhooks), resolving each name once.

GuardedTransport checks a request against the allow-list (core.destinations: host, port, every
resolved address) and then connects to an address it checked: the URL's host is replaced by that
address while the Host header and the TLS server name (SNI, and so certificate verification) stay
the name the caller wrote. A second lookup by the connection (which DNS could answer differently,
the rebinding trick) never happens.

Connections are pooled per (scheme, name, port), not per address: a TLS connection verified for
one name is never reused for another name that shares its address.
"""

from __future__ import annotations

import asyncio
import collections
import socket
from collections.abc import Awaitable, Callable

import httpx

from taskmem.core.destinations import (
    AllowedHost, IPAddress, address_refusal, host_allowed, literal_address, parse_allowed_hosts, port_refusal,
)

Resolver = Callable[[str, int], Awaitable[list[str]]]
_POOLS_MAX = 64  # distinct (scheme, name, port) pools kept; a "*." entry could name many


class DestinationRefused(httpx.TransportError):
    """The allow-list does not permit this destination; nothing was sent."""


async def resolve_with_system(host: str, port: int) -> list[str]:
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class GuardedTransport(httpx.AsyncBaseTransport):
    def __init__(self, allowed: tuple[str, ...], setting: str, *, limits: httpx.Limits = httpx.Limits(),
                 resolver: Resolver = resolve_with_system) -> None:
        self._allowed: tuple[AllowedHost, ...] = parse_allowed_hosts(allowed)
        self._setting = setting  # named in refusals, so the operator knows what to change
        self._limits = limits
        self._resolve = resolver
        self._pools: collections.OrderedDict[tuple[str, str, int], httpx.AsyncHTTPTransport] = \
            collections.OrderedDict()
        self._closing: set[asyncio.Task[None]] = set()

    async def checked_addresses(self, host: str, port: int) -> list[IPAddress]:
        """The addresses host:port may be reached at, all checked; DestinationRefused if any is not allowed."""
        if not host_allowed(host, self._allowed):
            raise DestinationRefused(f"host {host} is not in {self._setting}")
        refusal = port_refusal(host, port, self._allowed)
        if refusal:
            raise DestinationRefused(f"{refusal} in {self._setting}")
        literal = literal_address(host)
        if literal is not None:
            addresses = [literal]
        else:
            try:
                found = await self._resolve(host, port)
            except OSError as error:
                raise httpx.ConnectError(f"cannot resolve {host}: {error}") from None
            addresses = [a for a in (literal_address(text.split("%")[0]) for text in found) if a is not None]
            if not addresses:
                raise httpx.ConnectError(f"{host} resolves to no address")
        for address in addresses:
            refusal = address_refusal(address, self._allowed)
            if refusal:  # one bad answer refuses the name: which one a connection would get is DNS's choice
                raise DestinationRefused(f"{host} resolves to {refusal} in {self._setting}")
        return addresses

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        port = url.port or (443 if url.scheme == "https" else 80)
        addresses = await self.checked_addresses(url.host, port)
        pool = self._pool(url.scheme, url.host, port)
        request.extensions = {**request.extensions, "sni_hostname": url.host}
        last: httpx.ConnectError | None = None
        for address in addresses:  # the Host header was set from the original URL and stays
            request.url = url.copy_with(host=str(address))
            try:
                return await pool.handle_async_request(request)
            except httpx.ConnectError as error:  # nothing was sent: the next checked address may answer
                last = error
        assert last is not None
        raise last

    def _pool(self, scheme: str, host: str, port: int) -> httpx.AsyncHTTPTransport:
        key = (scheme, host, port)
        pool = self._pools.pop(key, None)
        if pool is None:
            pool = httpx.AsyncHTTPTransport(limits=self._limits, trust_env=False)
            while len(self._pools) >= _POOLS_MAX:
                _, oldest = self._pools.popitem(last=False)
                closing = asyncio.get_running_loop().create_task(oldest.aclose())
                self._closing.add(closing)
                closing.add_done_callback(self._closing.discard)
        self._pools[key] = pool
        return pool

    async def aclose(self) -> None:
        pools, self._pools = list(self._pools.values()), collections.OrderedDict()
        for pool in pools:
            await pool.aclose()
