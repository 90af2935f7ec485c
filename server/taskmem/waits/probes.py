"""Looking at a polled target once: an HTTP GET, or a file under a workspace.

Both block (urllib, file reads), so the scheduler runs them in its small thread pool.
"""

from __future__ import annotations

import dataclasses
import http.client
import os
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlsplit

from taskmem.core.waits import FileTarget, HttpTarget, http_matches, is_inside

BODY_LIMIT = 1024 * 1024
FILE_LIMIT = 10 * 1024 * 1024


@dataclasses.dataclass(frozen=True)
class Observation:
    """What one look saw: matched resolves the wait, failed ends it as FAILED, else look again later."""

    matched: bool
    summary: str
    failed: bool = False
    error: bool = False  # the look itself went wrong (no answer, unreadable file): counted as a probe error


class _SameHostRedirects(urllib.request.HTTPRedirectHandler):
    """Follow a redirect only to the same scheme, host and port; otherwise the 3xx is the answer."""

    def redirect_request(self, req: urllib.request.Request, fp: Any, code: int, msg: str, headers: Any,
                         newurl: str) -> urllib.request.Request | None:
        old, new = urlsplit(req.full_url), urlsplit(newurl)
        if (old.scheme, old.hostname, old.port) != (new.scheme, new.hostname, new.port):
            return None
        return super().redirect_request(req, fp, code, msg, headers, newurl)


# No proxies from the environment: the allow-list names the host actually contacted.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}), _SameHostRedirects())


def probe_http(target: HttpTarget, timeout: float) -> Observation:
    request = urllib.request.Request(target.url, headers={"User-Agent": "taskmem-wait/1"}, method="GET")
    try:
        with _OPENER.open(request, timeout=timeout) as response:
            status, body = response.status, response.read(BODY_LIMIT)
    except urllib.error.HTTPError as error:  # a non-2xx answer (or a redirect not followed) is still an answer
        status, body = error.code, error.read(BODY_LIMIT) if error.fp is not None else b""
    except (urllib.error.URLError, OSError, http.client.HTTPException, ValueError) as error:
        reason = getattr(error, "reason", None) or error
        return Observation(False, f"GET failed: {reason}", error=True)
    matched = http_matches(target, status, body)
    suffix = f" containing {target.body_contains!r}" if matched and target.body_contains else ""
    return Observation(matched, f"HTTP {status}{suffix}")


def probe_file(target: FileTarget) -> Observation:
    real = os.path.realpath(target.resolved)
    if not is_inside(os.path.realpath(target.workspace), real):
        return Observation(False, f"{target.path} resolves outside the workspace ({real})", failed=True)
    if not os.path.exists(real):
        return Observation(False, f"{target.path} does not exist")
    if not target.contains:
        return Observation(True, f"{target.path} exists")
    try:
        with open(real, "rb") as file:
            content = file.read(FILE_LIMIT)
    except OSError as error:
        return Observation(False, f"cannot read {target.path}: {error.strerror}", error=True)
    if target.contains.encode() in content:
        return Observation(True, f"{target.path} contains {target.contains!r}")
    return Observation(False, f"{target.path} does not contain {target.contains!r} yet")
