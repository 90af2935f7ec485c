"""Assembling and running the gRPC server: services, health, reflection, TLS, graceful shutdown."""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import signal
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from taskmem.api.admission import Admission
from taskmem.api.checkpoint_service import CheckpointService
from taskmem.api.interceptors import GuardInterceptor
from taskmem.api.method_wrapping import WrappedRegistration
from taskmem.api.task_access import TaskAccess
from taskmem.api.metrics_interceptor import MetricsInterceptor
from taskmem.api.memory_service import MemoryService
from taskmem.api.reflection import add_reflection
from taskmem.api.state_service import StateService
from taskmem.api.task_service import TaskService
from taskmem.api.event_encoding import event_payload
from taskmem.api.wait_service import WaitService
from taskmem.keyring import KeyRing
from taskmem.checkpoints.engine import CheckpointEngine
from taskmem.config import Config, ConfigError, check_listen_allowed
from taskmem.log_format import configure_logging
from taskmem.maintenance_loop import MaintenanceLoop
from taskmem.plan_claim_sweeper import PlanClaimSweeper
from taskmem.malloc_tuning import fix_malloc_thresholds
from taskmem.memory.archive import MemoryArchive
from taskmem.metrics import Metrics, MetricsEndpoint, watch_storage
from taskmem.plan_judge import plan_judge_for
from taskmem.providers.chat import chat_model_from_config
from taskmem.providers.embeddings import OpenAIEmbedder, embedder_from_config
from taskmem.providers.measured_embedder import MeasuredEmbedder
from taskmem.providers.model_router import ModelRouter, second_model_from_config
from taskmem.settings import (
    EmbeddingSettings, LlmSettings, MaintenanceSettings, StateSettings, UsageSettings, WaitSettings,
    WebhookSettings,
)
from taskmem.state.engine import StateEngine
from taskmem.state.follower import StateFollower
from taskmem.schema_watch import SchemaWatch
from taskmem.store.engines import open_storage, shipped_migrations
from taskmem.store.migration_files import SchemaTooNew
from taskmem.store.storage import Storage
from taskmem.tracing import rpc_tracing
from taskmem.usage.meter import StoredMeter
from taskmem.tiktoken_offline import token_counter
from taskmem.v1 import checkpoint_service_pb2, checkpoint_service_pb2_grpc
from taskmem.v1 import memory_service_pb2, memory_service_pb2_grpc, state_service_pb2, state_service_pb2_grpc
from taskmem.v1 import task_service_pb2, task_service_pb2_grpc, wait_service_pb2, wait_service_pb2_grpc
from taskmem.waits.file_access import WaitFileRoots
from taskmem.waits.scheduler import WaitScheduler
from taskmem.webhooks.sender import WebhookSender

if TYPE_CHECKING:
    from taskmem.web.listener import WebView

log = logging.getLogger("taskmem")

READY_LINE = "taskmem: serving on {address}"
METRICS_LINE = "taskmem: metrics on http://{address}/metrics"
WEB_READY_LINE = "taskmem: web view on {url}"
MAX_MESSAGE_BYTES = 4 * 1024 * 1024
SERVICE_NAMES = [
    task_service_pb2.DESCRIPTOR.services_by_name["TaskService"].full_name,
    wait_service_pb2.DESCRIPTOR.services_by_name["WaitService"].full_name,
    state_service_pb2.DESCRIPTOR.services_by_name["StateService"].full_name,
    memory_service_pb2.DESCRIPTOR.services_by_name["MemoryService"].full_name,
    checkpoint_service_pb2.DESCRIPTOR.services_by_name["CheckpointService"].full_name,
]


def check_bind_allowed(config: Config) -> None:
    """The gRPC listen address: loopback, or API keys and TLS, or --insecure (config.check_listen_allowed);
    the metrics address, which checks no key: loopback or --insecure."""
    check_listen_allowed(config, config.listen, tls=bool(config.tls_cert_file or config.tls_key_file))
    if config.metrics_listen:
        check_listen_allowed(config, config.metrics_listen, tls=False, setting="metrics_listen",
                             authenticated=False)


