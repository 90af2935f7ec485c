"""Memory-search quality on long conversations: recall@5 and @10 of each SearchMemories mode, a plain
Okapi BM25 baseline, and the binary pre-selection against an exact cosine scan.

The sets come from bench/memory_eval_data.py (bench/data/memory_eval_{dev,test}.json): each
conversation is stored as one task, one memory entry per turn ("Speaker: text", type CONTEXT), through
`insert_memory_entries` with builtin all-MiniLM-L6-v2 vectors; each question is searched within its task
(`store.memory_search.search_hits`, limit 10) and scored by recall@k = the share of its labelled
evidence turns among the first k hits, averaged over questions.

Rows:
- FULLTEXT, SEMANTIC, HYBRID: the server's own search code, as SearchMemories runs it.
- BM25 (plain): Okapi BM25 (k1 1.2, b 0.75) over lower-cased \\w+ tokens of the task's turns, no stop
  words removed, no stemming: the baseline full text should at least match.
- SEMANTIC exact: cosine against every turn of the task (numpy), the ceiling of the binary-quantised
  pre-selection SEMANTIC runs (the issue allows it to lose at most 1 % recall@10 to this).

`--sweep` (use it on the dev set only) prints HYBRID recall for other fusion constants, weights and
candidate depths, from each mode's ranked lists; what SearchMemories uses was chosen from it.

    .venv/bin/python bench/memory_eval.py [--set test|dev] [--sweep] [--server PATH]

--server PATH runs another checkout's server code (e.g. the commit before a change) on the same data.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import math
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", default="test", choices=("dev", "test"))
    parser.add_argument("--sweep", action="store_true", help="HYBRID under other fusion settings (dev set only)")
    parser.add_argument("--preselect", action="store_true",
                        help="SEMANTIC recall@10 for other sizes of the binary pre-selection")
    parser.add_argument("--server", default=str(ROOT / "server"), help="the server code to evaluate")
    parser.add_argument("--cache", default=str(Path(tempfile.gettempdir()) / "taskmem-eval-cache"),
                        help="where embeddings of the sets are kept between runs")
    return parser.parse_args()


ARGS = parse_arguments()
sys.path.insert(0, ARGS.server)

from taskmem.api.event_encoding import event_payload  # noqa: E402
from taskmem.core.ids import now_us  # noqa: E402
from taskmem.core.memory import MemoryFilter, MemoryType, NewMemoryEntry  # noqa: E402
from taskmem.core.memory_search import SearchMode, convex_fusion, full_text_query as search_query  # noqa: E402
from taskmem.core.tasks import Task, TaskStatus  # noqa: E402
from taskmem.providers.embeddings import BuiltinEmbedder  # noqa: E402
from taskmem.store import memory_vectors  # noqa: E402
from taskmem.store import tasks as task_store  # noqa: E402
from taskmem.store.memory_entries import insert_memory_entries  # noqa: E402
from taskmem.store.memory_search import ranked_matches, search_hits  # noqa: E402
from taskmem.store.storage import Storage  # noqa: E402
from taskmem.store.storage import Transaction  # noqa: E402

NAMESPACE = "default"
KS = (5, 10)
_TOKEN = re.compile(r"\w+")


def embed_cached(embedder: BuiltinEmbedder, texts: list[str]) -> np.ndarray:
    """The builtin model's vectors of texts, kept on disk by the texts' digest (the model is pinned)."""
    cache = Path(ARGS.cache)
    cache.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256("\x00".join([embedder.model_name, *texts]).encode()).hexdigest()[:24]
    path = cache / f"{digest}.npy"
    if path.exists():
        return np.load(path)
    vectors = embedder.embed_blocking(texts)
    np.save(path, vectors)
    return vectors


class PlainBM25:
    """Okapi BM25 over one conversation's turns: lower-cased \\w+ tokens, nothing removed, no stemming."""

    def __init__(self, turns: Sequence[str], k1: float = 1.2, b: float = 0.75) -> None:
        self.docs = [Counter(_TOKEN.findall(t.lower())) for t in turns]
        self.lengths = [sum(d.values()) for d in self.docs]
        self.average = sum(self.lengths) / len(self.lengths)
        df: Counter[str] = Counter()
        for doc in self.docs:
            df.update(doc.keys())
        n = len(self.docs)
        self.idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}
        self.k1, self.b = k1, b

    def top(self, query: str, k: int) -> list[int]:
        terms = _TOKEN.findall(query.lower())
        scores = []
        for i, doc in enumerate(self.docs):
            norm = self.k1 * (1 - self.b + self.b * self.lengths[i] / self.average)
            score = sum(self.idf[t] * doc[t] * (self.k1 + 1) / (doc[t] + norm) for t in terms if t in doc)
            if score > 0:
                scores.append((-score, i))
        return [i for _, i in sorted(scores)[:k]]


