"""Memory search on a real SQLite file (the store functions SearchMemories runs): FTS5 ranking and
snippets, the nearest-vector search scoped to a namespace and narrowed by every filter, and hybrid fusion."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from taskmem.api.event_encoding import event_payload
from taskmem.core.errors import InvalidArgument
from taskmem.core.ids import now_us
from taskmem.core.memory import MemoryEntry, MemoryFilter, MemoryType, NewMemoryEntry
from taskmem.core.memory_search import FULLTEXT_WEIGHT, SEMANTIC_WEIGHT, SearchMode, full_text_query
from taskmem.core.tasks import Task, TaskStatus
from taskmem.store.memory import memory_backlog, memory_vector_index, memory_vectors
from taskmem.store.sqlite import connection as sqlite_connection
from taskmem.store.tasks import tasks as task_store
from taskmem.store.memory.memory_entries import insert_memory_entries
from taskmem.store.memory.memory_search import fulltext, ranked_matches, search_entries, search_hits, semantic
from taskmem.store.engines import open_storage
from taskmem.store.storage import Storage
from taskmem.store.access import Transaction

DIMENSION = 8
MODEL = "test-model"


def unit(*values: float) -> np.ndarray:
    vector = np.zeros(DIMENSION, dtype=np.float32)
    vector[:len(values)] = values
    return vector / np.linalg.norm(vector)


class Archive:
    """A database with the test model recorded, and helpers to write entries with chosen vectors."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    async def task(self, namespace: str, task_id: str) -> None:
        def create(tx: Transaction) -> None:
            task_store.create_task(tx, Task(namespace, task_id, task_id, TaskStatus.EXECUTING, now_us(), now_us()), [])
        await self.storage.write(create, namespace, "test")

    async def add(self, namespace: str, entries: Sequence[NewMemoryEntry],
                  vectors: Sequence[np.ndarray] | None = None) -> list[MemoryEntry]:
        matrix = np.stack(vectors) if vectors is not None else None
        return await self.storage.write(lambda tx: insert_memory_entries(tx, entries, matrix), namespace, "test")

    async def read(self, query, *args):  # type: ignore[no-untyped-def]
        return await self.storage.read(query, *args)


@pytest.fixture
async def archive(tmp_path: Path) -> AsyncIterator[Archive]:
    storage = await open_storage(str(tmp_path / "taskmem.db"), event_payload)
    await storage.write(lambda tx: memory_vectors.prepare_index(tx, MODEL, DIMENSION), "", "test")
    opened = Archive(storage)
    await opened.task("default", "tsk_a")
    await opened.task("default", "tsk_b")
    yield opened
    await storage.close()


def entry(summary: str, *, task: str = "tsk_a", detail: str = "", kind: MemoryType = MemoryType.DISCOVERY,
          subtask: str = "", tags: tuple[str, ...] = (), relevance: tuple[str, ...] = ()) -> NewMemoryEntry:
    return NewMemoryEntry(task_id=task, type=kind, summary=summary, subtask_id=subtask, detail=detail, tags=tags,
                          relevance_to=relevance)


# --- full text -------------------------------------------------------------------------------------


async def test_fulltext_ranks_by_bm25_a_summary_match_above_a_detail_match(archive: Archive) -> None:
    in_detail, in_summary, _ = await archive.add("default", [
        entry("Chose the session store", detail="the session store is redis, configured for eviction"),
        entry("Use Redis for caching"),
        entry("Fixed the login form"),
    ])
    found = await archive.read(fulltext, "default", full_text_query("redis"), MemoryFilter(), 10)
    assert [seq for seq, _, _ in found] == [in_summary.seq, in_detail.seq]
    assert found[0][1] > found[1][1] > 0  # BM25: higher is better


async def test_fulltext_ranks_entries_with_more_of_the_words_first_and_matches_stems(archive: Archive) -> None:
    both, one, _ = await archive.add("default", [entry("Redis cache layer for sessions"), entry("Redis queue for jobs"),
                                                  entry("Fixed the login form")])
    found = await archive.read(fulltext, "default", full_text_query("caching, Redis!"), MemoryFilter(), 10)
    assert [seq for seq, _, _ in found] == [both.seq, one.seq]


