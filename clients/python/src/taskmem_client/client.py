"""TaskmemClient: one gRPC channel to a taskmem server with a typed stub per service."""

from __future__ import annotations

import asyncio
import ipaddress
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from types import TracebackType

import grpc

from taskmem.v1 import (
    event_pb2,
    memory_service_pb2_grpc,
    state_service_pb2_grpc,
    task_service_pb2_grpc,
    wait_pb2,
    wait_service_pb2_grpc,
)
from taskmem_client.calls import RetryPolicy, call_interceptors
from taskmem_client.claims import ClaimedItem, LeaseKeeper, claim_next
from taskmem_client.errors import TaskmemError
from taskmem_client.events import subscribe_events
from taskmem_client.person_waits import Answer, answer_of, ask_person

DEFAULT_ADDRESS = "127.0.0.1:50051"
DEFAULT_TIMEOUT = 30.0

# Keepalive pings on connections with open calls, so a dead peer under a quiet subscription is
# noticed. The server (grpc C-core) closes connections pinging more often than every 10 s
# (too_many_pings), so this stays well above that. Reconnect quickly after a server restart.
_CHANNEL_OPTIONS: tuple[tuple[str, int | str], ...] = (
    ("grpc.keepalive_time_ms", 30_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 0),
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 2_000),
    ("grpc.max_receive_message_length", 64 << 20),
    ("grpc.primary_user_agent", "taskmem-python/0.1"),
)


