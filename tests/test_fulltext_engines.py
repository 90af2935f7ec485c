"""Full-text ranking is the same Okapi BM25 on SQLite and PostgreSQL (always run on both, whatever --engine
says): a rare word outranks a common one, the statistics are those of the entries searched and of every
replica's writes, and HYBRID's share of the full-text score (0 to 1) is the same, so both engines give the
same FULLTEXT and HYBRID results for the same entries (their words chosen to stem alike under Porter and
PostgreSQL's 'english' Snowball, and to hold no stop word)."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import numpy as np
import psycopg
import pytest

from taskmem.api.event_encoding import event_payload
from taskmem.core.ids import now_us
from taskmem.core.memory import MemoryFilter, MemoryType, NewMemoryEntry
from taskmem.core.memory_search import FULLTEXT_WEIGHT, SEMANTIC_WEIGHT, SearchMode, full_text_query
from taskmem.core.tasks import Task, TaskStatus
from taskmem.store.memory import memory_vectors
from taskmem.store.tasks import tasks as task_store
from taskmem.store.memory.memory_entries import insert_memory_entries
from taskmem.store.memory.memory_search import ranked_matches, search_hits
from taskmem.store.postgres import connection as pg_connection
from taskmem.store.access import Transaction
from taskmem.store.engines import open_storage
from taskmem.store.storage import Storage
from taskmem.store.state.view_reads import search_task_memories
from tests.support.postgres import database_url

DIMENSION = 4
MODEL = "test-model"
NAMESPACE = "default"

# (task, summary, detail): "deploy" is common (5 of 10 entries, below half: it keeps a small weight),
# "zebra" rare; tsk_b holds "deploy" in 2 of its 3 entries, so narrowed to it the word weighs less.
ENTRIES = [
    ("tsk_a", "deploy deploy rollback", "deploy pipeline logs"),
    ("tsk_a", "zebra crossing painted", "near the school"),
    ("tsk_a", "deploy window friday", ""),
    ("tsk_a", "coffee machine broken", "kitchen"),
    ("tsk_a", "printer jammed again", "third floor"),
    ("tsk_a", "lunch order pizza", ""),
    ("tsk_a", "budget review meeting", "quarterly numbers"),
    ("tsk_b", "deploy blocked zebra", "waiting approval"),
    ("tsk_b", "deploy finished", "green build"),
    ("tsk_b", "garden hose leaking", ""),
]
# Tags by entry (0-based): blue or green on exactly tsk_b's entries (entry 7 carries both), red elsewhere.
TAGS = {0: ("red",), 7: ("blue", "green"), 8: ("blue",), 9: ("green",)}


def vector_of(i: int) -> np.ndarray:
    """A distinct unit vector per entry, so HYBRID's semantic half is deterministic and the same on both."""
    angle = i * 0.3
    return np.array([math.cos(angle), math.sin(angle), 0.1 * i, 1.0], dtype=np.float32) / np.float32(
        math.sqrt(1.0 + 0.01 * i * i + 1.0))


async def open_with_tasks(database: str) -> Storage:
    storage = await open_storage(database, event_payload)
    await storage.write(lambda tx: memory_vectors.prepare_index(tx, MODEL, DIMENSION), "", "test")

    def create(tx: Transaction) -> None:
        for task_id in ("tsk_a", "tsk_b"):
            task_store.create_task(tx, Task(NAMESPACE, task_id, task_id, TaskStatus.EXECUTING, now_us(), now_us()), [])
    await storage.write(create, NAMESPACE, "test")
    return storage


async def add(storage: Storage, rows: Sequence[tuple[str, str, str]], first: int) -> None:
    entries = [NewMemoryEntry(task_id=task, type=MemoryType.CONTEXT, summary=summary, detail=detail,
                              tags=TAGS.get(first + i, ())) for i, (task, summary, detail) in enumerate(rows)]
    vectors = np.stack([vector_of(first + i) for i in range(len(rows))])
    await storage.write(lambda tx: insert_memory_entries(tx, entries, vectors), NAMESPACE, "test")


@pytest.fixture
async def engines(tmp_path: Path) -> AsyncIterator[dict[str, Storage]]:
    """The same entries on SQLite and on PostgreSQL, there written half by one replica and half by another."""
    sqlite = await open_with_tasks(str(tmp_path / "taskmem.db"))
    url = database_url(str(tmp_path / "fulltext"))
    replica_one = await open_with_tasks(url)
    replica_two = await open_storage(url, event_payload)
    await add(sqlite, ENTRIES, 0)
    await add(replica_one, ENTRIES[:5], 0)
    await add(replica_two, ENTRIES[5:], 5)
    yield {"sqlite": sqlite, "postgres": replica_one}
    for storage in (sqlite, replica_one, replica_two):
        await storage.close()


