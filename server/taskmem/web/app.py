"""The web view's ASGI app: the page, its static files, JSON calls and two live streams (SSE).

Browsers send the key as an Authorization header on fetch(), never in a URL; EventSource cannot
send headers, so the page reads the SSE streams with fetch() too. A custom header on every API
request keeps other sites' pages out (they cannot send it without a CORS preflight, which this
app never grants).

Every API request's key is checked before its body is read (401/403 with the body unread), and a
body is read only up to MAX_BODY_BYTES (413 as soon as Content-Length or the bytes streamed so far
pass it), so no caller can make the server hold more than that per request.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc
from sse_starlette import EventSourceResponse
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from taskmem.api.scope import AuthError, resolve_scope
from taskmem.keyring import KeyRing
from taskmem.store.event_log import EventLog
from taskmem.v1 import event_pb2, task_service_pb2, task_service_pb2_grpc
from taskmem.web.gateway import Gateway, GatewayError, call_metadata, http_error, to_json

STATIC = Path(__file__).parent / "static"
WEB_HEADER = "x-taskmem-web"
SSE_PING_SECONDS = 15
MAX_BATCH = 50
# As gRPC's largest message (server.MAX_MESSAGE_BYTES) and MCP's: no single call needs more.
MAX_BODY_BYTES = 4 * 1024 * 1024
_SECURITY_HEADERS = [
    (b"content-security-policy", b"default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
]


class _SecurityHeaders:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *_SECURITY_HEADERS]
            await send(message)

        await self.app(scope, receive, send_with_headers if scope["type"] == "http" else send)


def _authorized_namespace(auth: KeyRing, request: Request) -> str:
    """The namespace the request's key acts in (the interceptor's own check); GatewayError 401/403 if none."""
    try:
        return resolve_scope(auth, call_metadata(dict(request.headers))).namespace
    except AuthError as error:
        code = "UNAUTHENTICATED" if error.reason == "ERROR_REASON_UNAUTHENTICATED" else "PERMISSION_DENIED"
        raise GatewayError(401 if code == "UNAUTHENTICATED" else 403, code, error.message) from None


def _api(auth: KeyRing) -> Callable[[Callable[[Request], Awaitable[Response]]],
                                         Callable[[Request], Awaitable[Response]]]:
    """Refuse API requests without the web view's header or a good key, before anything else is read; turn
    GatewayError into its JSON reply."""
    def wrap(handler: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
        async def guarded(request: Request) -> Response:
            if request.headers.get(WEB_HEADER) != "1":
                return JSONResponse({"code": "PERMISSION_DENIED", "message": f"missing {WEB_HEADER} header"}, 403)
            try:
                _authorized_namespace(auth, request)
                return await handler(request)
            except GatewayError as error:
                # The body may be left unread: close the connection rather than read the rest to reuse it.
                return JSONResponse(error.body, error.http_status,
                                    headers={"connection": "close"} if error.http_status in (401, 403, 413) else None)
        return guarded
    return wrap


async def _json_body(request: Request) -> Any:
    """The request body as JSON, read only up to MAX_BODY_BYTES: 413 once it is known to be longer (from
    Content-Length before reading, or from the bytes streamed so far), 400 if it is not JSON or nests deeper
    than the parser can follow."""
    too_long = GatewayError(413, "RESOURCE_EXHAUSTED", f"the request body is over {MAX_BODY_BYTES // (1024 * 1024)} MB")
    try:
        announced = int(request.headers.get("content-length", "0"))
    except ValueError:
        raise GatewayError(400, "INVALID_ARGUMENT", "Content-Length is not a number") from None
    if announced > MAX_BODY_BYTES:
        raise too_long
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            raise too_long
    try:
        return json.loads(body)
    except ValueError:
        raise GatewayError(400, "INVALID_ARGUMENT", "the request body is not JSON") from None
    except RecursionError:
        raise GatewayError(400, "INVALID_ARGUMENT", "the request body nests too deeply") from None


def build_app(auth: KeyRing, channel: grpc.aio.Channel, events: EventLog,
              allowed_hosts: list[str] | None) -> Starlette:
    gateway = Gateway(channel)
    tasks = task_service_pb2_grpc.TaskServiceStub(channel)
    api = _api(auth)

    async def index(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", headers={"cache-control": "no-cache"})

    @api
    async def call(request: Request) -> Response:
        body = await _json_body(request)
        metadata = call_metadata(dict(request.headers))
        reply = await gateway.call(request.path_params["service"], request.path_params["method"], body, metadata)
        return JSONResponse(reply)

    @api
    async def batch(request: Request) -> Response:
        """Several calls in one request, run at once: a page's first load is one round trip, not one per
        section queued behind the browser's six connections. Each call answers alone: {"reply": …} or
        {"error": {"status", "code", "message"}}."""
        body = await _json_body(request)
        try:
            calls = body["calls"]
            if not isinstance(calls, list) or len(calls) > MAX_BATCH:
                raise ValueError
        except (ValueError, KeyError, TypeError):
            raise GatewayError(400, "INVALID_ARGUMENT", f"calls: expected a list of at most {MAX_BATCH} calls") from None
        metadata = call_metadata(dict(request.headers))

        async def one(item: Any) -> dict[str, Any]:
            try:
                if not isinstance(item, dict):
                    raise GatewayError(400, "INVALID_ARGUMENT", "each call is {service, method, request}")
                reply = await gateway.call(str(item.get("service")), str(item.get("method")), item.get("request", {}),
                                           metadata)
                return {"reply": reply}
            except GatewayError as error:
                return {"error": {"status": error.http_status, **error.body}}

        return JSONResponse({"results": await asyncio.gather(*(one(item) for item in calls))})

    @api
    async def event_stream(request: Request) -> Response:
        """The event log as SSE: a `ready` event carrying the start cursor, then one `event` per event.

        Resumes after Last-Event-ID (or ?after=); with neither it starts at the namespace's current end,
        which the `ready` event names, so a page that loads its data after `ready` misses nothing.
        """
        metadata = call_metadata(dict(request.headers))
        namespace = _authorized_namespace(auth, request)
        after = _cursor(request.headers.get("last-event-id") or request.query_params.get("after"))
        if after is None:
            after = await events.last_cursor(namespace)
        try:
            types = [event_pb2.EventType.Value(name) for name in request.query_params.getlist("type")]
        except ValueError as error:
            raise GatewayError(400, "INVALID_ARGUMENT", f"type: {error}") from None
        subscription = tasks.SubscribeEvents(task_service_pb2.SubscribeEventsRequest(
            task_ids=request.query_params.getlist("task"), types=types, after_cursor=after), metadata=metadata)

        async def stream() -> AsyncIterator[dict[str, str]]:
            yield {"event": "ready", "id": str(after), "data": json.dumps({"cursor": after})}
            async for item in _until_error(subscription):
                yield item.sse if isinstance(item, _ErrorEvent) else {
                    "event": "event", "id": str(item.event.cursor), "data": json.dumps(to_json(item.event))}

        return EventSourceResponse(stream(), ping=SSE_PING_SECONDS)

    @api
    async def action_log_stream(request: Request) -> Response:
        """A running action's log lines as SSE (TailActionLog), resuming after Last-Event-ID."""
        metadata = call_metadata(dict(request.headers))
        after = _cursor(request.headers.get("last-event-id") or request.query_params.get("after")) or 0
        tail = tasks.TailActionLog(task_service_pb2.TailActionLogRequest(
            action_id=request.path_params["action_id"], after_sequence=after), metadata=metadata)

        async def stream() -> AsyncIterator[dict[str, str]]:
            async for item in _until_error(tail):
                yield item.sse if isinstance(item, _ErrorEvent) else {
                    "event": "line", "id": str(item.line.sequence), "data": json.dumps(to_json(item.line))}
            yield {"event": "end", "data": "{}"}

        return EventSourceResponse(stream(), ping=SSE_PING_SECONDS)

    middleware = [Middleware(_SecurityHeaders)]
    if allowed_hosts:
        middleware.append(Middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts))
    return Starlette(routes=[
        Route("/", index),
        Route("/api/call/{service}/{method}", call, methods=["POST"]),
        Route("/api/batch", batch, methods=["POST"]),
        Route("/api/events", event_stream),
        Route("/api/actions/{action_id}/log", action_log_stream),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ], middleware=middleware)


def _cursor(text: str | None) -> int | None:
    if text is None or text == "":
        return None
    try:
        value = int(text)
    except ValueError:
        raise GatewayError(400, "INVALID_ARGUMENT", f"after: {text!r} is not a cursor") from None
    if value < 0:
        raise GatewayError(400, "INVALID_ARGUMENT", "after: must not be negative")
    return value


async def _until_error(call: Any) -> AsyncIterator[Any]:
    """A gRPC stream's replies; a stream that ends in error ends with an SSE `error`
    event naming the code (the page shows it, and reconnects from its last id if a retry can help)."""
    try:
        async for item in call:
            yield item
    except grpc.aio.AioRpcError as error:
        yield _ErrorEvent(http_error(error).body)
    finally:
        call.cancel()


class _ErrorEvent:
    def __init__(self, body: dict[str, str]) -> None:
        self.sse = {"event": "error", "data": json.dumps(body)}
