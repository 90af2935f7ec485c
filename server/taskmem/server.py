"""Assembling and running the gRPC server: services, health, reflection, TLS, graceful shutdown."""

from __future__ import annotations

import asyncio
import gc
import ipaddress
import logging
import signal
import sys
from pathlib import Path

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from taskmem.api.interceptors import GuardInterceptor
from taskmem.api.memory_service import MemoryService
from taskmem.api.state_service import StateService
from taskmem.api.task_service import TaskService
from taskmem.api.wait_convert import event_payload
from taskmem.api.wait_service import WaitService
from taskmem.config import Config, ConfigError
from taskmem.maintenance import MaintenanceLoop
from taskmem.memory.archive import MemoryArchive
from taskmem.providers.chat import chat_model_from_config
from taskmem.providers.embeddings import embedder_from_config
from taskmem.state.engine import StateEngine
from taskmem.store.storage import Storage
from taskmem.tokenizer import token_counter
from taskmem.v1 import memory_service_pb2, memory_service_pb2_grpc, state_service_pb2, state_service_pb2_grpc
from taskmem.v1 import task_service_pb2, task_service_pb2_grpc, wait_service_pb2, wait_service_pb2_grpc
from taskmem.waits.scheduler import WaitScheduler

log = logging.getLogger("taskmem")

READY_LINE = "taskmem: serving on {address}"
MAX_MESSAGE_BYTES = 4 * 1024 * 1024
SERVICE_NAMES = [
    task_service_pb2.DESCRIPTOR.services_by_name["TaskService"].full_name,
    wait_service_pb2.DESCRIPTOR.services_by_name["WaitService"].full_name,
    state_service_pb2.DESCRIPTOR.services_by_name["StateService"].full_name,
    memory_service_pb2.DESCRIPTOR.services_by_name["MemoryService"].full_name,
]


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind_allowed(config: Config) -> None:
    """With no API keys, refuse to serve anything but loopback unless --insecure says so."""
    host = config.listen.rpartition(":")[0]
    if config.open_namespace and not _is_loopback(host) and not config.insecure:
        raise ConfigError(f"listen: {config.listen} is not a loopback address and no api_keys are configured;"
                          " configure api_keys or pass --insecure")


def _server_options(config: Config) -> list[tuple[str, int]]:
    return [
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
        # Let clients keep idle connections alive with pings this often, no more (grpc/grpc#9902).
        ("grpc.http2.min_recv_ping_interval_without_data_ms", config.min_ping_interval_ms),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.so_reuseport", 0),
    ]


class TaskmemServer:
    """A running server: start() binds and serves, stop() shuts down in order."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.storage: Storage | None = None
        self.server: grpc.aio.Server | None = None
        self.scheduler: WaitScheduler | None = None
        self.maintenance: MaintenanceLoop | None = None
        self.state: StateEngine | None = None
        self.memory: MemoryArchive | None = None
        self.health = health.aio.HealthServicer()
        self.port = 0

    async def start(self) -> str:
        check_bind_allowed(self.config)
        self.storage = await Storage.open(
            self.config.database, event_payload, queue_size=self.config.subscriber_queue_size,
            batch_size=self.config.writer_batch_size)
        # The scheduler resumes stored waits before the first call can create or end one.
        self.scheduler = WaitScheduler(self.storage)
        await self.scheduler.start()
        self.maintenance = MaintenanceLoop(self.storage, self.config)
        self.maintenance.start()
        # One embedder and one model client for both services: the builtin model loads once.
        embedder, chat = embedder_from_config(self.config), chat_model_from_config(self.config)
        # MemoryService: the embedding model is checked against the recorded one before any call.
        # It also starts the background pass that embeds acknowledged entries (and resumes its backlog).
        self.memory = MemoryArchive(self.storage, embedder, chat, backlog_batch_size=self.config.embedding_backlog_batch)
        await self.memory.start()
        # StateService: working memory is restored before the first call can read it.
        self.state = StateEngine(self.storage, self.config, token_counter(self.config.tiktoken_cache_dir),
                                 embedder, chat)
        await self.state.start()
        server = grpc.aio.server(interceptors=[GuardInterceptor(self.config)], options=_server_options(self.config))
        task_service_pb2_grpc.add_TaskServiceServicer_to_server(TaskService(self.storage), server)
        wait_service_pb2_grpc.add_WaitServiceServicer_to_server(
            WaitService(self.storage, self.scheduler, self.config), server)
        state_service_pb2_grpc.add_StateServiceServicer_to_server(StateService(self.state), server)
        memory_service_pb2_grpc.add_MemoryServiceServicer_to_server(MemoryService(self.memory), server)
        health_pb2_grpc.add_HealthServicer_to_server(self.health, server)
        reflection.enable_server_reflection([*SERVICE_NAMES, health.SERVICE_NAME, reflection.SERVICE_NAME], server)
        if self.config.tls_cert_file or self.config.tls_key_file:
            credentials = grpc.ssl_server_credentials([(
                Path(self.config.tls_key_file).read_bytes(), Path(self.config.tls_cert_file).read_bytes())])
            self.port = server.add_secure_port(self.config.listen, credentials)
        else:
            self.port = server.add_insecure_port(self.config.listen)
        self.server = server
        await server.start()
        for name in ["", *SERVICE_NAMES]:
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        host = self.config.listen.rpartition(":")[0]
        return f"{host}:{self.port}"

    async def stop(self) -> None:
        """Health goes NOT_SERVING, background loops stop, streams end, in-flight calls get a grace period,
        the database closes."""
        await self.health.enter_graceful_shutdown()
        if self.maintenance is not None:
            await self.maintenance.stop()
        if self.memory is not None:
            await self.memory.stop()  # the embedding backlog: what it has not stored stays queued
        if self.scheduler is not None:
            await self.scheduler.stop()
        if self.storage is not None:
            self.storage.events.close()
        if self.server is not None:
            await self.server.stop(self.config.shutdown_grace_seconds)
        if self.state is not None:
            await self.state.stop()  # snapshots working memory: after the last call, before the database closes
        if self.storage is not None:
            await self.storage.close()


async def serve(config: Config) -> None:
    server = TaskmemServer(config)
    try:
        address = await server.start()
    except BaseException:
        # A refused start (e.g. another embedding model) must still end the database threads, or the
        # process would print its error and never exit.
        await server.stop()
        raise
    # What start-up built (configuration, the token encoder, caches) lives as long as the process;
    # freezing it keeps the collector's full passes from walking it again and again. Measured under
    # bench/events_bench.py: full collections of 14–40 ms became 2–14 ms, a tail-latency stall less.
    gc.freeze()
    print(READY_LINE.format(address=address), flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    log.info("shutting down")
    await server.stop()


def run(config: Config) -> int:
    logging.basicConfig(level=config.log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        asyncio.run(serve(config))
    except ConfigError as error:
        print(f"taskmem: {error}", file=sys.stderr)
        return 2
    return 0