async def fulltext(storage: Storage, text: str, f: MemoryFilter = MemoryFilter(), limit: int = 10
                   ) -> list[tuple[int, float, float]]:
    return await storage.read(ranked_matches, NAMESPACE, full_text_query(text), f, limit)


async def test_a_rare_word_outranks_a_common_one_held_more_often(engines: dict[str, Storage]) -> None:
    for storage in engines.values():
        found = await fulltext(storage, "deploy zebra")
        # zebra (2 of 10 entries) outweighs deploy (5 of 10) though the first entry holds deploy 3 times;
        # the one holding both comes first.
        assert [seq for seq, _, _ in found][:3] == [8, 2, 1]
        assert {seq for seq, _, _ in found} == {1, 2, 3, 8, 9}


async def test_both_engines_give_the_same_scores_and_shares(engines: dict[str, Storage]) -> None:
    for text, f in (("deploy zebra", MemoryFilter()), ("deploy zebra", MemoryFilter(task_id="tsk_b")),
                    ("rollback pipeline crossing", MemoryFilter()), ('deploy "green build"', MemoryFilter()),
                    ("zebra unicorn", MemoryFilter())):
        on_sqlite = await fulltext(engines["sqlite"], text, f)
        on_postgres = await fulltext(engines["postgres"], text, f)
        assert on_sqlite, text
        assert [seq for seq, _, _ in on_postgres] == [seq for seq, _, _ in on_sqlite], text
        for (_, score, share), (_, expected_score, expected_share) in zip(on_postgres, on_sqlite):
            assert score == pytest.approx(expected_score, rel=1e-9)
            assert share == pytest.approx(expected_share, rel=1e-9)
            assert 0 < share <= 1


async def test_the_statistics_are_those_of_the_entries_searched(engines: dict[str, Storage]) -> None:
    for storage in engines.values():
        everywhere = dict((seq, score) for seq, score, _ in await fulltext(storage, "deploy zebra"))
        in_task = dict((seq, score) for seq, score, _ in await fulltext(storage, "deploy zebra",
                                                                        MemoryFilter(task_id="tsk_b")))
        assert set(in_task) == {8, 9}
        # deploy is in 2 of tsk_b's 3 entries: past half, it weighs nothing there, so entry 9 (deploy only)
        # scores next to nothing while it scores in the namespace.
        assert in_task[9] < 1e-3 < everywhere[9]


async def test_tag_filtered_statistics_are_those_of_the_entries_carrying_the_tags(
        engines: dict[str, Storage]) -> None:
    in_task = {name: await fulltext(storage, "deploy zebra", MemoryFilter(task_id="tsk_b"))
               for name, storage in engines.items()}
    for name, storage in engines.items():
        # blue or green tag exactly tsk_b's entries (one carries both: it counts once), blue and green only
        # entry 8: each search's BM25 statistics are those of the entries it searched, whatever narrowed them.
        for f in (MemoryFilter(tags=("blue", "green")), MemoryFilter(tags=("green", "blue", "red"), task_id="tsk_b")):
            found = await fulltext(storage, "deploy zebra", f)
            assert [seq for seq, _, _ in found] == [seq for seq, _, _ in in_task[name]], (name, f)
            assert [score for _, score, _ in found] == pytest.approx([s for _, s, _ in in_task[name]], rel=1e-12)
        both = await fulltext(storage, "deploy zebra", MemoryFilter(tags=("blue", "green"), match_all_tags=True))
        # one entry searched: every word is in half or more of it, so entry 8 scores only the 1e-6 floor
        assert [seq for seq, _, _ in both] == [8]
        assert both[0][1] < 1e-3
        alone = await fulltext(storage, "zebra", MemoryFilter(tags=("red",)))
        assert alone == []  # entry 1 (red) holds no zebra
    for f in (MemoryFilter(tags=("blue",)), MemoryFilter(tags=("blue", "green")), MemoryFilter(tags=("red", "blue"))):
        on_sqlite = await fulltext(engines["sqlite"], "deploy zebra rollback", f)
        on_postgres = await fulltext(engines["postgres"], "deploy zebra rollback", f)
        assert on_sqlite and [seq for seq, _, _ in on_postgres] == [seq for seq, _, _ in on_sqlite], f
        assert [s for _, s, _ in on_postgres] == pytest.approx([s for _, s, _ in on_sqlite], rel=1e-9)


