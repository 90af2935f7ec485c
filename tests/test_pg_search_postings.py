"""PostgreSQL's full-text postings (migration 0013): every writer keeps them and the BM25 statistics exact, the
migration fills them for the entries before it, and a search ranked from them, unfiltered (reading the
common words only for the entries the rare ones found) or within a task, finds the same hits, scores and
order as a scan of every entry holding a word (always run on PostgreSQL, whatever --engine says; tests/test_fulltext_engines.py
checks the rankings against SQLite's)."""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import psycopg
import pytest

from taskmem.api.event_encoding import event_payload
from taskmem.core.ids import now_us
from taskmem.core.memory import MemoryFilter, MemoryType, NewMemoryEntry
from taskmem.core.memory_search import full_text_query
from taskmem.core.tasks import Task, TaskStatus
from taskmem.store.access import Transaction
from taskmem.store.engines import open_storage
from taskmem.store.memory.memory_entries import insert_memory_entries
from taskmem.store.memory.memory_search import ranked_matches
from taskmem.store.postgres import connection as pg_connection
from taskmem.store.postgres import memory_index, memory_postings
from taskmem.store.storage import Storage
from taskmem.store.tasks import tasks as task_store
from tests.support.postgres import database_url

NAMESPACE = "default"
# Words that stem to themselves, drawn with Zipf-like odds: the first few are in most entries, the last
# in a handful, so searches mix words of every weight (some in half or more of the entries: no weight).
WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa"
         " quebec romeo sierra tango uniform victor whiskey xray yankee zulu").split()
QUERIES = ["alpha zulu", "bravo yankee xray", "charlie", "delta echo foxtrot golf", "zulu", "alpha bravo",
           "kilo lima mike", "whiskey alpha charlie", "nothing here", "tango uniform victor alpha bravo",
           "papa quebec", "india", "alpha bravo charlie delta"]
# The same entries: this matches every one of them, but is a filter, so it ranks by the scan.
EVERY_ENTRY = MemoryFilter(created_after=0)

POSTINGS_AS_THEY_SHOULD_BE = """
    SELECT m.namespace, l.lexeme, m.seq, m.task_id,
           (SELECT sum(CASE w WHEN 'A' THEN 2 ELSE 1 END) FROM unnest(l.weights) w)::int, m.search_length
    FROM memory_entries m, unnest(m.search) l ORDER BY 1, 2, 3"""
STATISTICS = ["SELECT namespace, term, entries FROM memory_term_counts WHERE entries > 0 ORDER BY 1, 2",
              "SELECT namespace, entries, total_length FROM memory_search_totals WHERE entries > 0 ORDER BY 1",
              "SELECT tag, entry_seq, namespace, search_length FROM memory_entry_tags ORDER BY 1, 2",
              "SELECT * FROM memory_tag_postings ORDER BY 1, 2, 3, 4"]
STATISTICS_AS_THEY_SHOULD_BE = [
    "SELECT namespace, term, count(*) FROM (" + POSTINGS_AS_THEY_SHOULD_BE + ") p (namespace, term) GROUP BY 1, 2"
    " ORDER BY 1, 2",
    "SELECT namespace, count(*), sum(search_length) FROM memory_entries GROUP BY 1 ORDER BY 1",
    "SELECT t.tag, t.entry_seq, m.namespace, m.search_length FROM memory_entry_tags t"
    " JOIN memory_entries m ON m.seq = t.entry_seq ORDER BY 1, 2",
    "SELECT p.namespace, t.tag, p.term, p.seq, p.frequency, p.length FROM memory_entry_tags t JOIN ("
    + POSTINGS_AS_THEY_SHOULD_BE.replace(" ORDER BY 1, 2, 3", "") + ") p (namespace, term, seq, task_id, frequency, length)"
    " ON p.seq = t.entry_seq ORDER BY 1, 2, 3, 4"]


def text(rnd: random.Random, count: int) -> str:
    return " ".join(WORDS[min(int(rnd.paretovariate(0.9)) - 1, len(WORDS) - 1)] for _ in range(count))


def entries(seed: int, count: int, task_id: str = "tsk_a", *more_tags: str) -> list[NewMemoryEntry]:
    """Entries of the task, each tagged with its task's name (a tag filter then searches the same entries
    as the task's), and with more_tags."""
    rnd = random.Random(seed)
    return [NewMemoryEntry(task_id=task_id, type=rnd.choice([MemoryType.CONTEXT, MemoryType.DECISION]),
                           summary=text(rnd, rnd.randint(1, 6)), detail=text(rnd, rnd.randint(0, 12)),
                           tags=(task_id, *more_tags)) for _ in range(count)]


