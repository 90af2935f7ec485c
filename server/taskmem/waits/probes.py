"""Looking at a polled target once: an HTTP GET, or a file below a configured root.

An HTTP look is asynchronous and ends within its total deadline (connect, headers
and body together), however slowly the far end trickles; it reads at most
BODY_LIMIT bytes. A file look blocks (file reads), so the scheduler runs it in its
own small thread pool. A look that raises is an error the scheduler retries.
"""

from __future__ import annotations

import asyncio
import dataclasses
from urllib.parse import urljoin, urlsplit

import httpx

from taskmem.core.waits import FileTarget, HttpTarget, http_matches
from taskmem.outbound_http import DestinationRefused, GuardedTransport, Resolver, resolve_with_system
from taskmem.waits.file_access import FileRoots, Missing, Refused

BODY_LIMIT = 1024 * 1024
FILE_LIMIT = 10 * 1024 * 1024
REDIRECTS_MAX = 5


@dataclasses.dataclass(frozen=True)
class Observation:
    """What one look saw: matched resolves the wait, failed ends it as FAILED, else look again later."""

    matched: bool
    summary: str
    failed: bool = False
    error: bool = False  # the look itself went wrong (no answer, unreadable file): counted as a probe error


def http_client(concurrency: int, allowed_hosts: tuple[str, ...],
                resolver: Resolver = resolve_with_system) -> httpx.AsyncClient:
    # Only allow-listed hosts, ports and resolved addresses are contacted, at the address checked
    # (outbound_http); no proxies from the environment. The body is read raw (identity encoding), so the
    # byte cap is on what crosses the wire. No pooled keep-alive: each look is its own short exchange,
    # and the pool never waits longer than the slots.
    headers = {"User-Agent": "taskmem-wait/1", "Accept-Encoding": "identity"}
    transport = GuardedTransport(allowed_hosts, "wait_http_allowed_hosts", resolver=resolver,
                                 limits=httpx.Limits(max_connections=concurrency, max_keepalive_connections=0))
    return httpx.AsyncClient(transport=transport, trust_env=False, follow_redirects=False, headers=headers)


def _same_origin(old: str, new: str) -> bool:
    a, b = urlsplit(old), urlsplit(new)
    return (a.scheme, a.hostname, a.port) == (b.scheme, b.hostname, b.port)


async def _get(client: httpx.AsyncClient, url: str) -> tuple[int, bytes]:
    """GET, following redirects to the same scheme, host and port only (another's 3xx is the answer)."""
    for _ in range(REDIRECTS_MAX + 1):
        async with client.stream("GET", url) as response:
            location = response.headers.get("location")
            if response.is_redirect and location and _same_origin(url, urljoin(url, location)):
                url = urljoin(url, location)
                continue
            body = bytearray()
            async for chunk in response.aiter_raw():
                body += chunk[:BODY_LIMIT - len(body)]
                if len(body) >= BODY_LIMIT:
                    break
            return response.status_code, bytes(body)
    return response.status_code, b""


async def probe_http(client: httpx.AsyncClient, target: HttpTarget, timeout: float) -> Observation:
    try:
        async with asyncio.timeout(timeout):
            status, body = await _get(client, target.url)
    except TimeoutError:
        return Observation(False, f"GET gave no complete answer within {timeout:g}s", error=True)
    except DestinationRefused as refused:  # the allow-list's answer does not change between looks
        return Observation(False, f"GET refused: {refused}", failed=True)
    except (httpx.HTTPError, OSError, ValueError) as error:
        return Observation(False, f"GET failed: {error or type(error).__name__}", error=True)
    matched = http_matches(target, status, body)
    suffix = f" containing {target.body_contains!r}" if matched and target.body_contains else ""
    return Observation(matched, f"HTTP {status}{suffix}")


def probe_file(roots: FileRoots, target: FileTarget) -> Observation:
    try:
        content = roots.read(target.resolved, FILE_LIMIT if target.contains else 0)
    except Missing as missing:
        return Observation(False, str(missing).replace(target.resolved, target.path))
    except Refused as refused:
        return Observation(False, str(refused).replace(target.resolved, target.path), failed=True)
    if not target.contains:
        return Observation(True, f"{target.path} exists")
    if content is None:
        return Observation(False, f"{target.path} is a directory, not a file containing {target.contains!r}")
    if target.contains.encode() in content:
        return Observation(True, f"{target.path} contains {target.contains!r}")
    return Observation(False, f"{target.path} does not contain {target.contains!r} yet")