async def test_a_natural_question_finds_its_evidence_without_its_stop_words(archive: Archive) -> None:
    evidence, _ = await archive.add("default", [entry("Maria: I went to a climbing gym yesterday with my sister"),
                                                entry("John: the weather was awful all week")])
    found = await archive.read(fulltext, "default", full_text_query("When did Maria go to the climbing gym?"),
                               MemoryFilter(), 10)
    assert [seq for seq, _, _ in found] == [evidence.seq]
    assert "[climbing]" in found[0][2] and "[gym]" in found[0][2]


async def test_a_quoted_phrase_must_occur_as_written(archive: Archive) -> None:
    phrase, _ = await archive.add("default", [entry("Booked the climbing gym for Friday"),
                                              entry("The gym had no climbing wall")])
    found = await archive.read(fulltext, "default", full_text_query('"climbing gym" Friday'), MemoryFilter(), 10)
    assert [seq for seq, _, _ in found] == [phrase.seq]
    assert "[climbing gym]" in found[0][2]
    words = await archive.read(fulltext, "default", full_text_query("climbing gym"), MemoryFilter(), 10)
    assert len(words) == 2


async def test_a_word_in_more_than_half_of_the_entries_weighs_nothing_and_its_entries_come_last(
        archive: Archive) -> None:
    common = await archive.add("default", [entry(f"deploy note {n}") for n in range(30)])
    rare = await archive.add("default", [entry("deploy rollback checklist")])
    [(seq, score, snippet)] = await archive.read(fulltext, "default", full_text_query("deploy rollback"),
                                                 MemoryFilter(), 1)
    assert seq == rare[0].seq and "[rollback]" in snippet
    [(_, alone, _)] = await archive.read(fulltext, "default", full_text_query("rollback"), MemoryFilter(), 10)
    assert score == pytest.approx(alone)  # "deploy" added nothing
    filled = await archive.read(fulltext, "default", full_text_query("deploy rollback"), MemoryFilter(), 10)
    assert filled[0][0] == rare[0].seq and len(filled) == 10
    assert all(score < 1e-3 for _, score, _ in filled[1:])  # "deploy" alone: 1e-6 × its BM25 part, as FTS5 clamps
    only_common = await archive.read(fulltext, "default", full_text_query("deploy"), MemoryFilter(), 3)
    assert len(only_common) == 3 and {seq for seq, _, _ in only_common} <= {e.seq for e in common + rare}


async def test_fulltext_scores_okapi_bm25_with_statistics_of_the_entries_searched(archive: Archive) -> None:
    """k1 1.2, b 0.75; N, document frequencies and the average length are the filtered entries' (here tsk_b's
    four, while tsk_a holds ten more "deploy" entries); a summary occurrence counts 2, a detail one 1."""
    await archive.add("default", [entry(f"deploy script {n}", task="tsk_a") for n in range(10)])
    b = await archive.add("default", [
        entry("deploy rollback plan", task="tsk_b"),  # 3 tokens
        entry("rollback drill", task="tsk_b", detail="the rollback took two minutes"),  # 2 + 5 tokens
        entry("cache warmup", task="tsk_b"),  # 2 tokens
        entry("log rotation", task="tsk_b", detail="rotated daily"),  # 2 + 2 tokens
    ])
    found = await archive.read(ranked_matches, "default", full_text_query("deploy rollback"),
                               MemoryFilter(task_id="tsk_b"), 10)
    n, average = 4, (3 + 7 + 2 + 4) / 4

    def idf(df: int) -> float:  # "rollback", in half of them, weighs 1e-6 (fewer than 10 hits hold other words)
        return max(math.log((n - df + 0.5) / (df + 0.5)), 1e-6)

    def part(tf: float, length: int, df: int) -> float:
        return idf(df) * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / average))

    expected = {b[0].seq: part(2, 3, 1) + part(2, 3, 2), b[1].seq: part(2 + 1, 7, 2)}
    assert [seq for seq, _, _ in found] == [b[0].seq, b[1].seq]
    for seq, score, share in found:
        assert score == pytest.approx(expected[seq])
        most = sum(idf(df) * 2.2 for df in (1, 2))
        assert share == pytest.approx(score / most)


async def test_a_query_word_no_entry_holds_counts_in_the_share_but_is_not_remembered(archive: Archive) -> None:
    from taskmem.store.memory.memory_text_index import _terms

    b = await archive.add("default", [entry("deploy rollback plan"), entry("cache warmup"), entry("log rotation")])
    found = await archive.read(ranked_matches, "default", full_text_query("rollback"), MemoryFilter(), 10)
    alone = found[0][2]
    cached = len(_terms.of_word)
    found = await archive.read(ranked_matches, "default", full_text_query("rollback zyxwvutsrq"), MemoryFilter(), 10)
    assert [seq for seq, _, _ in found] == [b[0].seq]
    # the absent word could have scored most (it is in no entry): the hit holds less of the most
    assert 0 < found[0][2] < alone
    assert len(_terms.of_word) == cached  # searching for words no entry has costs no memory