async def add(storage: Storage, batch: list[NewMemoryEntry], namespace: str = NAMESPACE) -> None:
    await storage.write(lambda tx: insert_memory_entries(tx, batch, None), namespace, "test")


@pytest.fixture
async def replicas(tmp_path: Path) -> AsyncIterator[tuple[str, Storage, Storage]]:
    url = database_url(str(tmp_path / "postings"))
    one = await open_storage(url, event_payload)
    two = await open_storage(url, event_payload)

    def create(tx: Transaction) -> None:
        for namespace in (NAMESPACE, "other"):
            for task_id in ("tsk_a", "tsk_b"):
                task_store.create_task(tx, Task(namespace, task_id, task_id, TaskStatus.EXECUTING, now_us(),
                                                now_us()), [])
    await one.write(create, NAMESPACE, "test")
    yield url, one, two
    await one.close()
    await two.close()


def table(url: str, query: str) -> list[tuple[object, ...]]:
    with psycopg.connect(url) as connection:
        return connection.execute(query).fetchall()


async def test_every_replicas_writes_keep_the_postings_and_statistics_exact(
        replicas: tuple[str, Storage, Storage]) -> None:
    url, one, two = replicas
    await add(one, entries(1, 150))
    await add(two, entries(2, 1))
    await add(two, entries(3, 40), "other")
    await add(one, entries(4, 60, "tsk_a", "both"))
    assert len(table(url, "SELECT * FROM memory_postings")) > 200
    assert len(table(url, "SELECT * FROM memory_tag_postings WHERE tag = 'both'")) > 60
    assert table(url, "SELECT * FROM memory_postings ORDER BY 1, 2, 3") == table(url, POSTINGS_AS_THEY_SHOULD_BE)
    for kept, expected in zip(STATISTICS, STATISTICS_AS_THEY_SHOULD_BE):
        assert table(url, kept) == table(url, expected)
    # a summary occurrence counts 2, a detail one 1, as the ranking weighs them
    with psycopg.connect(url) as connection:
        seq = connection.execute("SELECT seq FROM memory_entries WHERE summary = 'alpha'"
                                 " AND detail = 'alpha alpha' LIMIT 1").fetchone()
    if seq is not None:
        assert table(url, f"SELECT frequency FROM memory_postings WHERE seq = {seq[0]}") == [(4,)]


async def test_an_entrys_text_cannot_change_under_its_postings(replicas: tuple[str, Storage, Storage]) -> None:
    url, one, _ = replicas
    await add(one, entries(5, 3))
    with psycopg.connect(url) as connection, pytest.raises(psycopg.errors.RaiseException, match="immutable"):
        connection.execute("UPDATE memory_entries SET summary = 'zulu' WHERE seq = 1")


async def test_deleting_entries_takes_their_postings_and_counts_with_them(
        replicas: tuple[str, Storage, Storage]) -> None:
    url, one, _ = replicas
    await add(one, entries(6, 30))
    with psycopg.connect(url) as connection:
        connection.execute("DELETE FROM memory_embedding_queue WHERE seq % 3 = 0")
        connection.execute("DELETE FROM memory_entry_tags WHERE entry_seq % 3 = 0")
        connection.execute("DELETE FROM memory_entries WHERE seq % 3 = 0")
    assert table(url, "SELECT * FROM memory_postings ORDER BY 1, 2, 3") == table(url, POSTINGS_AS_THEY_SHOULD_BE)
    for kept, expected in zip(STATISTICS, STATISTICS_AS_THEY_SHOULD_BE):
        assert table(url, kept) == table(url, expected)


async def test_the_migration_fills_the_postings_of_the_entries_written_before_it(
        replicas: tuple[str, Storage, Storage]) -> None:
    url, one, _ = replicas
    await add(one, entries(7, 80))
    with psycopg.connect(url, autocommit=True) as connection:  # the database as 0012 left it
        for name in ("memory_postings", "memory_term_counts", "memory_search_totals"):
            connection.execute(f"DROP TABLE {name}")
        connection.execute("DELETE FROM schema_migrations WHERE number = 13")
        assert pg_connection.migrate(connection) == ["0013_memory_postings.sql"]
    assert table(url, "SELECT * FROM memory_postings ORDER BY 1, 2, 3") == table(url, POSTINGS_AS_THEY_SHOULD_BE)
    for kept, expected in zip(STATISTICS, STATISTICS_AS_THEY_SHOULD_BE):
        assert table(url, kept) == table(url, expected)
    await add(one, entries(8, 20))  # and the triggers keep them from there
    assert table(url, "SELECT * FROM memory_postings ORDER BY 1, 2, 3") == table(url, POSTINGS_AS_THEY_SHOULD_BE)


