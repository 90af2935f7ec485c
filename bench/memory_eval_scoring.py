"""What bench/memory_eval.py's two paths (in-process and over gRPC) share: the sets, the plain BM25
baseline, recall@k and the table of it, so both score the same way and print the same rows."""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

DATA_DIR = Path(__file__).resolve().parent / "data"
SETS = ("dev", "test", "heldout", "fresh")
KS = (5, 10)
# The first rows of every table: the server's three modes and the baseline full text should at least match.
MODE_NAMES = ("FULLTEXT", "SEMANTIC", "HYBRID")
BASELINE = "BM25 (plain)"
_TOKEN = re.compile(r"\w+")


def load_set(name: str) -> list[dict[str, Any]]:
    """The conversations of bench/data/memory_eval_<name>.json: each has an id, speakers, turns ("Speaker:
    text") and questions ({question, kind, evidence: 0-based turn indices})."""
    data = json.loads((DATA_DIR / f"memory_eval_{name}.json").read_text(encoding="utf-8"))
    return data["conversations"]


def set_header(name: str, conversations: Sequence[dict[str, Any]]) -> str:
    turns = sum(len(c["turns"]) for c in conversations)
    questions = sum(len(c["questions"]) for c in conversations)
    return f"set {name}: {len(conversations)} conversations, {turns} turns, {questions} questions"


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
        """Indices of the k best turns for query, best first; turns sharing no word with it are left out."""
        terms = _TOKEN.findall(query.lower())
        scores = []
        for i, doc in enumerate(self.docs):
            norm = self.k1 * (1 - self.b + self.b * self.lengths[i] / self.average)
            score = sum(self.idf[t] * doc[t] * (self.k1 + 1) / (doc[t] + norm) for t in terms if t in doc)
            if score > 0:
                scores.append((-score, i))
        return [i for _, i in sorted(scores)[:k]]


def recall(found: Sequence[Hashable], evidence: Sequence[Hashable], k: int) -> float:
    """The share of the evidence among the first k found."""
    return len(set(found[:k]) & set(evidence)) / len(evidence)


class RecallTable:
    """recall@5 and @10 per row, averaged over questions, and how many questions a row found nothing for."""

    def __init__(self, names: Iterable[str]) -> None:
        self.recalls: dict[str, list[list[float]]] = {name: [[] for _ in KS] for name in names}
        self.no_hit: Counter[str] = Counter()

    def add(self, name: str, found: Sequence[Hashable], evidence: Sequence[Hashable]) -> None:
        """Scores one question's hits (found, best first) in the row name."""
        if not found:
            self.no_hit[name] += 1
        for n, k in enumerate(KS):
            self.recalls[name][n].append(recall(found, evidence, k))

    def mean(self, name: str, k: int) -> float:
        return float(np.mean(self.recalls[name][KS.index(k)]))

    def print(self) -> None:
        print(f"\n{'mode':<16} {'recall@5':>9} {'recall@10':>10} {'no hit':>8}")
        for name in self.recalls:
            print(f"{name:<16} {self.mean(name, 5):9.3f} {self.mean(name, 10):10.3f} {self.no_hit[name]:8d}")
