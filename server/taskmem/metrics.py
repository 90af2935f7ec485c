"""Prometheus metrics (`--metrics-listen HOST:PORT`): what an operator watches.

Everything lives in one registry of our own (not the process-global default), so two servers
in one process — tests — never share counters. Counters and histograms are fed where the
thing happens (the RPC interceptor, the writer's batch hook, the webhook sender, the model
clients, the wait probes); gauges that are a look at the current state (subscribers and
their lag, waits by kind and status, the database size) are read when /metrics is scraped.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Awaitable, Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from taskmem.core.model_usage import ModelCall
from taskmem.store.waits import waits as wait_store
from taskmem.store.storage import Storage

log = logging.getLogger(__name__)

_LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
_BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)

Refresh = Callable[[], Awaitable[None]]


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.rpcs = Counter("taskmem_rpcs", "RPCs finished, by method and status code", ["method", "code"], registry=r)
        self.rpc_seconds = Histogram("taskmem_rpc_duration_seconds", "RPC latency (streams: until they end)",
                                     ["method"], buckets=_LATENCY_BUCKETS, registry=r)
        self.writer_batch = Histogram("taskmem_writer_batch_size", "Writes per group commit",
                                      buckets=_BATCH_BUCKETS, registry=r)
        self.writer_commit_seconds = Histogram("taskmem_writer_commit_seconds", "Group commit latency",
                                               buckets=_LATENCY_BUCKETS, registry=r)
        self.storage_full = Counter("taskmem_storage_full_writes", "Writes refused because the database's disk is"
                                    " full (answered RESOURCE_EXHAUSTED, reason STORAGE_FULL)", registry=r)
        self.events = Counter("taskmem_events_appended", "Events appended to the log", registry=r)
        self.subscribers = Gauge("taskmem_subscribers", "Live event subscriptions (streams and internal watchers)",
                                 registry=r)
        self.subscriber_lag = Gauge("taskmem_subscriber_lag_events",
                                    "Events queued for the slowest subscriber (0 with none)", registry=r)
        self.subscriber_lag_total = Gauge("taskmem_subscriber_lag_events_sum", "Events queued over all subscribers",
                                          registry=r)
        self.waits = Gauge("taskmem_waits", "Stored waits by kind and status", ["kind", "status"], registry=r)
        self.wait_probes = Counter("taskmem_wait_probes", "Polls of http and file waits, by kind and outcome"
                                   " (matched, waiting, error)", ["kind", "outcome"], registry=r)
        self.webhook_deliveries = Counter("taskmem_webhook_attempts", "Webhook POST attempts by outcome"
                                          " (delivered, failed, dead_lettered)", ["outcome"], registry=r)
        self.webhook_seconds = Histogram("taskmem_webhook_attempt_seconds", "Webhook POST latency",
                                         buckets=_LATENCY_BUCKETS, registry=r)
        self.model_calls = Counter("taskmem_model_calls", "Chat model calls by tier (utility, second), model and outcome (ok, timeout, error)",
                                   ["tier", "model", "outcome"], registry=r)
        self.model_seconds = Histogram("taskmem_model_call_seconds", "Chat model call latency (retries included)",
                                       ["tier", "model"], buckets=_LATENCY_BUCKETS, registry=r)
        self.embedding_calls = Counter("taskmem_embedding_calls", "Embedding calls by outcome", ["outcome"],
                                       registry=r)
        self.embedding_seconds = Histogram("taskmem_embedding_seconds", "Embedding call latency",
                                           buckets=_LATENCY_BUCKETS, registry=r)
        self.model_tokens = Counter("taskmem_model_tokens", "Tokens of the server's model calls (chat and embedding"
                                    " endpoints, from their `usage`) by model, purpose and direction (in, out)",
                                    ["model", "purpose", "direction"], registry=r)
        self.model_usage_calls = Counter("taskmem_model_usage_calls", "The server's model calls (chat and embedding"
                                         " endpoints) by model, purpose and outcome (ok, timeout, error, refused)",
                                         ["model", "purpose", "outcome"], registry=r)
        self.model_budget_refusals = Counter("taskmem_model_budget_refusals", "Model calls refused because their"
                                             " namespace's model_token_budgets was used up, by purpose",
                                             ["purpose"], registry=r)
        self.query_answers = Counter("taskmem_query_answers", "QueryTask answers by the model asked first and the"
                                     " model that answered", ["asked", "answered_by"], registry=r)
        self.database_bytes = Gauge("taskmem_database_bytes", "Size of the database file with its WAL", registry=r)
        self._refreshers: list[Refresh] = []

    # --- feeds ------------------------------------------------------------------------------------

    def observe_batch(self, writes: int, events: int, seconds: float) -> None:
        """The writer's hook: one group commit of `writes` mutations appending `events` events."""
        self.writer_batch.observe(writes)
        self.writer_commit_seconds.observe(seconds)
        if events:
            self.events.inc(events)

    def observe_model_call(self, tier: str, model: str, outcome: str, seconds: float) -> None:
        self.model_calls.labels(tier, model, outcome).inc()
        self.model_seconds.labels(tier, model).observe(seconds)

    def observe_model_usage(self, call: ModelCall) -> None:
        purpose = call.purpose.value if call.purpose else ""
        self.model_usage_calls.labels(call.model, purpose, call.outcome.value).inc()
        if call.tokens_in:
            self.model_tokens.labels(call.model, purpose, "in").inc(call.tokens_in)
        if call.tokens_out:
            self.model_tokens.labels(call.model, purpose, "out").inc(call.tokens_out)

    def observe_embedding(self, outcome: str, seconds: float) -> None:
        self.embedding_calls.labels(outcome).inc()
        self.embedding_seconds.observe(seconds)

    def observe_database_file(self, path: str) -> None:
        size = 0
        for suffix in ("", "-wal"):
            with contextlib.suppress(OSError):
                size += os.stat(path + suffix).st_size
        self.database_bytes.set(size)

    def on_scrape(self, refresh: Refresh) -> None:
        """Run `refresh` (which sets gauges) before every scrape."""
        self._refreshers.append(refresh)

    async def render(self) -> bytes:
        for refresh in self._refreshers:
            try:
                await refresh()
            except Exception:  # a gauge left stale must not cost the whole scrape
                log.exception("refreshing metrics failed")
        return generate_latest(self.registry)


