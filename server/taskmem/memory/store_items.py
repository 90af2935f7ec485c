"""The data plane of store items (MemoryService's PutStoreItems, GetStoreItems, SearchStoreItems,
ListStoreNamespaces): transactions, TTL refresh, and search through the archive's hybrid search."""

from __future__ import annotations

import json
from collections.abc import Sequence

from taskmem.core import store_items as core
from taskmem.core.ids import now_us
from taskmem.core.memory import MemoryFilter
from taskmem.core.memory_search import SearchMode
from taskmem.core.store_items import MatchType, StoreItem, StoreWrite
from taskmem.memory.archive import MemoryArchive
from taskmem.store.access import Transaction
from taskmem.store.memory import store_items as store

# A query search asks the archive for this many candidates per item wanted (a filter may drop some).
_CANDIDATES_PER_ITEM, _CANDIDATES_MAX = 4, 500


class StoreItems:
    def __init__(self, archive: MemoryArchive) -> None:
        self._archive = archive
        self._storage = archive.storage

    async def put(self, namespace: str, correlation_id: str, writes: Sequence[StoreWrite],
                  task_id: str) -> tuple[int, int]:
        done = await self._storage.write(lambda tx: store.put_items(tx, writes, task_id), namespace, correlation_id)
        if any(write.index_text for write in writes):
            self._archive.entries_written()  # the new index entries join the embedding backlog
        return done

    async def get(self, namespace: str, correlation_id: str, keys: Sequence[tuple[tuple[str, ...], str]],
                  refresh: bool) -> list[StoreItem]:
        if not refresh:
            return await self._storage.read(store.get_items, namespace, keys, now_us())

        def read_and_refresh(tx: Transaction) -> list[StoreItem]:
            return store.refresh(tx, store.get_items(tx, tx.namespace, keys, tx.now))

        return await self._storage.write(read_and_refresh, namespace, correlation_id)

    async def search(self, namespace: str, correlation_id: str, prefix: tuple[str, ...], wanted: dict[str, object],
                     query: str, limit: int, offset: int, refresh: bool) -> list[tuple[StoreItem, float | None]]:
        """With a query: the items the hybrid search found, best first, then the other matching items."""
        items = await self._storage.read(store.items_under, namespace, prefix, now_us())
        matching = [item for item in items if core.matches(json.loads(item.value_json), wanted)]
        ranked: list[tuple[StoreItem, float | None]] = []
        if query and matching:
            candidates = min(_CANDIDATES_MAX, max(10, (offset + limit) * _CANDIDATES_PER_ITEM))
            found = await self._archive.search(namespace, query, SearchMode.HYBRID,
                                               MemoryFilter(tags=(core.prefix_tag(prefix),)), candidates)
            by_entry = {item.memory_entry_id: item for item in matching if item.memory_entry_id}
            scored = [(by_entry[entry.id], hit.score) for hit, entry in found.hits if entry.id in by_entry]
            seen = {(item.path, item.key) for item, _ in scored}
            ranked = [*scored, *((item, None) for item in matching if (item.path, item.key) not in seen)]
        else:
            ranked = [(item, None) for item in matching]
        page = ranked[offset:offset + limit]
        if refresh and any(item.ttl_us for item, _ in page):
            refreshed = await self._storage.write(lambda tx: store.refresh(tx, [item for item, _ in page]),
                                                  namespace, correlation_id)
            page = [(item, score) for item, (_, score) in zip(refreshed, page)]
        return page

    async def list_namespaces(self, namespace: str, conditions: Sequence[tuple[MatchType, tuple[str, ...]]],
                              max_depth: int, limit: int, offset: int) -> list[tuple[str, ...]]:
        paths = await self._storage.read(store.paths, namespace, now_us())
        return core.list_namespaces(paths, conditions, max_depth, offset, limit)