async def test_entries_written_after_a_search_are_found_by_the_next_one(archive: Archive) -> None:
    first = await archive.add("default", [entry("Redis holds the sessions"), entry("Fixed the login form")])
    found = await archive.read(fulltext, "default", full_text_query("redis"), MemoryFilter(), 10)
    assert [seq for seq, _, _ in found] == [first[0].seq]
    later = [await archive.add("default", [entry(f"Redis replica {n}"), entry(f"unrelated note {n}")])
             for n in range(12)]  # more writes than the index keeps unmerged segments
    found = await archive.read(fulltext, "default", full_text_query("redis replica"), MemoryFilter(), 30)
    assert {seq for seq, _, _ in found} == {first[0].seq} | {pair[0].seq for pair in later}
    assert found[-1][0] == first[0].seq  # holds one of the two words


async def test_snippets_are_those_fts5_makes_on_memory_fts(archive: Archive) -> None:
    stored = await archive.add("default", [
        entry("Booked the climbing gym for Friday", detail="the gym opens at seven; climbing shoes to rent"),
        entry("Timeout while calling the payment webhook " + "and then " * 20 + "it answered"),
        entry("nothing to see", detail="but the webhook and the gym are both in the detail"),
    ])
    for text in ('"climbing gym" Friday', "webhook answered", "gym webhook", "seven"):
        query = full_text_query(text)
        found = await archive.read(fulltext, "default", query, MemoryFilter(), 10)
        assert found
        for seq, _, snippet in found:
            [(expected,)] = await archive.read(lambda reader, seq=seq: reader.fetchall(
                "SELECT snippet(memory_fts, -1, '[', ']', '…', 16) FROM memory_fts WHERE memory_fts MATCH ?"
                " AND rowid = ?", (query.expression(), seq)))
            assert snippet == expected and "[" in snippet
    assert {seq for seq, _, _ in await archive.read(fulltext, "default", full_text_query("gym"), MemoryFilter(),
                                                     10)} == {stored[0].seq, stored[2].seq}


async def test_a_filtered_search_finds_entries_written_after_the_previous_one(archive: Archive) -> None:
    tagged = MemoryFilter(task_id="tsk_a", tags=("infra",))
    first = await archive.add("default", [entry("Redis sentinel failover", tags=("infra",)),
                                          entry("Redis for the web cache", tags=("web",))],
                              [unit(1, 0), unit(1, 0.1)])
    text = await archive.read(fulltext, "default", full_text_query("redis"), tagged, 10)
    near = await archive.read(semantic, "default", unit(1, 0), tagged, 10)
    assert [s for s, _, _ in text] == [s for s, _ in near] == [first[0].seq]
    later = await archive.add("default", [entry("Redis cluster resharding", tags=("infra", "db")),
                                          entry("Redis cluster in tsk_b", task="tsk_b", tags=("infra",))],
                              [unit(1, 0.2), unit(1, 0)])
    text = await archive.read(fulltext, "default", full_text_query("redis"), tagged, 10)
    near = await archive.read(semantic, "default", unit(1, 0), tagged, 10)
    assert {s for s, _, _ in text} == {s for s, _ in near} == {first[0].seq, later[0].seq}


async def test_fulltext_snippet_wraps_each_match_in_brackets(archive: Archive) -> None:
    await archive.add("default", [entry("Timeout while calling the payment webhook",
                                        detail="the webhook answered after 30 s; retried with backoff")])
    [(_, _, snippet)] = await archive.read(fulltext, "default", full_text_query("webhook"), MemoryFilter(), 10)
    assert "[webhook]" in snippet
    assert snippet.replace("[", "").replace("]", "") in ("Timeout while calling the payment webhook",
                                                         "the webhook answered after 30 s; retried with backoff")