async def test_the_migration_gives_the_tags_written_before_it_their_entries_lengths(
        replicas: tuple[str, Storage, Storage]) -> None:
    url, one, two = replicas
    await add(one, entries(15, 50))
    await add(two, entries(16, 20, "tsk_b"), "other")
    with psycopg.connect(url, autocommit=True) as connection:  # the database as 0016 left it
        connection.execute("ALTER TABLE memory_entry_tags DROP COLUMN namespace, DROP COLUMN search_length")
        connection.execute("DELETE FROM schema_migrations WHERE number = 17")
        assert pg_connection.migrate(connection) == ["0017_memory_scope_lengths.sql"]
    await add(one, entries(17, 20))  # and the trigger keeps them from there
    assert table(url, STATISTICS[2]) == table(url, STATISTICS_AS_THEY_SHOULD_BE[2])
    assert len(table(url, STATISTICS[2])) == 90


async def test_the_migration_fills_the_tags_postings_of_the_entries_written_before_it(
        replicas: tuple[str, Storage, Storage]) -> None:
    url, one, two = replicas
    await add(one, entries(20, 50, "tsk_a", "both"))
    await add(two, entries(21, 20, "tsk_b"), "other")
    with psycopg.connect(url, autocommit=True) as connection:  # the database as 0023 left it
        connection.execute("DROP TABLE memory_tag_postings")
        connection.execute("DELETE FROM schema_migrations WHERE number = 24")
        assert pg_connection.migrate(connection) == ["0024_memory_tag_postings.sql"]
    assert table(url, STATISTICS[3]) == table(url, STATISTICS_AS_THEY_SHOULD_BE[3])
    await add(one, entries(22, 20, "tsk_b", "both"))  # and the triggers keep them from there
    assert table(url, STATISTICS[3]) == table(url, STATISTICS_AS_THEY_SHOULD_BE[3])
    assert {row[1] for row in table(url, STATISTICS[3])} == {"tsk_a", "tsk_b", "both"}


async def test_an_unfiltered_search_ranks_exactly_as_a_scan_of_every_entry(
        replicas: tuple[str, Storage, Storage]) -> None:
    _, one, two = replicas
    await add(one, entries(9, 400))
    await add(two, entries(10, 100))
    await add(two, entries(11, 50), "other")  # another namespace's entries count in neither
    compared = 0
    for query in QUERIES:
        for limit in (1, 5, 20, 60):
            fast = await one.read(ranked_matches, NAMESPACE, full_text_query(query), MemoryFilter(), limit)
            scanned = await one.read(ranked_matches, NAMESPACE, full_text_query(query), EVERY_ENTRY, limit)
            assert [seq for seq, _, _ in fast] == [seq for seq, _, _ in scanned], (query, limit)
            assert np.array_equal([(score, share) for _, score, share in fast],
                                  [(score, share) for _, score, share in scanned]), (query, limit)
            compared += len(fast)
    assert compared > 500


async def test_searches_within_a_task_or_tags_rank_exactly_as_a_scan_of_the_same_entries(
        replicas: tuple[str, Storage, Storage]) -> None:
    _, one, two = replicas
    await add(one, entries(12, 300, "tsk_a"))
    await add(two, entries(13, 120, "tsk_b"))
    await add(two, entries(23, 60, "tsk_a", "both"))  # searched by both its tags, an entry counts once
    await add(one, entries(14, 30, "tsk_b"), "other")
    compared = 0
    for query in [*QUERIES, '"alpha bravo" charlie', '"zulu"']:
        for limit in (1, 5, 40):
            # each pair searches the same entries; the second of each ranks by the scan
            for in_task, by_tag in ((MemoryFilter(task_id="tsk_b"), MemoryFilter(tags=("tsk_b",), created_after=0)),
                                    (MemoryFilter(tags=("tsk_b",)), MemoryFilter(tags=("tsk_b",), created_after=0)),
                                    (MemoryFilter(tags=("tsk_a", "tsk_b")), MemoryFilter(created_after=0)),
                                    (MemoryFilter(tags=("tsk_a", "both")), MemoryFilter(tags=("tsk_a",), created_after=0)),
                                    (MemoryFilter(task_id="tsk_a", types=(MemoryType.DECISION,)),
                                     MemoryFilter(tags=("tsk_a",), types=(MemoryType.DECISION,)))):
                found = await one.read(ranked_matches, NAMESPACE, full_text_query(query), in_task, limit)
                scanned = await one.read(ranked_matches, NAMESPACE, full_text_query(query), by_tag, limit)
                assert [seq for seq, _, _ in found] == [seq for seq, _, _ in scanned], (query, limit, in_task)
                assert np.array_equal([(score, share) for _, score, share in found],
                                      [(score, share) for _, score, share in scanned]), (query, limit, in_task)
                compared += len(found)
    assert compared > 500