def is_loopback(address: str) -> bool:
    """Whether address ("host:port", "[::1]:port", "unix:...") stays on this machine."""
    if address.startswith("unix:"):
        return True
    host = address.rsplit(":", 1)[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class TaskmemClient:
    """An async client of a taskmem server.

        async with TaskmemClient("127.0.0.1:50051", token=key) as client:
            created = await client.tasks.CreateTask(CreateTaskRequest(name="deploy"))
            async for event in client.subscribe(task_ids=[created.task.id]):
                ...

    `tasks`, `waits`, `state` and `memory` are the generated async stubs (typed by their .pyi files). On
    every call the client sends the bearer token and namespace, applies a deadline (`timeout`
    here, or the call's own `timeout=`; streams have none unless given), fills an empty
    request_id, and retries on UNAVAILABLE and DEADLINE_EXCEEDED the calls that are safe to
    repeat (see RetryPolicy). Failed calls raise TaskmemError (a grpc.aio.AioRpcError with
    `.reason` and `.field` from the server's ErrorInfo).

    tls: False for plaintext, True for TLS with the system roots (or `root_certificates`), or
    any grpc.ChannelCredentials. A token is sent in plaintext only to a loopback address or
    with insecure=True.
    """

    def __init__(
        self,
        address: str = DEFAULT_ADDRESS,
        *,
        token: str | None = None,
        namespace: str | None = None,
        tls: bool | grpc.ChannelCredentials = False,
        root_certificates: bytes | None = None,
        insecure: bool = False,
        timeout: float | None = DEFAULT_TIMEOUT,
        retry: RetryPolicy = RetryPolicy(),
        metadata: Sequence[tuple[str, str]] = (),
        channel_options: Sequence[tuple[str, int | str]] = (),
    ) -> None:
        if token and tls is False and not insecure and not is_loopback(address):
            raise ValueError(f"refusing to send a token in plaintext to {address}: "
                             "use tls=True, a loopback address, or insecure=True")
        call_metadata = list(metadata)
        if token:
            call_metadata.append(("authorization", f"Bearer {token}"))
        if namespace:
            call_metadata.append(("x-taskmem-namespace", namespace))
        interceptors = call_interceptors(call_metadata, timeout, retry)
        options = [*_CHANNEL_OPTIONS, *channel_options]
        if tls is False:
            self._channel = grpc.aio.insecure_channel(address, options=options, interceptors=interceptors)
        else:
            credentials = tls if isinstance(tls, grpc.ChannelCredentials) else grpc.ssl_channel_credentials(
                root_certificates=root_certificates)
            self._channel = grpc.aio.secure_channel(address, credentials, options=options,
                                                    interceptors=interceptors)
        self.address = address
        self._closed = False
        self.tasks: task_service_pb2_grpc.TaskServiceAsyncStub = task_service_pb2_grpc.TaskServiceStub(self._channel)
        self.waits: wait_service_pb2_grpc.WaitServiceAsyncStub = wait_service_pb2_grpc.WaitServiceStub(self._channel)
        self.state: state_service_pb2_grpc.StateServiceAsyncStub = state_service_pb2_grpc.StateServiceStub(
            self._channel)
        self.memory: memory_service_pb2_grpc.MemoryServiceAsyncStub = memory_service_pb2_grpc.MemoryServiceStub(
            self._channel)

    @property
    def channel(self) -> grpc.aio.Channel:
        """The channel, for example for the standard health service or a stub this client does not hold."""
        return self._channel

    def subscribe(
        self,
        *,
        task_ids: Iterable[str] = (),
        types: Sequence[event_pb2.EventType.ValueType] = (),
        after_cursor: int = 0,
        initial_backoff: float = 0.1,
        max_backoff: float = 5.0,
        on_reconnect: Callable[[TaskmemError | None, float, int], None] | None = None,
        metadata: Sequence[tuple[str, str]] = (),
    ) -> AsyncIterator[event_pb2.Event]:
        """The events matching the filter, each once, in cursor order, resuming across broken
        connections and server restarts (see taskmem_client.events.subscribe_events). metadata
        overrides the client's own for this stream (for example its namespace)."""
        return subscribe_events(self.tasks, task_ids=task_ids, types=types, after_cursor=after_cursor,
                                initial_backoff=initial_backoff, max_backoff=max_backoff,
                                on_reconnect=on_reconnect, closed=lambda: self._closed, metadata=metadata)

    async def claim_next(self, task_id: str, holder_id: str, *, lease: float = 30.0, item_id: str = "",
                         stages: Sequence[str] = (), tool_names: Sequence[str] = (), wait: bool = True,
                         poll: float = 0.5) -> ClaimedItem | None:
        """The next ready plan item claimed for holder_id, or None once the plan (the matching part) is drained;
        waits while items remain but none is ready (see taskmem_client.claims.claim_next)."""
        return await claim_next(self.tasks, task_id, holder_id, lease=lease, item_id=item_id, stages=stages,
                                tool_names=tool_names, wait=wait, poll=poll)

    def keep_lease(self, claimed: ClaimedItem, *,
                   on_lost: Callable[[LeaseKeeper], None] | None = None) -> LeaseKeeper:
        """`async with client.keep_lease(claimed) as lease:` renews the claim in the background until the
        block ends or the claim is lost (`lease.lost`, `lease.lost_to`); see taskmem_client.claims.LeaseKeeper."""
        return LeaseKeeper(self.tasks, claimed, on_lost=on_lost)

    async def ask_person(self, task_id: str, question: str, *, asked_of: str = "", auth: bool = False,
                         plan_item_id: str = "", timeout: float | None = None) -> wait_pb2.Wait:
        """Ask a person (a wait of kind INPUT, or AUTH with auth=True): the task, or plan_item_id, is in
        INPUT_REQUIRED / AUTH_REQUIRED until answered; see taskmem_client.person_waits."""
        return await ask_person(self.waits, task_id, question, asked_of=asked_of, auth=auth,
                                plan_item_id=plan_item_id, timeout=timeout)

    async def answer_of(self, wait_id: str) -> Answer:
        """How the question ended (`given`, `refused`, `text`), once it has; follows the wait across reconnects."""
        return await answer_of(self.waits, wait_id, closed=lambda: self._closed)

    async def wait_until_ready(self, timeout: float | None = None) -> None:
        """Connects now; raises TimeoutError if the server is not reachable within timeout."""
        await asyncio.wait_for(self._channel.channel_ready(), timeout)

    async def close(self) -> None:
        """Closes the channel: calls in flight are cancelled, subscriptions end quietly."""
        self._closed = True
        await self._channel.close()

    async def __aenter__(self) -> TaskmemClient:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        traceback: TracebackType | None) -> None:
        await self.close()