async def test_a_tasks_memories_for_build_context_rank_alike_on_both_engines(engines: dict[str, Storage]) -> None:
    for name, storage in engines.items():
        # SearchMemories' BM25 over tsk_a's 7 entries: the entry holding rollback (rare) and deploy three
        # times first, then the rare zebra over the entry holding deploy once; "the" is a stop word.
        assert await storage.read(search_task_memories, NAMESPACE, "tsk_a", "the deploy zebra rollback", 10) == [
            ("MEMORY_TYPE_CONTEXT", "deploy deploy rollback"), ("MEMORY_TYPE_CONTEXT", "zebra crossing painted"),
            ("MEMORY_TYPE_CONTEXT", "deploy window friday")], name
        # tsk_b's entries only; deploy is in 2 of its 3, so zebra's entry leads and the others follow by seq
        assert await storage.read(search_task_memories, NAMESPACE, "tsk_b", "deploy zebra", 1) == [
            ("MEMORY_TYPE_CONTEXT", "deploy blocked zebra")], name
        assert await storage.read(search_task_memories, NAMESPACE, "tsk_b", "unicorn", 10) == [], name
    expected = await engines["sqlite"].read(ranked_matches, NAMESPACE, full_text_query("deploy garden"),
                                            MemoryFilter(task_id="tsk_b"), 10)
    summaries = {8: "deploy blocked zebra", 9: "deploy finished", 10: "garden hose leaking"}
    for storage in engines.values():
        assert [summary for _, summary in await storage.read(search_task_memories, NAMESPACE, "tsk_b", "deploy garden",
                                                             10)] == [summaries[seq] for seq, _, _ in expected]


async def test_the_hybrid_share_is_the_bm25_share_on_both_engines(engines: dict[str, Storage]) -> None:
    query_vector = vector_of(3)
    hits = {name: await storage.read(search_hits, NAMESPACE, full_text_query("deploy zebra"), query_vector,
                                     SearchMode.HYBRID, MemoryFilter(), 10)
            for name, storage in engines.items()}
    assert [(h.seq, h.fulltext_rank, h.semantic_rank) for h in hits["postgres"]] == \
        [(h.seq, h.fulltext_rank, h.semantic_rank) for h in hits["sqlite"]]
    shares = {seq: share for seq, _, share in await fulltext(engines["postgres"], "deploy zebra", limit=20)}
    for hit in hits["postgres"]:
        cosine = float(np.dot(vector_of(hit.seq - 1), query_vector))
        assert hit.score == pytest.approx(FULLTEXT_WEIGHT * shares.get(hit.seq, 0.0) + SEMANTIC_WEIGHT * cosine,
                                          abs=1e-5)
    assert [h.score for h in hits["postgres"]] == pytest.approx([h.score for h in hits["sqlite"]], abs=1e-5)


async def test_migrations_0005_and_0006_fill_the_lengths_of_existing_entries_and_index_them_by_seq(
        tmp_path: Path) -> None:
    url = database_url(str(tmp_path / "migrated"))
    storage = await open_with_tasks(url)
    await add(storage, ENTRIES[:3], 0)
    await storage.close()
    with psycopg.connect(url, autocommit=True) as connection:  # the database as 0004 left it
        connection.execute("DROP INDEX memory_entries_lengths_by_seq")
        connection.execute("DROP INDEX memory_entries_lengths")
        connection.execute("ALTER TABLE memory_entries DROP COLUMN search_length")
        connection.execute("DELETE FROM schema_migrations WHERE number IN (5, 6)")
        assert pg_connection.migrate(connection) == ["0005_memory_search_length.sql",
                                                     "0006_memory_lengths_by_seq.sql"]
        assert pg_connection.migrate(connection) == []
        # every word of summary and detail counts, stop words ("the") included
        assert connection.execute("SELECT search_length FROM memory_entries ORDER BY seq").fetchall() == \
            [(6,), (6,), (3,)]
        indexes = {row[0] for row in connection.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'memory_entries'").fetchall()}
        assert {"memory_entries_lengths", "memory_entries_lengths_by_seq"} <= indexes
        # idempotent: run again on a database that has it already
        connection.execute("DELETE FROM schema_migrations WHERE number = 6")
        assert pg_connection.migrate(connection) == ["0006_memory_lengths_by_seq.sql"]