class Recording:
    """A reader that records the statements a store function runs, and finds nothing."""

    def __init__(self) -> None:
        self.statements: list[tuple[str, list[object]]] = []

    def fetchone(self, sql: str, params: list[object]) -> None:
        self.statements.append((sql, list(params)))


def generic_plan(url: str, sql: str, params: list[object], *settings: str) -> str:
    """The plan PostgreSQL keeps for a prepared statement, for any parameters (under these SETs)."""
    placeholders = itertools.count(1)
    numbered = re.sub(r"\?", lambda _: f"${next(placeholders)}", sql)
    def literal(p: object) -> str:
        if isinstance(p, int):
            return str(p)
        text = "{" + ",".join(map(str, p)) + "}" if isinstance(p, list) else str(p)
        return "'" + text.replace("'", "''") + "'"
    literals = ", ".join(literal(p) for p in params)
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("VACUUM ANALYZE")  # as autovacuum leaves a table: its pages all visible
        for setting in ("plan_cache_mode = force_generic_plan", *settings):
            connection.execute(f"SET {setting}")
        connection.execute(f"PREPARE recorded AS {numbered}")
        return "\n".join(str(row[0]) for row in connection.execute(f"EXPLAIN EXECUTE recorded({literals})").fetchall())


async def test_a_search_within_a_task_or_a_tag_counts_its_entries_from_an_index_alone(
        replicas: tuple[str, Storage, Storage]) -> None:
    # BM25 needs the count and summed length of the entries searched: read from the heap, a task's 50k
    # entries at 1M took 187 ms and a tag's 10k at 100k 17-58 ms.
    url, one, _ = replicas
    await add(one, entries(18, 300, "tsk_a"))
    await add(one, entries(19, 300, "tsk_b"))
    for f in (MemoryFilter(task_id="tsk_a"), MemoryFilter(tags=("tsk_a",)), MemoryFilter(tags=("tsk_a", "tsk_b"))):
        recording = Recording()
        memory_postings.ranked_narrowed(recording, NAMESPACE, ["alpha"], f, 10)  # type: ignore[arg-type]
        [(sql, params)] = recording.statements  # the count, then nothing to rank
        plan = generic_plan(url, sql, params, "enable_seqscan = off", "enable_bitmapscan = off")  # tables this small
        assert "Index Only Scan" in plan and "Index Scan" not in plan.replace("Index Only Scan", ""), (f, plan)


class Counting(Recording):
    """A Recording whose count finds entries, so the search goes on to read postings (and finds none)."""

    def fetchone(self, sql: str, params: list[object]) -> tuple[int, int]:  # type: ignore[override]
        super().fetchone(sql, params)
        return 600, 6000

    def fetchall(self, sql: str, params: list[object]) -> list[object]:
        self.statements.append((sql, list(params)))
        return []


async def test_a_search_narrowed_to_tags_reads_only_the_tags_own_postings(
        replicas: tuple[str, Storage, Storage]) -> None:
    # Read from the namespace's postings and joined to the tags' entries, a tag on 10k of 100k entries read 63k
    # postings of three common words to keep 6k (p95 30 ms); the tag's own postings hold only those 6k.
    url, one, _ = replicas
    await add(one, entries(24, 300, "tsk_a", "both"))
    await add(one, entries(25, 300, "tsk_b"))
    for f in (MemoryFilter(tags=("both",)), MemoryFilter(tags=("both", "tsk_b"))):
        recording = Counting()
        memory_postings.ranked_narrowed(recording, NAMESPACE, ["alpha", "bravo"], f, 10)  # type: ignore[arg-type]
        [_, (sql, params)] = recording.statements  # the count, then the postings
        plan = generic_plan(url, sql, params, "enable_seqscan = off", "enable_bitmapscan = off")
        assert "Index Only Scan using memory_tag_postings_pkey" in plan, (f, plan)
        assert "memory_postings" not in plan.replace("memory_tag_postings", ""), (f, plan)


async def test_the_expired_entry_check_of_every_search_stays_on_its_index_once_prepared(
        replicas: tuple[str, Storage, Storage]) -> None:
    # psycopg prepares a statement on its 6th run on a connection, and PostgreSQL then plans it once for any
    # parameters: the check every search runs first must not become a scan of every entry (40-50 ms at 100k).
    url, one, _ = replicas
    for seed in range(4):
        await add(one, entries(100 + seed, 1000))
    recording = Recording()
    memory_index._expired_pending(recording, NAMESPACE)  # type: ignore[arg-type]
    [(sql, params)] = recording.statements
    plan = generic_plan(url, sql, params)
    assert "memory_entries_expiring" in plan and "Seq Scan" not in plan, plan
