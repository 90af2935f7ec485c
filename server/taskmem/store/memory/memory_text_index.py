"""An in-memory BM25 index of memory entries' text, one per database file, for the full-text ranking.

FTS5 ranks a word-level OR query by calling bm25() for every match: at 100k entries a question whose
words match ~13,000 entries spent ~15 ms there, and FTS5 can only weigh a word by its rarity across
the whole index. This index holds, per term, the rows that contain it and the term's weighted
frequency in each (a summary occurrence counts 2, a detail occurrence 1, as the FTS5 ranking did) in
numpy arrays, so a search scores only the postings of its words (~1 ms at 100k) and computes the BM25
statistics (entry count, document frequency, average length) over the entries it searches: the
namespace, narrowed by the filter. FTS5 stays for phrases (which rows hold them) and snippets (made on
a scratch FTS5 table of the hits alone, `snippets`).

Terms are FTS5's own: each distinct word (\\w+, lower-cased) is run once through an in-memory FTS5
table with memory_fts's tokenizer (porter unicode61) and the result is cached, so the index, the
query and FTS5's MATCH agree on what a word's term is.

Kept in step with writes by entry seq: memory entries are only ever appended (never changed) by SQLite's
one writer, so every entry past the last seq indexed is new. Retention deletes expired entries (never the
newest), logging each seq in memory_vector_changes (present 0) as the vector index needs; the index marks
those rows dead, out of every search and its statistics. Expired entries not yet deleted are left out of
each search too (a probe of the expiry index). Before each search
the index reads the entries past it; they go into small segments that are merged as they pile up (into
the main segment each time the index has grown by a tenth: ~0.4 s for that search at 100k entries).
The word → terms cache keeps every distinct word of the indexed texts (a few MB per 100k words); a
query's words are looked up, not learned.
Loaded in the background at start-up with the vector index, or else by the first search: 100k bench
entries (~30 tokens each) took ~4 s CPU, most of it splitting the texts into words. Memory: ~8 bytes
per (entry, distinct term) plus ~16 bytes per entry.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import sqlean as sqlite3

from taskmem.core.ids import now_us
from taskmem.store.access import Reader, Row
from taskmem.store.memory.memory_vector_index import CHANGES_TABLE

K1 = 1.2
B = 0.75
SUMMARY_WEIGHT = 2.0  # a summary occurrence of a term counts twice a detail occurrence
DETAIL_WEIGHT = 1.0
_RAW_WORD = re.compile(r"\w+")
_LOAD_CHUNK = 4096
# Tail segments are merged into one when there are more than this many; the tail into the main
# segment when it holds more than MERGE_SHARE of the main segment's postings.
_MAX_TAIL_SEGMENTS = 8
_MERGE_SHARE = 0.1


class _Terms:
    """FTS5's terms of raw words (porter unicode61), each word tokenized once; shared by every index. Its
    in-memory FTS5 database also makes snippets (`snippets`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        self._db.execute("CREATE VIRTUAL TABLE words USING fts5 (word, tokenize = 'porter unicode61')")
        self._db.execute("CREATE VIRTUAL TABLE word_terms USING fts5vocab (words, 'instance')")
        self._db.execute("CREATE VIRTUAL TABLE snippet_rows USING fts5 (summary, detail,"
                         " tokenize = 'porter unicode61')")
        self.of_word: dict[str, tuple[int, ...]] = {}  # raw word → ids of its terms (usually one)
        self.id_of: dict[str, int] = {}  # term → id

    def learn(self, words: Iterable[str]) -> None:
        """Make sure every word's terms are known."""
        new = [w for w in set(words) if w not in self.of_word]  # a set of ~100k words costs ~5 ms
        if not new:
            return
        with self._lock:
            new = [w for w in new if w not in self.of_word]
            for word, terms in zip(new, self._tokenized(new)):
                self.of_word[word] = tuple(self.id_of.setdefault(term, len(self.id_of)) for term in terms)

    def _tokenized(self, words: list[str]) -> list[list[str]]:
        """Each word's FTS5 terms, in order (the caller holds the lock)."""
        self._db.executemany("INSERT INTO words (rowid, word) VALUES (?, ?)", enumerate(words))
        found: dict[int, list[str]] = {}
        for term, doc in self._db.execute("SELECT term, doc FROM word_terms ORDER BY doc, offset"):
            found.setdefault(int(doc), []).append(str(term))
        self._db.execute("DELETE FROM words")
        return [found.get(i, []) for i in range(len(words))]

    def of_text(self, text: str) -> list[int]:
        """The term ids of a text's tokens, in order."""
        words = _RAW_WORD.findall(text.lower())
        self.learn(words)
        of_word = self.of_word
        return [t for w in words for t in of_word[w]]

    def snippets(self, texts: Sequence[tuple[str, str]], match: str, tokens: int) -> list[str]:
        """FTS5's snippet() of each (summary, detail) for the MATCH expression ("" where it does not match)."""
        with self._lock:
            self._db.executemany("INSERT INTO snippet_rows (rowid, summary, detail) VALUES (?, ?, ?)",
                                 [(i, summary, detail) for i, (summary, detail) in enumerate(texts)])
            try:
                found = dict(self._db.execute(
                    f"SELECT rowid, snippet(snippet_rows, -1, '[', ']', '…', {int(tokens)}) FROM snippet_rows"
                    " WHERE snippet_rows MATCH ?", (match,)).fetchall())
            finally:
                self._db.execute("DELETE FROM snippet_rows")
        return [str(found.get(i, "")) for i in range(len(texts))]

    def ids(self, words: Sequence[str]) -> list[int]:
        """Distinct term ids of query words, in order; a term no indexed text holds gets a negative id of this
        query's own (no postings, yet it counts in the most the words could score). A query's words are not
        learned: only indexed texts grow the word cache, so searches for words no entry has cost no memory."""
        raw = [w for word in words for w in _RAW_WORD.findall(word.lower())]
        unknown = [w for w in dict.fromkeys(raw) if w not in self.of_word]
        looked: dict[str, tuple[int, ...]] = {}
        if unknown:
            absent: dict[str, int] = {}
            with self._lock:
                tokenized = self._tokenized(unknown)
            for word, terms in zip(unknown, tokenized):
                looked[word] = tuple(self.id_of[term] if term in self.id_of
                                     else absent.setdefault(term, -1 - len(absent)) for term in terms)
        return list(dict.fromkeys(t for w in raw for t in self.of_word.get(w, looked.get(w, ()))))


_terms = _Terms()


@dataclass(frozen=True)
class _Segment:
    """Postings of a run of rows, grouped by term: the rows of terms[i] are rows[starts[i]:starts[i + 1]]
    (ascending), with their weighted term frequencies."""
    terms: np.ndarray  # int64, ascending
    starts: np.ndarray  # int64, len(terms) + 1
    rows: np.ndarray  # int32
    weights: np.ndarray  # float32

    @property
    def postings(self) -> int:
        return len(self.rows)

    def of_term(self, term: int) -> tuple[np.ndarray, np.ndarray]:
        i = int(np.searchsorted(self.terms, term))
        if i == len(self.terms) or self.terms[i] != term:
            return _NO_ROWS, _NO_WEIGHTS
        start, end = self.starts[i], self.starts[i + 1]
        return self.rows[start:end], self.weights[start:end]


_NO_ROWS = np.empty(0, np.int32)
_NO_WEIGHTS = np.empty(0, np.float32)


def _segment(terms: np.ndarray, rows: np.ndarray, weights: np.ndarray) -> _Segment:
    """A segment of postings (term, row, weight) given in row order."""
    order = np.argsort(terms, kind="stable")  # stable: each term's rows stay ascending
    terms, rows, weights = terms[order], rows[order], weights[order]
    distinct, starts = np.unique(terms, return_index=True)
    return _Segment(distinct, np.append(starts, len(terms)).astype(np.int64), rows, weights)


def _merged(segments: Sequence[_Segment]) -> _Segment:
    """One segment of several, given in row order."""
    terms = np.concatenate([np.repeat(s.terms, np.diff(s.starts)) for s in segments])
    return _segment(terms, np.concatenate([s.rows for s in segments]), np.concatenate([s.weights for s in segments]))


@dataclass(frozen=True)
class _State:
    """What one search reads. Row arrays are written past `size` in place (no search reads there) and
    replaced when they grow; segments are never changed once made."""
    seqs: np.ndarray  # int64 seq of each row (ascending)
    namespaces: np.ndarray  # int32 code of each row's namespace
    lengths: np.ndarray  # int32 tokens of each row (summary and detail)
    row_of_seq: np.ndarray  # int32 row of each seq, -1 where none
    size: int
    codes: dict[str, int]  # namespace → code (only ever added to)
    main: _Segment
    tail: tuple[_Segment, ...]
    last_seq: int

    def postings(self, term: int) -> tuple[np.ndarray, np.ndarray]:
        parts = [segment.of_term(term) for segment in (self.main, *self.tail)]
        parts = [part for part in parts if len(part[0])]
        if len(parts) == 1:
            return parts[0]
        if not parts:
            return _NO_ROWS, _NO_WEIGHTS
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


_EMPTY_SEGMENT = _Segment(np.empty(0, np.int64), np.zeros(1, np.int64), _NO_ROWS, _NO_WEIGHTS)
_EMPTY = _State(np.empty(0, np.int64), np.empty(0, np.int32), np.empty(0, np.int32), np.full(0, -1, np.int32), 0,
                {}, _EMPTY_SEGMENT, (), 0)


@dataclass(frozen=True)
class TextHit:
    seq: int
    score: float  # Okapi BM25
    share: float  # score / the most the query's words can score (Σ idf × (K1 + 1) over all of them): 0 to 1


class TextIndex:
    """The term postings of one database file."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state = _EMPTY
        self._last_change = 0  # the last memory_vector_changes row whose deletion the rows reflect

    def ranked(self, reader: Reader, namespace: str, words: Sequence[str], limit: int,
               allowed: np.ndarray | None = None, required: np.ndarray | None = None) -> list[TextHit]:
        """The best `limit` entries of the namespace holding any of the words, by Okapi BM25 (k1 1.2, b 0.75)
        with its statistics taken over the entries searched, best first (ties: lower seq first).

        allowed: the seqs a filter allows (None: the whole namespace), which are the entries searched;
        required: only these seqs may be hits (a phrase's matches), though all allowed ones count in the
        statistics. Scored by best_by_bm25 (which says how words in half or more of them weigh)."""
        state = self._current(reader)
        code = state.codes.get(namespace)
        if code is None or limit <= 0 or not words:
            return []
        size = state.size
        scope = state.namespaces[:size] == code
        if allowed is not None:
            scope &= self._mask(state, allowed)
        expired = reader.fetchall("SELECT group_concat(seq) FROM memory_entries WHERE expires_at <= ?",
                                  (now_us(),))[0][0]
        if expired:  # expired, not deleted yet: out of the search and its statistics (core/retention.py)
            scope &= ~self._mask(state, np.fromstring(expired, dtype=np.int64, sep=","))
        searched = int(np.count_nonzero(scope))
        if not searched:
            return []
        everything = searched == size
        average = float(state.lengths[:size][scope].sum()) / searched if not everything else \
            float(state.lengths[:size].sum()) / size
        postings = []
        for term in _terms.ids(words):
            rows, weights = state.postings(term)  # rows < size: the state's segments end at its size
            if not everything and len(rows):
                keep = scope[rows]
                rows, weights = rows[keep], weights[keep]
            postings.append((rows, weights))
        best = best_by_bm25(searched, average, state.lengths[:size], postings, limit,
                            None if required is None else self._mask(state, required))
        return [TextHit(int(state.seqs[row]), score, share) for row, score, share in best]

    def refresh(self, reader: Reader) -> int:
        """Bring the index up to the newest entry now; returns how many entries it holds."""
        return self._current(reader).size

    @staticmethod
    def _mask_seqs(state: _State, seqs: np.ndarray) -> np.ndarray:
        """The seqs within the index's range of seqs."""
        return seqs[(seqs >= 0) & (seqs < len(state.row_of_seq))]

    @staticmethod
    def _mask(state: _State, seqs: np.ndarray) -> np.ndarray:
        """Rows [0, size) whose seq is among seqs."""
        mask = np.zeros(state.size, dtype=bool)
        seqs = seqs[(seqs >= 0) & (seqs < len(state.row_of_seq))]
        rows = state.row_of_seq[seqs]
        mask[rows[(rows >= 0) & (rows < state.size)]] = True
        return mask

    def _current(self, reader: Reader) -> _State:
        """The state, first brought up to the newest entry and the latest deletion."""
        newest = int(reader.fetchall("SELECT coalesce(max(seq), 0) FROM memory_entries")[0][0])
        last_change = int(reader.fetchall(f"SELECT coalesce(max(id), 0) FROM {CHANGES_TABLE}")[0][0])
        state = self._state
        if newest == state.last_seq and last_change == self._last_change:
            return state
        with self._lock:
            state = self._state
            if newest < state.last_seq:  # another database file now at this path
                state = _EMPTY
            if newest > state.last_seq:
                cursor = reader.connection.execute(  # type: ignore[attr-defined]  # SQLite's own index
                    "SELECT seq, namespace, summary, detail FROM memory_entries WHERE seq > ? AND seq <= ?"
                    " ORDER BY seq", (state.last_seq, newest))
                while chunk := cursor.fetchmany(_LOAD_CHUNK):
                    state = _appended(state, chunk)
            if last_change != self._last_change:
                deleted = reader.fetchall(f"SELECT group_concat(seq) FROM {CHANGES_TABLE} WHERE id > ? AND present = 0",
                                          (self._last_change if last_change > self._last_change else 0,))[0][0]
                if deleted:  # in place, as the vector index marks a replaced row: rows are never reused
                    rows = state.row_of_seq[self._mask_seqs(state, np.fromstring(deleted, dtype=np.int64, sep=","))]
                    state.namespaces[rows[rows >= 0]] = -1
                self._last_change = last_change
            self._state = state
            return state


def _appended(state: _State, rows: Sequence[Row]) -> _State:
    """state with these entries (seq, namespace, summary, detail; ascending seqs past its last) added."""
    words = [(_RAW_WORD.findall(str(row[2]).lower()), _RAW_WORD.findall(str(row[3]).lower())) for row in rows]
    _terms.learn(w for summary, detail in words for w in (*summary, *detail))
    of_word = _terms.of_word
    terms: list[int] = []
    weights: list[float] = []
    lengths: list[int] = []
    for summary_words, detail_words in words:
        summary = [t for w in summary_words for t in of_word[w]]
        detail = [t for w in detail_words for t in of_word[w]]
        terms += summary
        terms += detail
        weights += [SUMMARY_WEIGHT] * len(summary)
        weights += [DETAIL_WEIGHT] * len(detail)
        lengths.append(len(summary) + len(detail))
    size, end = state.size, state.size + len(rows)
    token_rows = np.repeat(np.arange(size, end, dtype=np.int64), lengths)
    width = max(terms, default=0) + 1
    # One posting per (row, term), its weights summed; keys sort by row, then term.
    keys, inverse = np.unique(token_rows * width + np.array(terms, dtype=np.int64), return_inverse=True)
    summed = np.bincount(inverse, weights=np.array(weights, dtype=np.float64), minlength=len(keys))
    segment = _segment(keys % width, (keys // width).astype(np.int32), summed.astype(np.float32))

    seqs = np.array([int(row[0]) for row in rows], dtype=np.int64)
    codes = state.codes
    namespace_codes = np.array([codes.setdefault(str(row[1]), len(codes)) for row in rows], dtype=np.int32)
    arrays = [state.seqs, state.namespaces, state.lengths]
    if end > len(state.seqs):  # grow into new arrays; searches holding the old ones are unaffected
        capacity = max(end, 2 * len(state.seqs), 1024)
        arrays = [_grown(a, capacity) for a in arrays]
    row_of_seq = state.row_of_seq
    if int(seqs[-1]) >= len(row_of_seq):
        row_of_seq = np.full(max(int(seqs[-1]) + 1, 2 * len(row_of_seq)), -1, np.int32)
        row_of_seq[:len(state.row_of_seq)] = state.row_of_seq
    arrays[0][size:end] = seqs
    arrays[1][size:end] = namespace_codes
    arrays[2][size:end] = lengths
    row_of_seq[seqs] = np.arange(size, end, dtype=np.int32)

    main, tail = state.main, (*state.tail, segment)
    if len(tail) > _MAX_TAIL_SEGMENTS:
        tail = (_merged(tail),)
    if sum(segment.postings for segment in tail) > _MERGE_SHARE * main.postings:
        main, tail = _merged((main, *tail)), ()
    return _State(arrays[0], arrays[1], arrays[2], row_of_seq, end, codes, main, tail, int(seqs[-1]))


def best_by_bm25(searched: int, average: float, lengths: np.ndarray,
                 postings: Sequence[tuple[np.ndarray, np.ndarray]], limit: int,
                 required: np.ndarray | None = None,
                 holding: Sequence[int] | None = None) -> list[tuple[int, float, float]]:
    """(row, score, share) of the best `limit` rows by Okapi BM25 (k1 1.2, b 0.75), best first (ties: lower
    row first); the engines' one scorer (SQLite's index above; PostgreSQL's candidates, postgres/memory_index).

    searched: how many entries are searched (the statistics' N); average: their mean length; lengths: the
    length of each row; postings: for each distinct term of the query, the rows (among those searched) that
    hold it and its weighted frequency in each (empty for a term no entry holds: it still counts in the most
    the words can score); required: a mask of the rows that may be hits (None: all); holding: each term's
    document frequency among the entries searched, when the rows are only some of them (None: the rows given
    are all the entries holding any term, so a term's postings count its entries). share = score / the most
    the query's words can score (Σ idf × (K1 + 1) over all of them), 0 to 1.

    A word in half or more of the entries searched has an idf ≤ 0, which FTS5 clamps to 1e-6: such words
    are left out of the scoring (the ranking of the rows holding other words stays the same but for ties),
    and weigh 1e-6 only when fewer than `limit` rows hold other words, to rank the rows holding only them
    last."""
    weighed = []
    most = 0.0  # the score of an entry holding every word often: Σ idf × (K1 + 1), a word found nowhere included
    for n, (rows, weights) in enumerate(postings):
        idf = bm25_idf(searched, len(rows) if holding is None else holding[n])
        most += max(idf, 1e-6) * (K1 + 1)
        if len(rows):
            weighed.append((idf, rows, weights))
    if not weighed or limit <= 0:
        return []
    scores = np.zeros(len(lengths), dtype=np.float64)
    _add_scores(scores, [p for p in weighed if p[0] > 0], lengths, average)
    matched = _matched(scores, required)
    if len(matched) < limit:  # too few: entries holding only words of no weight come last, as in FTS5
        _add_scores(scores, [(1e-6, rows, weights) for idf, rows, weights in weighed if idf <= 0], lengths, average)
        matched = _matched(scores, required)
    best = matched[_top(scores[matched], limit)]
    return [(int(row), float(scores[row]), float(scores[row]) / most) for row in best]


def bm25_idf(searched: int, holding: int) -> float:
    """A term's inverse document frequency: `holding` of the `searched` entries hold it (≤ 0 from half on)."""
    return math.log((searched - holding + 0.5) / (holding + 0.5))


def _matched(scores: np.ndarray, required: np.ndarray | None) -> np.ndarray:
    """Rows with a score, only the required ones if given."""
    matched = np.flatnonzero(scores)
    return matched if required is None else matched[required[matched]]


def _add_scores(scores: np.ndarray, postings: list[tuple[float, np.ndarray, np.ndarray]], lengths: np.ndarray,
                average: float) -> None:
    """Add each term's BM25 part (idf, rows, weighted frequencies) to the rows' scores."""
    for idf, rows, weights in postings:
        tf = weights.astype(np.float64)
        scores[rows] += idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * lengths[rows] / average))


def _grown(array: np.ndarray, capacity: int) -> np.ndarray:
    grown = np.zeros(capacity, dtype=array.dtype)
    grown[:len(array)] = array
    return grown


def _top(scores: np.ndarray, count: int) -> np.ndarray:
    """Positions of the `count` highest scores, best first, ties by position."""
    if count < len(scores):
        cut = np.partition(scores, len(scores) - count)[len(scores) - count]
        inside = np.flatnonzero(scores >= cut)
    else:
        inside = np.arange(len(scores))
    return inside[np.lexsort((inside, -scores[inside]))][:count]


_indexes: dict[object, TextIndex] = {}
_indexes_lock = threading.Lock()


def index_of(reader: Reader) -> TextIndex:
    """The index of the reader's database file (one per file, shared by the process's reader threads)."""
    path = str(reader.fetchall("PRAGMA database_list")[0][2])
    key: object = path or id(reader.connection)  # type: ignore[attr-defined]  # an in-memory database's own
    with _indexes_lock:
        index = _indexes.get(key)
        if index is None:
            index = _indexes[key] = TextIndex()
        return index


def snippets(texts: Sequence[tuple[str, str]], match: str, tokens: int) -> list[str]:
    """FTS5's snippet() of each entry text (summary, detail) for the MATCH expression, marking matches with
    [ ] in at most `tokens` tokens ("" where it does not match). Run on a scratch FTS5 table holding just
    these rows: a snippet depends on the row and the query only, and memory_fts would first seek each
    query word's long list of entries (~0.5 ms per hit at 100k entries, against ~0.05 ms here)."""
    return _terms.snippets(texts, match, tokens) if texts else []


def load(reader: Reader) -> int:
    """Load (or refresh) the index of the reader's database ahead of the first search; returns its size.
    SQLite's only: PostgreSQL ranks with its own tsvector index (store/postgres/memory_index.py)."""
    if reader.dialect == "postgres":
        return 0
    return index_of(reader).refresh(reader)