async def test_fulltext_finds_the_best_matches_of_a_narrow_filter_among_many_matches(archive: Archive) -> None:
    await archive.add("default", [entry(f"deploy note {n}", task="tsk_a") for n in range(60)])
    wanted = await archive.add("default", [entry(f"deploy note {n}", task="tsk_b") for n in range(3)])
    found = await archive.read(fulltext, "default", full_text_query("deploy"), MemoryFilter(task_id="tsk_b"), 5)
    assert sorted(seq for seq, _, _ in found) == sorted(e.seq for e in wanted)


async def test_fulltext_query_syntax_in_the_text_is_taken_as_words(archive: Archive) -> None:
    await archive.add("default", [entry("NOT a problem: redis OR memcached")])
    found = await archive.read(fulltext, "default", full_text_query('NOT "redis* OR (memcached'), MemoryFilter(), 10)
    assert len(found) == 1


async def test_fulltext_filters_tags_and_subtasks_by_whole_values(archive: Archive) -> None:
    build, _, docs = await archive.add("default", [
        entry("release checklist", subtask="build", tags=("build",)),
        entry("release checklist", subtask="build-docs", tags=("build-docs",)),
        entry("release checklist", tags=("docs", "build")),
    ])
    match = full_text_query("release checklist")
    by_subtask = await archive.read(fulltext, "default", match, MemoryFilter(subtask_id="build"), 10)
    assert [seq for seq, _, _ in by_subtask] == [build.seq]
    by_tag = await archive.read(fulltext, "default", match, MemoryFilter(tags=("build",)), 10)
    assert sorted(seq for seq, _, _ in by_tag) == sorted([build.seq, docs.seq])
    all_tags = await archive.read(fulltext, "default", match, MemoryFilter(tags=("build", "docs"), match_all_tags=True),
                                  10)
    assert [seq for seq, _, _ in all_tags] == [docs.seq]


# --- vectors ---------------------------------------------------------------------------------------


async def test_knn_orders_by_cosine_and_reports_the_cosine_distance(archive: Archive) -> None:
    vectors = [unit(1, 0), unit(1, 1), unit(0, 1), unit(-1, 0)]
    stored = await archive.add("default", [entry(f"entry {n}") for n in range(4)], vectors)
    query = unit(1, 0.2)
    near = await archive.read(semantic, "default", query, MemoryFilter(), 4)
    assert [seq for seq, _ in near] == [stored[0].seq, stored[1].seq, stored[2].seq, stored[3].seq]
    for (seq, distance), vector in zip(near, vectors, strict=True):
        assert distance == pytest.approx(1.0 - float(vector @ query), abs=1e-6)


async def test_knn_never_returns_another_namespace_entry(archive: Archive) -> None:
    await archive.task("other", "tsk_a")
    same = [unit(1, 0, 0), unit(0, 1, 0), unit(0, 0, 1)]
    ours = await archive.add("default", [entry(f"ours {n}") for n in range(3)], same)
    theirs = await archive.add("other", [entry(f"theirs {n}") for n in range(3)], same)
    near = await archive.read(semantic, "default", unit(1, 0, 0), MemoryFilter(), 10)
    assert sorted(seq for seq, _ in near) == sorted(e.seq for e in ours)
    near_theirs = await archive.read(semantic, "other", unit(1, 0, 0), MemoryFilter(), 10)
    assert sorted(seq for seq, _ in near_theirs) == sorted(e.seq for e in theirs)
    assert await archive.read(semantic, "empty", unit(1, 0, 0), MemoryFilter(), 10) == []
    hybrid = await archive.read(search_entries, "default", full_text_query("theirs"), unit(1, 0, 0), SearchMode.HYBRID,
                                MemoryFilter(), 10)
    assert {e.namespace for _, e in hybrid} == {"default"}


