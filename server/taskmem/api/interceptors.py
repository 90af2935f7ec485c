"""One server interceptor for every taskmem.v1 method: malformed requests, authentication, errors.

grpc.aio answers UNKNOWN when request bytes fail to decode, before any handler
runs. Wrapping the method's request_deserializer lets the handler answer
INVALID_ARGUMENT (ERROR_REASON_MALFORMED_REQUEST) instead. The wrapper then
resolves the caller's scope (bearer key → namespace, role, task scope) once, checks
the key's role and task scope against the RPC's rule (core/access.RPC_RULES), and
hands the scope to the servicer through a context variable. Health and reflection
stay open, so probes and grpcurl discovery need no key. A stream whose key is
removed from (or changed in) the keys file is ended with UNAUTHENTICATED.

Its response serializer lets bytes through as they are, so a reply serialized once can be
sent many times (the servicers' caches keep such bytes).

It is also the one place errors become statuses, for unary and streaming methods
alike: a domain error gets its code and ErrorInfo (api/errors.py); anything else is
a defect, logged with its traceback and answered INTERNAL with a request id to find
that log line by, never UNKNOWN.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
from google.protobuf.message import DecodeError

from taskmem.api.admission import Admission
from taskmem.api.errors import status_for, status_of
from taskmem.api.method_wrapping import WrappingInterceptor
from taskmem.api.scope import CALL_SCOPE, AuthError, CallScope, resolve_scope
from taskmem.api.task_access import TaskAccess, check_role
from taskmem.core.access import Rule, rule_of
from taskmem.core.audit import ACTOR
from taskmem.core.errors import TaskDenied
from taskmem.core.ids import new_id
from taskmem.keyring import KeyRing
from taskmem.settings import AuthSettings

log = logging.getLogger(__name__)

_GUARDED_PREFIX = "/taskmem.v1."


class _Malformed:
    def __init__(self, why: str) -> None:
        self.why = why


def _deserializer(inner: Callable[[bytes], Any] | None) -> Callable[[bytes], Any]:
    def deserialize(data: bytes) -> Any:
        try:
            return inner(data) if inner else data
        except (DecodeError, RuntimeError, ValueError) as error:
            return _Malformed(str(error) or type(error).__name__)

    return deserialize


def _serializer(inner: Callable[[Any], bytes] | None) -> Callable[[Any], bytes] | None:
    """The method's response serializer, passing bytes through: a servicer may answer with a reply it
    serialized once and keeps (GetTask's unchanged task, an event sent to many subscribers)."""
    if inner is None:
        return None

    def serialize(response: Any) -> bytes:
        return response if type(response) is bytes else inner(response)

    return serialize


def _status_of_failure(error: Exception, method: str) -> grpc.Status:
    """The status of `error`; an unmapped one is logged and becomes INTERNAL."""
    status = status_of(error)
    if status is None:
        request_id = new_id("req")
        log.error("%s failed (request id %s): unmapped %s", method, request_id, type(error).__name__,
                  exc_info=error)
        status = status_for(grpc.StatusCode.INTERNAL,
                            f"internal error (request id {request_id}); this is a server defect, please report it",
                            "ERROR_REASON_UNSPECIFIED", {"request_id": request_id})
    return status


def _scoped() -> bool:
    """Whether the running call's key is scoped to tasks (only then is the task it names looked up)."""
    key = CALL_SCOPE.get().key
    return key is not None and key.scope is not None


_REVOKED = status_for(grpc.StatusCode.UNAUTHENTICATED, "this key was removed or changed; reconnect with a current key",
                      "ERROR_REASON_KEY_REVOKED", {})


class GuardInterceptor(WrappingInterceptor):
    def __init__(self, keys: KeyRing | AuthSettings, admission: Admission, access: TaskAccess | None = None) -> None:
        """access: the task-scope check (None: a server whose keys have no task scopes)."""
        super().__init__()
        self._keys = keys if isinstance(keys, KeyRing) else KeyRing.of(keys)
        self._admission = admission
        self._access = access

    def wraps(self, method: str) -> bool:
        return method.startswith(_GUARDED_PREFIX)

    def _refusal(self, request: Any, context: grpc.aio.ServicerContext, method: str,
                 rule: Rule | None) -> grpc.Status | None:
        """The status refusing a malformed, unauthenticated or role-denied call; None (and the call's scope
        and actor set) otherwise."""
        if isinstance(request, _Malformed):
            return status_for(grpc.StatusCode.INVALID_ARGUMENT, f"request is not a valid message: {request.why}",
                              "ERROR_REASON_MALFORMED_REQUEST", {})
        try:
            scope = resolve_scope(self._keys, context.invocation_metadata() or ())
        except AuthError as error:
            code = (grpc.StatusCode.UNAUTHENTICATED if error.reason == "ERROR_REASON_UNAUTHENTICATED"
                    else grpc.StatusCode.PERMISSION_DENIED)
            return status_for(code, error.message, error.reason, {})
        try:
            check_role(scope, rule, method)
        except Exception as error:
            return _status_of_failure(error, method)
        CALL_SCOPE.set(scope)
        ACTOR.set(scope.actor)
        return None

    async def _scope_refusal(self, request: Any, rule: Rule | None, method: str) -> grpc.Status | None:
        """The status refusing a scoped key's call about another task; None otherwise."""
        scope = CALL_SCOPE.get()
        if self._access is None:
            return _status_of_failure(TaskDenied("this server checks no task scopes"), method)
        try:
            await self._access.check(scope, rule, request)
        except Exception as error:
            return _status_of_failure(error, method)
        return None

    def wrap(self, method: str, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        # grpc.aio's abort raises an exception that its call state keeps, and that exception's traceback keeps
        # the call's state: a reference cycle only the collector's full passes free, and with it every frame
        # the exception passed through, locals and all. So a refused or failed call aborts outside the except
        # block (the error and its traceback through the servicer, which hold the request, are let go) and
        # drops the request first: otherwise each such call's request (up to 4 MiB on the wire, a parsed
        # message several times that) stays in memory until a full collection; under bench/fuzz_rpcs.py
        # that was some 40 MiB of requests at a time.
        admission = self._admission
        rule = rule_of(method)

        def refusal(request: Any, context: grpc.aio.ServicerContext) -> grpc.Status | None:
            return self._refusal(request, context, method, rule)

        scope_refusal = self._scope_refusal
        keys = self._keys
        if handler.unary_unary:
            inner_unary = handler.unary_unary

            async def unary_unary(request: Any, context: grpc.aio.ServicerContext) -> Any:
                if not admission.try_enter():  # past capacity: refused before anything else (api/admission.py)
                    del request
                    await context.abort_with_status(admission.refusal())
                try:
                    status = refusal(request, context)
                    if status is None and _scoped():
                        status = await scope_refusal(request, rule, method)
                    if status is None:
                        try:
                            return await inner_unary(request, context)
                        except grpc.aio.BaseError:
                            raise  # gRPC's own: an abort the handler chose, or a call that already ended (client gone)
                        except Exception as error:
                            status = _status_of_failure(error, method)
                    del request
                    await context.abort_with_status(status)
                finally:
                    admission.leave()

            return grpc.unary_unary_rpc_method_handler(
                unary_unary, request_deserializer=_deserializer(handler.request_deserializer),
                response_serializer=_serializer(handler.response_serializer))
        if handler.unary_stream:
            inner_stream = handler.unary_stream

            async def unary_stream(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
                status = refusal(request, context)
                if status is None and _scoped():
                    status = await scope_refusal(request, rule, method)
                if status is None:
                    try:
                        scope = CALL_SCOPE.get()
                        responses = inner_stream(request, context)
                        if scope.key is None:
                            async for response in responses:
                                yield response
                            return
                        with keys.watch(scope.key.id) as revoked:
                            async for response in _until(responses, revoked):
                                yield response
                            if not revoked.is_set():
                                return
                        status = _REVOKED
                    except grpc.aio.BaseError:
                        raise
                    except Exception as error:
                        status = _status_of_failure(error, method)
                del request
                await context.abort_with_status(status)

            return grpc.unary_stream_rpc_method_handler(
                unary_stream, request_deserializer=_deserializer(handler.request_deserializer),
                response_serializer=_serializer(handler.response_serializer))
        return handler


async def _until(responses: AsyncIterator[Any], revoked: asyncio.Event) -> AsyncIterator[Any]:
    """The stream's responses until it ends or `revoked` is set (then the pending read is cancelled and the
    stream closed): a stream of a removed key ends within the keys file's reload interval."""
    ended = asyncio.ensure_future(revoked.wait())
    try:
        while True:
            following = asyncio.ensure_future(anext(responses))
            await asyncio.wait((following, ended), return_when=asyncio.FIRST_COMPLETED)
            if not following.done():
                following.cancel()
                await asyncio.gather(following, return_exceptions=True)
                return
            error = following.exception()
            if error is None:
                yield following.result()
                continue
            # Let go of the finished read (it keeps the error, whose traceback will keep this frame) and of
            # the error itself once raised: no reference cycle keeps the request (see GuardInterceptor.wrap).
            del following
            if isinstance(error, StopAsyncIteration):
                return
            try:
                raise error
            finally:
                del error
    finally:
        ended.cancel()
        close = getattr(responses, "aclose", None)
        if close is not None:
            await close()