def recall(found: Sequence[int], evidence: Sequence[int], k: int) -> float:
    return len(set(found[:k]) & set(evidence)) / len(evidence)


def weighted_rrf(text: Sequence[int], near: Sequence[int], k: int, w_text: float, depth: int) -> list[int]:
    scores: dict[int, float] = {}
    for rank, seq in enumerate(text[:depth], start=1):
        scores[seq] = scores.get(seq, 0.0) + w_text / (k + rank)
    for rank, seq in enumerate(near[:depth], start=1):
        scores[seq] = scores.get(seq, 0.0) + (1 - w_text) / (k + rank)
    return [seq for seq, _ in sorted(scores.items(), key=lambda item: -item[1])]


async def evaluate() -> None:
    data = json.loads((ROOT / "bench" / "data" / f"memory_eval_{ARGS.set}.json").read_text(encoding="utf-8"))
    conversations = data["conversations"]
    embedder = BuiltinEmbedder(batch_size=64)
    turns = [t for c in conversations for t in c["turns"]]
    questions = [q for c in conversations for q in c["questions"]]
    start = time.perf_counter()
    turn_vectors = embed_cached(embedder, turns)
    question_vectors = embed_cached(embedder, [q["question"] for q in questions])
    print(f"set {ARGS.set}: {len(conversations)} conversations, {len(turns)} turns, {len(questions)} questions"
          f" (embedded or loaded in {time.perf_counter() - start:.1f} s); server code: {ARGS.server}")

    with tempfile.TemporaryDirectory(prefix="taskmem-eval-") as tmp:
        storage = await Storage.open(str(Path(tmp) / "eval.db"), event_payload, synchronous="OFF")
        model = (embedder.model_name, embedder.dimension)
        await storage.write(lambda tx: memory_vectors.prepare_index(tx, *model), NAMESPACE, "eval")
        seqs_of: list[list[int]] = []
        offset = 0
        for c in conversations:
            task_id = f"tsk_eval_{c['id'].replace('-', '_')}"

            def create(tx: Transaction, task_id: str = task_id) -> None:
                task_store.create_task(tx, Task(NAMESPACE, task_id, task_id, TaskStatus.EXECUTING, now_us(),
                                                now_us()), [])
            await storage.write(create, NAMESPACE, "eval")
            entries = [NewMemoryEntry(task_id=task_id, type=MemoryType.CONTEXT, summary=t, source="eval")
                       for t in c["turns"]]
            vectors = turn_vectors[offset:offset + len(entries)]
            stored = await storage.write(lambda tx, e=entries, v=vectors: insert_memory_entries(tx, e, v),
                                         NAMESPACE, "eval")
            seqs_of.append([e.seq for e in stored])
            c["task_id"] = task_id
            c["offset"] = offset
            offset += len(entries)

        rows: dict[str, list[list[float]]] = {name: [[] for _ in KS] for name in
                                              ("FULLTEXT", "SEMANTIC", "HYBRID", "BM25 (plain)", "SEMANTIC exact")}
        no_hit = Counter[str]()
        # per question: full text's (seq, share), semantic's (seq, similarity), every turn's similarity, evidence
        lists: list[tuple[list[tuple[int, float]], list[tuple[int, float]], dict[int, float], list[int]]] = []
        semantic_cases: list[tuple[MemoryFilter, np.ndarray, list[int], list[int]]] = []
        qn = 0
        for c, seqs in zip(conversations, seqs_of):
            bm25 = PlainBM25(c["turns"])
            matrix = turn_vectors[c["offset"]:c["offset"] + len(seqs)]
            f = MemoryFilter(task_id=c["task_id"])
            for q in c["questions"]:
                vector = question_vectors[qn]
                qn += 1
                evidence = [seqs[i] for i in q["evidence"]]
                match = search_query(q["question"])
                found: dict[str, list[int]] = {}
                for mode in SearchMode:
                    hits = await storage.read(search_hits, NAMESPACE, match, vector, mode, f, 10)
                    found[mode.name] = [h.seq for h in hits]
                found["BM25 (plain)"] = [seqs[i] for i in bm25.top(q["question"], 10)]
                found["SEMANTIC exact"] = [seqs[i] for i in np.argsort(-(matrix @ vector), kind="stable")[:10]]
                semantic_cases.append((f, vector, evidence, found["SEMANTIC exact"]))
                for name, seq_list in found.items():
                    if not seq_list:
                        no_hit[name] += 1
                    for n, k in enumerate(KS):
                        rows[name][n].append(recall(seq_list, evidence, k))
                if ARGS.sweep:
                    text = [(seq, share) for seq, _, share in await storage.read(ranked_matches, NAMESPACE, match,
                                                                                 f, 100)]
                    near = [(h.seq, h.score) for h in await storage.read(search_hits, NAMESPACE, match, vector,
                                                                         SearchMode.SEMANTIC, f, 100)]
                    lists.append((text, near, dict(zip(seqs, (matrix @ vector).tolist())), evidence))
        if ARGS.preselect:
            await preselect(storage, semantic_cases)
        await storage.close()

    print(f"\n{'mode':<16} {'recall@5':>9} {'recall@10':>10} {'no hit':>8}")
    for name, per_k in rows.items():
        print(f"{name:<16} {np.mean(per_k[0]):9.3f} {np.mean(per_k[1]):10.3f} {no_hit[name]:8d}")
    exact, quantised = np.mean(rows["SEMANTIC exact"][1]), np.mean(rows["SEMANTIC"][1])
    print(f"\nbinary pre-selection: SEMANTIC recall@10 {quantised:.3f} vs exact cosine {exact:.3f}"
          f" ({(quantised - exact) / exact * 100:+.1f} %)")
    if ARGS.sweep:
        sweep(lists)