async def test_knn_applies_every_filter_inside_the_search_not_after_it(archive: Archive) -> None:
    # 40 entries point at the query and match no filter; 3 further away match each filter. A filter
    # applied after a k = 3 search would find nothing.
    await archive.add("default", [entry(f"close {n}", task="tsk_a", kind=MemoryType.CONTEXT) for n in range(40)],
                      [unit(1, 0.01 * n) for n in range(40)])
    far = await archive.add("default", [
        entry("far 1", task="tsk_b", kind=MemoryType.DECISION, subtask="build", tags=("db", "perf"),
              relevance=("deploy",)),
        entry("far 2", task="tsk_b", kind=MemoryType.ERROR, subtask="build", tags=("db",), relevance=("deploy",)),
        entry("far 3", task="tsk_b", kind=MemoryType.DECISION, subtask="test", tags=("perf",), relevance=("lint",)),
    ], [unit(0.2, 1), unit(0, 1), unit(-0.2, 1)])
    one, two, three = (e.seq for e in far)
    query = unit(1, 0)
    cases = {
        MemoryFilter(task_id="tsk_b"): [one, two, three],
        MemoryFilter(subtask_id="build"): [one, two],
        MemoryFilter(types=(MemoryType.DECISION,)): [one, three],
        MemoryFilter(types=(MemoryType.ERROR, MemoryType.DECISION)): [one, two, three],
        MemoryFilter(tags=("db",)): [one, two],
        MemoryFilter(tags=("db", "perf")): [one, two, three],
        MemoryFilter(tags=("db", "perf"), match_all_tags=True): [one],
        MemoryFilter(relevance_to=("deploy",)): [one, two],
        MemoryFilter(task_id="tsk_b", tags=("perf",), relevance_to=("lint",)): [three],
        MemoryFilter(created_after=far[0].created_at): [one, two, three],
    }
    for f, expected in cases.items():
        near = await archive.read(semantic, "default", query, f, 3)
        assert [seq for seq, _ in near] == expected, f
    before = await archive.read(semantic, "default", query, MemoryFilter(created_before=far[0].created_at), 3)
    assert not {seq for seq, _ in before} & {one, two, three}


async def test_vectors_of_another_dimension_are_refused(archive: Archive) -> None:
    with pytest.raises(InvalidArgument, match="vectors"):
        await archive.add("default", [entry("too long")], [np.ones(DIMENSION * 2, dtype=np.float32)])


async def test_prepare_index_refuses_another_model_and_names_taskmem_reembed(archive: Archive) -> None:
    with pytest.raises(memory_vectors.EmbeddingModelMismatch, match="taskmem reembed") as refused:
        await archive.storage.write(lambda tx: memory_vectors.prepare_index(tx, "other-model", 16), "", "test")
    assert MODEL in str(refused.value) and "other-model" in str(refused.value)


async def test_a_sqlite_vec_table_of_the_first_layout_is_dropped_keeping_its_vectors(archive: Archive) -> None:
    stored = await archive.add("default", [entry("a"), entry("b")], [unit(1, 0), unit(0, 1)])

    def downgrade(tx: Transaction) -> None:
        # The layout of the first release: float vectors only in vec0, no memory_embeddings rows.
        rows = tx.fetchall("SELECT seq, embedding FROM memory_embeddings")
        tx.execute(f"CREATE VIRTUAL TABLE {memory_vectors.VECTOR_TABLE} USING vec0(seq INTEGER PRIMARY KEY,"
                   f" namespace TEXT PARTITION KEY, task_id TEXT, embedding FLOAT[{DIMENSION}] distance_metric=cosine)")
        tx.executemany(f"INSERT INTO {memory_vectors.VECTOR_TABLE} (seq, namespace, task_id, embedding)"
                       " VALUES (?, 'default', 'tsk_a', ?)", [(r[0], r[1]) for r in rows])
        tx.execute("DELETE FROM memory_embeddings")
    await archive.storage.write(downgrade, "default", "test")
    missing = await archive.storage.write(lambda tx: memory_vectors.prepare_index(tx, MODEL, DIMENSION), "", "test")
    assert missing == 0
    tables = await archive.read(lambda reader: reader.fetchall("SELECT name FROM sqlite_master WHERE name = ?",
                                                               (memory_vectors.VECTOR_TABLE,)))
    assert tables == []
    near = await archive.read(semantic, "default", unit(0, 1), MemoryFilter(), 2)
    assert [seq for seq, _ in near] == [stored[1].seq, stored[0].seq]


async def test_loading_the_vector_index_ahead_counts_the_vectors_of_the_database(archive: Archive) -> None:
    await archive.add("default", [entry("one"), entry("two")], [unit(1, 0), unit(0, 1)])
    await archive.add("default", [entry("queued")])  # no vector yet: not in the index
    assert await archive.read(memory_vector_index.load) == 2