def _server_options(config: Config) -> list[tuple[str, int]]:
    return [
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
        # Let clients keep idle connections alive with pings this often, no more (grpc/grpc#9902). C-core's
        # name for the server's receive side is GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS's
        # value below; "grpc.http2.min_recv_ping_interval_without_data_ms" is no argument at all (ignored).
        ("grpc.http2.min_ping_interval_without_data_ms", config.min_ping_interval_ms),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.so_reuseport", 0),
        # gRPC's own backlog of calls this process has not started yet: past max_pending_requests it cancels
        # new ones at random (CANCELLED, which no caller can tell from its own). The admission check
        # (api/admission.py) answers overload with UNAVAILABLE and a retry hint instead, so the limit is
        # raised out of its way. A refusal costs the process too, so far past capacity the backlog is kept
        # short by the clients, which hold calls back after a refusal (docs/write-path.md, "Overload").
        ("grpc.server.max_pending_requests", 20_000),
        ("grpc.server.max_pending_requests_hard_limit", 40_000),
    ]


class TaskmemServer:
    """A running server: start() binds and serves, stop() shuts down in order."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.storage: Storage | None = None
        self.server: grpc.aio.Server | None = None
        self.scheduler: WaitScheduler | None = None
        self.maintenance: MaintenanceLoop | None = None
        self.claim_sweeper: PlanClaimSweeper | None = None
        self.state: StateEngine | None = None
        self.state_follower: StateFollower | None = None
        self.memory: MemoryArchive | None = None
        self.webhooks: WebhookSender | None = None
        self.metrics = Metrics() if config.metrics_listen else None
        self._admission_watch: asyncio.Task[None] | None = None
        self.metrics_endpoint: MetricsEndpoint | None = None
        self.stop_tracing: Callable[[], None] | None = None
        self.health = health.aio.HealthServicer()
        self.port = 0
        self.web: WebView | None = None
        self.web_url = ""
        self.keys: KeyRing | None = None
        self._web_socket_dir: tempfile.TemporaryDirectory[str] | None = None
        self.schema_watch: SchemaWatch | None = None
        # Set when a newer release migrated the database under this server: serve() shuts it down.
        self.stepped_aside: SchemaTooNew | None = None
        self.step_aside = asyncio.Event()

    async def start(self) -> str:
        check_bind_allowed(self.config)
        if self.config.http_listen:
            # Imported only when asked for: a server without the web view never loads the HTTP stack.
            from taskmem.web.listener import WebView, check_http_bind_allowed

            check_http_bind_allowed(self.config)
        # The keys every front door checks; with a keys file, followed as it changes (keyring.py).
        self.keys = KeyRing(self.config.api_keys, self.config.admin_keys, self.config.keys_file)
        self.keys.start()
        self.storage = await open_storage(
            self.config.database, event_payload, queue_size=self.config.subscriber_queue_size,
            batch_size=self.config.writer_batch_size)
        self.schema_watch = SchemaWatch(self.storage, shipped_migrations(self.config.database),
                                        self.config.schema_check_interval_seconds, self._newer_schema)
        self.schema_watch.start()
        metrics = self.metrics
        if metrics is not None:
            watch_storage(metrics, self.storage, self.config.database)
        # The scheduler resumes stored waits before the first call can create or end one.
        self.file_roots = WaitFileRoots.parse(self.config.wait_file_roots, self.config.database)
        self.scheduler = WaitScheduler(
            self.storage, self.file_roots, http_allowed_hosts=self.config.wait_http_allowed_hosts,
            http_probes=self.config.wait_http_probe_concurrency,
            file_probes=self.config.wait_file_probe_concurrency,
            probe_timeout_seconds=self.config.wait_probe_timeout_seconds,
            probe_max_errors=self.config.wait_probe_max_errors)
        if metrics is not None:
            self.scheduler.on_probe = lambda kind, outcome: metrics.wait_probes.labels(kind, outcome).inc()
        await self.scheduler.start()
        # Webhooks catch up on what happened while the server was down, then follow the event log.
        self.webhooks = WebhookSender(self.storage, WebhookSettings.of(self.config), metrics)
        # Each runs on one process of those sharing the database (with replicas, the lease holder's).
        await self.storage.run_alone("webhooks", self.webhooks.start, self.webhooks.stop)
        self.maintenance = MaintenanceLoop(self.storage, MaintenanceSettings.of(self.config))
        await self.storage.run_alone("maintenance", self.maintenance.start, self.maintenance.stop)
        self.claim_sweeper = PlanClaimSweeper(self.storage)
        await self.storage.run_alone("plan-claims", self.claim_sweeper.start, self.claim_sweeper.stop)
        # One embedder and one model client for both services: the builtin model loads once.
        llm = LlmSettings.of(self.config)
        embedder, chat = embedder_from_config(EmbeddingSettings.of(self.config)), chat_model_from_config(llm)
        second = second_model_from_config(llm)  # QueryTask's analysis questions (ModelRouter)
        # Every call to an endpoint is admitted against its namespace's budget and recorded (GetTaskUsage).
        meter = StoredMeter(self.storage, UsageSettings.of(self.config).budgets, metrics)
        for model in (chat, second):
            if model is not None:
                model.meter = meter
        if isinstance(embedder, OpenAIEmbedder):
            embedder.meter = meter
        if metrics is not None:
            for model in (chat, second):
                if model is not None:
                    model.observe = metrics.observe_model_call
            if embedder is not None:
                embedder = MeasuredEmbedder(embedder, metrics.observe_embedding)
        router = ModelRouter(chat, second)
        if metrics is not None:
            router.on_answer = lambda asked, answered: metrics.query_answers.labels(asked, answered).inc()
        # MemoryService: the embedding model is checked against the recorded one before any call.
        # It also starts the background pass that embeds acknowledged entries (and resumes its backlog).
        self.memory = MemoryArchive(self.storage, embedder, chat, backlog_batch_size=self.config.embedding_backlog_batch,
                                    retention=MaintenanceSettings.of(self.config).retention)
        await self.memory.start()
        # StateService: working memory is restored before the first call can read it.
        state_settings = StateSettings.of(self.config)
        self.state = StateEngine(self.storage, state_settings, token_counter(self.config.tiktoken_cache_dir),
                                 embedder, chat, router)
        await self.state.start()
        # The YAML mirror and running summaries follow committed events, like the other background loops.
        self.state_follower = StateFollower(self.state)
        await self.storage.run_alone("summaries", self.state_follower.start, self.state_follower.stop)
        admission = Admission(self.config.max_in_flight_calls, self.config.overload_retry_after_ms,
                              self.config.max_loop_lag_ms)
        self._admission_watch = asyncio.create_task(admission.watch_loop(), name="taskmem-admission")
        # The guard wraps every taskmem.v1 handler as it is registered (WrappedRegistration), not as an
        # interceptor: grpc.aio awaits each interceptor on every call to find the handler.
        guard = GuardInterceptor(self.keys, admission, TaskAccess(self.storage))
        interceptors: list[grpc.aio.ServerInterceptor] = []
        if metrics is not None or self.config.log_format == "json" or self.config.log_level.upper() == "DEBUG":
            interceptors.insert(0, MetricsInterceptor(metrics))  # outermost: refused calls are counted too
        if self.config.otlp_endpoint:
            tracing, self.stop_tracing = rpc_tracing(self.config.otlp_endpoint)
            interceptors.insert(0, tracing)
        server = grpc.aio.server(interceptors=interceptors or None, options=_server_options(self.config))
        guarded = WrappedRegistration(server, guard)
        task_service_pb2_grpc.add_TaskServiceServicer_to_server(
            TaskService(self.storage, MaintenanceSettings.of(self.config).retention, meter.budget_tokens,
                        plan_judge_for(chat, state_settings.adjudication, state_settings.adjudication_timeout_seconds)),
            guarded)
        wait_service_pb2_grpc.add_WaitServiceServicer_to_server(
            WaitService(self.storage, self.scheduler, WaitSettings.of(self.config), self.file_roots), guarded)
        state_service_pb2_grpc.add_StateServiceServicer_to_server(StateService(self.state), guarded)
        memory_service_pb2_grpc.add_MemoryServiceServicer_to_server(MemoryService(self.memory), guarded)
        checkpoint_service_pb2_grpc.add_CheckpointServiceServicer_to_server(
            CheckpointService(CheckpointEngine(self.storage, MaintenanceSettings.of(self.config).retention)), guarded)
        health_pb2_grpc.add_HealthServicer_to_server(self.health, server)
        if self.config.reflection:
            add_reflection(server, [*SERVICE_NAMES, health.SERVICE_NAME])
        self.port = _bind(server, self.config)
        if self.config.http_listen:
            # The web view calls these same services with the caller's key over a socket only this
            # process's user can open, whatever the gRPC listen address and TLS.
            self._web_socket_dir = tempfile.TemporaryDirectory(prefix="taskmem-web-")
            self.web = WebView(self.config, self.keys, f"unix:{self._web_socket_dir.name}/grpc.sock",
                               self.storage.events)
            server.add_insecure_port(self.web.grpc_target)
        self.server = server
        await server.start()
        for name in ["", *SERVICE_NAMES]:
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        if metrics is not None:
            self.metrics_endpoint = MetricsEndpoint(metrics, self.config.metrics_listen)
            print(METRICS_LINE.format(address=await self.metrics_endpoint.start()), flush=True)
        if self.web is not None:
            self.web_url = await self.web.start()
        host = self.config.listen.rpartition(":")[0]
        return f"{host}:{self.port}"

    def _newer_schema(self, newer: SchemaTooNew) -> None:
        self.stepped_aside = newer
        self.step_aside.set()

    async def stop(self) -> None:
        """Health goes NOT_SERVING, background loops stop, streams end, in-flight calls get a grace period,
        the database closes."""
        await self.health.enter_graceful_shutdown()
        if self.schema_watch is not None:
            await self.schema_watch.stop()
        if self.maintenance is not None:
            await self.maintenance.stop()
        if self.claim_sweeper is not None:
            await self.claim_sweeper.stop()
        if self.memory is not None:
            await self.memory.stop()  # the embedding backlog: what it has not stored stays queued
        if self.scheduler is not None:
            await self.scheduler.stop()
        if self.state_follower is not None:
            await self.state_follower.stop()
        if self.webhooks is not None:
            await self.webhooks.stop()
        if self.metrics_endpoint is not None:
            await self.metrics_endpoint.stop()
        if self.storage is not None:
            self.storage.events.close()
        if self.web is not None:
            await self.web.stop()  # after the event streams end, so open pages' streams close at once
        if self.server is not None:
            await self.server.stop(self.config.shutdown_grace_seconds)
        if self._admission_watch is not None:
            self._admission_watch.cancel()
        if self._web_socket_dir is not None:
            self._web_socket_dir.cleanup()
        if self.storage is not None:
            await self.storage.close()
        if self.keys is not None:
            await self.keys.stop()
        if self.stop_tracing is not None:
            self.stop_tracing()  # exports the spans still buffered


def _bind(server: grpc.aio.Server, config: Config) -> int:
    """The port `server` listens on; an address that cannot be bound is a one-line configuration error."""
    try:
        if config.tls_cert_file or config.tls_key_file:
            credentials = grpc.ssl_server_credentials([(
                Path(config.tls_key_file).read_bytes(), Path(config.tls_cert_file).read_bytes())])
            return server.add_secure_port(config.listen, credentials)
        return server.add_insecure_port(config.listen)
    except RuntimeError:  # grpc's only word is "Failed to bind to address"
        raise ConfigError(f"listen: cannot listen on {config.listen}: the address is in use or not available "
                          "on this machine") from None


# How long a refused start-up may take to close before the process exits regardless.
REFUSED_START_CLOSE_SECONDS = 20.0


async def serve(config: Config) -> None:
    server = TaskmemServer(config)
    try:
        address = await server.start()
    except BaseException as error:
        # A refused start (e.g. another embedding model) must still end the database threads, or the
        # process would print its error and never exit. It has accepted nothing, so when closing does not
        # finish in time (a PostgreSQL connection's task was seen to outlive its cancellation, and
        # asyncio.run would then wait on it forever) the process says why and exits.
        try:
            async with asyncio.timeout(REFUSED_START_CLOSE_SECONDS):
                await server.stop()
        except TimeoutError:
            log.warning("the refused start-up did not close within %s s; exiting", REFUSED_START_CLOSE_SECONDS)
            print(f"taskmem: {error}" if isinstance(error, ConfigError) else "taskmem: start-up failed",
                  file=sys.stderr, flush=True)
            os._exit(2)
        raise
    # What start-up built (configuration, the token encoder, caches) lives as long as the process;
    # freezing it keeps the collector's full passes from walking it again and again. Measured under
    # bench/events_bench.py: full collections of 14–40 ms became 2–14 ms, a tail-latency stall less.
    gc.freeze()
    if server.web_url:
        print(WEB_READY_LINE.format(url=server.web_url), flush=True)
    print(READY_LINE.format(address=address), flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    stopping = asyncio.create_task(stop.wait())
    stepping_aside = asyncio.create_task(server.step_aside.wait())
    await asyncio.wait([stopping, stepping_aside], return_when=asyncio.FIRST_COMPLETED)
    for waiting in (stopping, stepping_aside):
        waiting.cancel()
    log.info("shutting down")
    await server.stop()
    if server.stepped_aside is not None:
        raise server.stepped_aside


def run(config: Config) -> int:
    configure_logging(config.log_level, config.log_format, config.debug_loggers)
    # Before the event loop, the database threads and gRPC's start allocating.
    fix_malloc_thresholds(config.malloc_mmap_threshold_bytes)
    try:
        asyncio.run(serve(config))
    except ConfigError as error:
        print(f"taskmem: {error}", file=sys.stderr)
        return 2
    except SchemaTooNew as error:
        print(f"taskmem: refusing to serve: {error}", file=sys.stderr)
        return 3
    return 0
