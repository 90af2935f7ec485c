"""`--log-format json`: one JSON object per log line, with the running call's context.

Fields: time, level, logger, message, and when a call is running its method, namespace and
correlation_id; duration_ms on the line that ends a call; the exception text when there is one.
"""

from __future__ import annotations

import contextvars
import datetime
import json
import logging
import sys

from taskmem.api.scope import CALL_SCOPE

# Set by the metrics interceptor for the running call.
CALL_METHOD: contextvars.ContextVar[str | None] = contextvars.ContextVar("taskmem_call_method", default=None)
CALL_DURATION_MS: contextvars.ContextVar[float | None] = contextvars.ContextVar("taskmem_call_duration_ms",
                                                                                default=None)


class JsonLogFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "time": datetime.datetime.fromtimestamp(record.created, datetime.UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        method = CALL_METHOD.get()
        if method is not None:
            line["method"] = method
        scope = CALL_SCOPE.get(None)
        if scope is not None:
            line["namespace"] = scope.namespace
            line["correlation_id"] = scope.correlation_id
        duration = CALL_DURATION_MS.get()
        if duration is not None:
            line["duration_ms"] = duration
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False)


# Libraries log at this level at most, whatever --log-level says, unless named in debug_loggers.
LIBRARY_LEVEL = logging.WARNING


def configure_logging(level: str, log_format: str, debug_loggers: tuple[str, ...] = ()) -> None:
    """taskmem's loggers at `level`; every other library's at WARNING (or above, if `level` is), since their
    debug lines carry any namespace's data (httpx: each URL polled; sse_starlette: each event streamed);
    the loggers named in debug_loggers at DEBUG."""
    handler = logging.StreamHandler(sys.stderr)
    if log_format == "json":
        handler.setFormatter(JsonLogFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    own = logging.getLevelName(level.upper())
    logging.basicConfig(level=max(own, LIBRARY_LEVEL), handlers=[handler])
    logging.getLogger("taskmem").setLevel(own)
    for name in debug_loggers:
        logging.getLogger(name).setLevel(logging.DEBUG)