async def test_vectors_stored_after_a_search_are_found_by_the_next_one(archive: Archive) -> None:
    first = await archive.add("default", [entry("first")], [unit(1, 0)])
    assert [seq for seq, _ in await archive.read(semantic, "default", unit(0, 1), MemoryFilter(), 5)] == [first[0].seq]
    direct = await archive.add("default", [entry("direct", tags=("db",))], [unit(0, 1)])
    queued = await archive.add("default", [entry("queued", tags=("db",))])  # joins the embedding backlog
    await archive.storage.write(
        lambda tx: memory_backlog.store_backlog_vectors(tx, [queued[0].seq], np.stack([unit(0.1, 1)])), "", "test")
    near = await archive.read(semantic, "default", unit(0, 1), MemoryFilter(), 5)
    assert [seq for seq, _ in near] == [direct[0].seq, queued[0].seq, first[0].seq]
    tagged = await archive.read(semantic, "default", unit(0, 1), MemoryFilter(tags=("db",)), 5)
    assert [seq for seq, _ in tagged] == [direct[0].seq, queued[0].seq]


async def test_a_search_after_reembed_from_another_connection_ranks_by_the_new_vectors(
        archive: Archive, tmp_path: Path) -> None:
    # More west-pointing entries than the pre-selection keeps: a stale index would keep "north" out of it.
    fillers = memory_vectors.MIN_CANDIDATES + 10
    await archive.add("default", [entry("west") for _ in range(fillers)], [unit(-1, 0)] * fillers)
    east, north = await archive.add("default", [entry("east"), entry("north")], [unit(1, 0), unit(0, 1)])
    near = await archive.read(semantic, "default", unit(1, 0), MemoryFilter(), 1)
    assert [seq for seq, _ in near] == [east.seq]
    other = sqlite_connection.connect(str(tmp_path / "taskmem.db"))  # as `taskmem reembed` beside a running server
    try:
        new_model = {"west": unit(-1, 0), "east": unit(0, -1), "north": unit(1, 0)}
        memory_vectors.rebuild(other, MODEL, DIMENSION, lambda texts: np.stack([new_model[t] for t in texts]),
                               lambda done, total: None)
    finally:
        other.close()
    near = await archive.read(semantic, "default", unit(1, 0), MemoryFilter(), 1)
    assert [seq for seq, _ in near] == [north.seq]


# --- hybrid ----------------------------------------------------------------------------------------


async def test_hybrid_puts_the_entry_both_modes_rank_high_first_and_scores_share_and_similarity(
        archive: Archive) -> None:
    text_only, both, _, unrelated = await archive.add("default", [
        entry("Redis eviction policy set to allkeys-lru"),
        entry("Use Redis for caching sessions"),
        entry("Keep hot session data in an in-memory store"),
        entry("Fixed the login form"),
    ], [unit(0, 0, 1), unit(1, 0.1), unit(1, 0), unit(-1, 0)])
    query, vector = full_text_query("redis"), unit(1, 0.05)
    hits = await archive.read(search_hits, "default", query, vector, SearchMode.HYBRID, MemoryFilter(), 4)
    assert hits[0].seq == both.seq
    assert hits[0].found_by == (SearchMode.FULLTEXT, SearchMode.SEMANTIC) and "[Redis]" in hits[0].snippet
    shares = {seq: share for seq, _, share in await archive.read(ranked_matches, "default", query, MemoryFilter(), 4)}
    vectors = {text_only.seq: unit(0, 0, 1), both.seq: unit(1, 0.1), unrelated.seq: unit(-1, 0)}
    for hit in hits:
        similarity = float(vectors[hit.seq] @ vector) if hit.seq in vectors else float(unit(1, 0) @ vector)
        assert hit.score == pytest.approx(FULLTEXT_WEIGHT * shares.get(hit.seq, 0.0) + SEMANTIC_WEIGHT * similarity)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    [last] = [h for h in hits if h.seq == unrelated.seq]
    assert last.found_by == (SearchMode.SEMANTIC,) and last.snippet == "" and hits[-1] is last


async def test_each_mode_reports_its_own_score_and_fulltext_its_snippet(archive: Archive) -> None:
    stored, _ = await archive.add("default", [entry("Use Redis for caching"), entry("Fixed the login form")],
                                  [unit(1, 0), unit(0, 1)])
    [(text_hit, text_entry)] = await archive.read(search_entries, "default", full_text_query("redis"), None,
                                                  SearchMode.FULLTEXT, MemoryFilter(), 10)
    assert text_entry.id == stored.id and text_hit.score > 0 and "[Redis]" in text_hit.snippet
    meaning = await archive.read(search_entries, "default", "", unit(1, 0), SearchMode.SEMANTIC, MemoryFilter(), 1)
    [(hit, found)] = meaning
    assert found.id == stored.id and hit.score == pytest.approx(1.0) and hit.snippet == ""