async def preselect(storage: Storage, cases: list[tuple[MemoryFilter, np.ndarray, list[int], list[int]]]) -> None:
    """SEMANTIC recall@10 and overlap with the exact top 10 as the bit-KNN candidate set grows."""
    print("\nbinary pre-selection size (bit-KNN candidates = max(oversample x 10, minimum)), rescored by cosine:")
    print(f"{'oversample':>10} {'minimum':>8} {'recall@10':>10} {'exact top-10 found':>19}")
    saved = memory_vectors.OVERSAMPLE, memory_vectors.MIN_CANDIDATES
    for oversample, minimum in ((3, 40), (4, 60), (6, 80), (8, 100), (12, 150), (20, 200)):
        memory_vectors.OVERSAMPLE, memory_vectors.MIN_CANDIDATES = oversample, minimum
        r10, overlap = [], []
        for f, vector, evidence, exact in cases:
            near = [seq for seq, _ in await storage.read(memory_vectors.nearest, NAMESPACE, vector, 10, "", f)]
            r10.append(recall(near, evidence, 10))
            overlap.append(len(set(near) & set(exact)) / 10)
        print(f"{oversample:10d} {minimum:8d} {np.mean(r10):10.3f} {np.mean(overlap):19.3f}")
    memory_vectors.OVERSAMPLE, memory_vectors.MIN_CANDIDATES = saved


def sweep(lists: list[tuple[list[tuple[int, float]], list[tuple[int, float]], dict[int, float], list[int]]]) -> None:
    print("\nHYBRID by convex fusion: score = w × full-text share + (1 - w) × cosine similarity, over each mode's"
          " first `depth` candidates")
    print(f"{'w':>5} {'depth':>6} {'recall@5':>9} {'recall@10':>10}")
    results = []
    for w in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6):
        for depth in (10, 20, 40, 100):
            fused = [[h.seq for h in convex_fusion(text[:depth], near[:depth], similarity, 10, (w, 1 - w))]
                     for text, near, similarity, _ in lists]
            r5 = np.mean([recall(found, e, 5) for found, (*_, e) in zip(fused, lists)])
            r10 = np.mean([recall(found, e, 10) for found, (*_, e) in zip(fused, lists)])
            results.append((r10, r5, w, depth))
            print(f"{w:5.2f} {depth:6d} {r5:9.3f} {r10:10.3f}")
    print("\nHYBRID by weighted reciprocal-rank fusion of the same lists: score = w/(k + rank_fulltext) +"
          " (1 - w)/(k + rank_semantic)")
    print(f"{'k':>4} {'w':>5} {'depth':>6} {'recall@5':>9} {'recall@10':>10}")
    ranked = []
    for k in (1, 5, 20, 60):
        for w in (0.3, 0.4, 0.5):
            for depth in (20, 40, 100):
                fused = [weighted_rrf([s for s, _ in text], [s for s, _ in near], k, w, depth)
                         for text, near, _, _ in lists]
                r5 = np.mean([recall(found, e, 5) for found, (*_, e) in zip(fused, lists)])
                r10 = np.mean([recall(found, e, 10) for found, (*_, e) in zip(fused, lists)])
                ranked.append((r10, r5, k, w, depth))
    for r10, r5, k, w, depth in sorted(ranked, reverse=True)[:5]:
        print(f"{k:4d} {w:5.2f} {depth:6d} {r5:9.3f} {r10:10.3f}")


if __name__ == "__main__":
    asyncio.run(evaluate())
