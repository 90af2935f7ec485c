"""Runs one client command on an event loop, turning the ways it can end into an exit status.

- Ctrl-C (SIGINT) or SIGTERM cancels the command: a command that runs until stopped
  (`events tail --follow`) exits 0, any other exits 130, never with a traceback.
- A gRPC error prints `taskmem: <CODE>: <details>` on stderr and exits 1.
- A file-system or usage problem the command reports (CommandError, OSError) prints
  `taskmem: <message>` and exits 1.
- A closed stdout (`taskmem events tail | head`) ends quietly.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Awaitable, Callable

import grpc

EXIT_OK, EXIT_FAILED, EXIT_INTERRUPTED = 0, 1, 130


class CommandError(Exception):
    """An expected failure a command reports in one line, for example "DIR already exists"."""


def describe_rpc_error(error: grpc.RpcError) -> str:
    code = error.code() if hasattr(error, "code") else None
    details = error.details() if hasattr(error, "details") else str(error)
    name = code.name if isinstance(code, grpc.StatusCode) else "UNKNOWN"
    return f"taskmem: {name}: {details or 'no details'}"


def run_client_command(command: Callable[[], Awaitable[None]], *, runs_until_stopped: bool = False) -> int:
    try:
        interrupted = asyncio.run(_run_interruptibly(command))
    except grpc.RpcError as error:
        print(describe_rpc_error(error), file=sys.stderr)
        return EXIT_FAILED
    except (CommandError, OSError) as error:
        if isinstance(error, BrokenPipeError):
            _silence_stdout()
            return EXIT_OK
        print(f"taskmem: {error}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:  # a SIGINT that arrived before the handlers were installed
        interrupted = True
    if interrupted:
        return EXIT_OK if runs_until_stopped else EXIT_INTERRUPTED
    return EXIT_OK


async def _run_interruptibly(command: Callable[[], Awaitable[None]]) -> bool:
    """Run the command; True if SIGINT/SIGTERM stopped it."""
    task = asyncio.ensure_future(command())
    stopped = False

    def stop() -> None:
        nonlocal stopped
        stopped = True
        task.cancel()

    loop = asyncio.get_running_loop()
    handled: list[signal.Signals] = []
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop)
            handled.append(signum)
    try:
        await task
    except asyncio.CancelledError:
        if not stopped:
            raise
    finally:
        for signum in handled:
            loop.remove_signal_handler(signum)
    return stopped


def _silence_stdout() -> None:
    # Python flushes stdout again at exit; point it at /dev/null so that flush cannot fail too.
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
