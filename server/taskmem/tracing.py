"""OpenTelemetry tracing of RPCs (`--otlp-endpoint`), with the upstream grpc.aio server instrumentation.

A span per RPC (named by its full method, with the status code), exported in batches over
OTLP/gRPC; an http:// endpoint is sent in plaintext, https:// with TLS. The packages are an
optional extra (`pip install taskmem[tracing]`); without them the setting is refused with what
to install.
"""

from __future__ import annotations

from collections.abc import Callable

import grpc

from taskmem.config import ConfigError


def rpc_tracing(endpoint: str) -> tuple[grpc.aio.ServerInterceptor, Callable[[], None]]:
    """The interceptor that traces every RPC, and the function that flushes and stops the exporter."""
    try:
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
        from opentelemetry.instrumentation.grpc import aio_server_interceptor
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        raise ConfigError("otlp_endpoint: tracing needs the tracing extra: pip install 'taskmem[tracing]'") from None
    provider = TracerProvider(resource=Resource.create({"service.name": "taskmem"}))
    exporter = OTLPSpanExporter(endpoint=endpoint, insecure=endpoint.startswith("http://"))
    provider.add_span_processor(BatchSpanProcessor(exporter))
    interceptor: grpc.aio.ServerInterceptor = aio_server_interceptor(tracer_provider=provider)
    return interceptor, provider.shutdown
