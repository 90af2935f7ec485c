"""Stepping aside when a newer release migrates the database under a running server.

Replicas share one PostgreSQL database, so during a rolling upgrade the first upgraded replica migrates the
schema while the older ones still serve. An older replica must not go on writing a shape it does not know:
every interval it reads the migrations the database records, and once one appears that it does not ship it
says so (naming both schema versions) and the server shuts down as on SIGTERM (its in-flight calls finish;
its clients reconnect to an upgraded replica). On SQLite the same catches `taskmem migrate` of a newer
release run against the file of a live older server.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from taskmem.store.event_log import EventLogClosed
from taskmem.store.migration_files import SchemaTooNew, check_not_newer, recorded_migrations
from taskmem.store.storage import Storage, WriterClosed

log = logging.getLogger(__name__)


class SchemaWatch:
    def __init__(self, storage: Storage, shipped: list[tuple[int, str, str]], interval_seconds: float,
                 on_newer: Callable[[SchemaTooNew], None]) -> None:
        self._storage = storage
        self._shipped = shipped
        self._interval = interval_seconds
        self._on_newer = on_newer
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._interval > 0:
            self._task = asyncio.create_task(self._run(), name="taskmem-schema-watch")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self._interval)
            try:
                check_not_newer(await self._storage.read(recorded_migrations), self._shipped)
            except SchemaTooNew as newer:
                log.error("stepping aside: %s", newer)
                self._on_newer(newer)
                return
            except (WriterClosed, EventLogClosed):
                return
            except Exception as error:  # the database is unreachable: look again next time
                log.warning("schema watch: reading schema_migrations failed (%s)", error)