class MetricsEndpoint:
    """A minimal HTTP/1.1 server on asyncio streams answering GET /metrics (anything else: 404).

    It runs in the server's event loop, so scrape-time gauges can read the database through the
    same async storage as the RPCs; prometheus_client's own server runs in a thread and could not.
    """

    def __init__(self, metrics: Metrics, listen: str) -> None:
        self._metrics = metrics
        self._listen = listen
        self._server: asyncio.Server | None = None
        self.port = 0

    async def start(self) -> str:
        host, _, port = self._listen.rpartition(":")
        self._server = await asyncio.start_server(self._serve, host.strip("[]") or "127.0.0.1", int(port))
        self.port = self._server.sockets[0].getsockname()[1]
        return f"{host}:{self.port}"

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request_line = await asyncio.wait_for(reader.readline(), 10)
            while (await asyncio.wait_for(reader.readline(), 10)) not in (b"\r\n", b"\n", b""):
                pass  # headers: nothing in them changes the answer
            method, path, *_ = request_line.decode("latin-1").split(" ") + ["", ""]
            if method == "GET" and path.split("?")[0] == "/metrics":
                status, content_type, body = "200 OK", CONTENT_TYPE_LATEST, await self._metrics.render()
            else:
                status, content_type, body = "404 Not Found", "text/plain", b"only GET /metrics is served\n"
            writer.write(f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
                         "Connection: close\r\n\r\n".encode() + body)
            await writer.drain()
        except (TimeoutError, ConnectionError, UnicodeDecodeError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()


def watch_storage(metrics: Metrics, storage: Storage, database_path: str) -> None:
    """Feed the writer's batches to the metrics, and read the current-state gauges at each scrape."""
    storage.observe_batches(metrics.observe_batch)
    storage.observe_storage_full(metrics.storage_full.inc)

    async def refresh() -> None:
        backlogs = storage.events.backlogs()
        metrics.subscribers.set(len(backlogs))
        metrics.subscriber_lag.set(max(backlogs, default=0))
        metrics.subscriber_lag_total.set(sum(backlogs))
        metrics.waits.clear()
        for kind, status, count in await storage.read(wait_store.wait_counts):
            metrics.waits.labels(kind.removeprefix("WAIT_KIND_").lower(),
                                 status.removeprefix("WAIT_STATUS_").lower()).set(count)
        metrics.observe_database_file(database_path)

    metrics.on_scrape(refresh)
