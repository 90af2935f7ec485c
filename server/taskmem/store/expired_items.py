"""Retention's deletions (maintenance): expired memory entries, messages, episodes and action log lines, the
content of the events that carried entries, messages and episodes, and events past the event log's own TTL.

Reads already leave them out from the moment they expire (store/unexpired.py,
event_log.event_from_row); this frees the space, a bounded page per write. An
entry goes with every row that points at it (tags, relevance, full text, embedding, embedding queue); the
events of an entry, a message or an episode stay, stripped to tombstones (cursor, type, task, time and the
item's id), so streams keep every cursor. A log line's event never held its text.

The newest entry (highest seq) is never deleted, only hidden, until a newer one exists: SQLite reuses the
highest rowid of an emptied end of the table, and the in-memory indexes count every seq past the last
one they read as new (memory_text_index, memory_filter_sets).
"""

from __future__ import annotations

import json

from taskmem.core.actions import ActionStatus
from taskmem.core.events import tombstone
from taskmem.store.access import Reader, Transaction
from taskmem.store.event_log import payload_text, retention_cursor
from taskmem.store.memory.memory_vector_index import CHANGES_TABLE

# Events the retention cursor may pass in one sweep write (the events read to find how far it may go).
RETENTION_SCAN = 10_000


def namespaces_with_expired(db: Reader, now: int) -> list[str]:
    """The namespaces holding expired memory entries, messages or episodes, or expired events not yet stripped."""
    rows = db.fetchall("SELECT DISTINCT namespace FROM memory_entries WHERE expires_at <= ?"
                       " UNION SELECT DISTINCT namespace FROM messages WHERE expires_at <= ?"
                       " UNION SELECT DISTINCT namespace FROM episodes WHERE expires_at <= ?"
                       " UNION SELECT DISTINCT namespace FROM events WHERE expires_at > 0 AND expires_at <= ?",
                       (now, now, now, now))
    return [row[0] for row in rows]


def next_expiry(reader: Reader, now: int) -> int | None:
    """When the next memory entry or message of any namespace expires (None: none is set to), for caches of
    reads that may hold them: one probe of each expiry index."""
    row = reader.fetchone("SELECT min(expires_at) FROM (SELECT min(expires_at) AS expires_at FROM memory_entries"
                          " WHERE expires_at > ? UNION ALL SELECT min(expires_at) FROM messages WHERE expires_at > ?)"
                          " AS next", (now, now))
    return int(row[0]) if row is not None and row[0] is not None else None


def delete_expired_messages(tx: Transaction, page: int) -> int:
    """Delete up to `page` of tx.namespace's expired messages, oldest expiry first; returns how many."""
    rows = tx.fetchall("SELECT id FROM messages WHERE expires_at <= ? AND namespace = ? ORDER BY expires_at LIMIT ?",
                       (tx.now, tx.namespace, page))
    if rows:
        tx.execute(f"DELETE FROM messages WHERE namespace = ? AND id IN ({', '.join('?' * len(rows))})",
                   [tx.namespace, *(row[0] for row in rows)])
    return len(rows)


def delete_expired_entries(tx: Transaction, page: int) -> int:
    """Delete up to `page` of tx.namespace's expired entries, oldest expiry first; returns how many."""
    newest = tx.fetchone("SELECT coalesce(max(seq), 0) FROM memory_entries")
    rows = tx.fetchall("SELECT seq, summary, detail FROM memory_entries WHERE expires_at <= ? AND namespace = ?"
                       " AND seq < ? ORDER BY expires_at LIMIT ?", (tx.now, tx.namespace, newest[0] if newest else 0,
                                                                     page))
    if not rows:
        return 0
    seqs = [row[0] for row in rows]
    marks = ", ".join("?" * len(seqs))
    if tx.dialect == "sqlite":  # FTS5 external content: an index row is removed with the text it indexed
        tx.executemany("INSERT INTO memory_fts (memory_fts, rowid, summary, detail) VALUES ('delete', ?, ?, ?)",
                       [(row[0], row[1], row[2]) for row in rows])
        # The in-memory indexes drop a seq logged as changed and gone (present 0): the vector index a seq
        # whose vector it no longer finds, the text index every seq so logged.
        tx.executemany(f"INSERT INTO {CHANGES_TABLE} (seq, present) VALUES (?, 0)", [(seq,) for seq in seqs])
    for table, column in (("memory_entry_tags", "entry_seq"), ("memory_entry_relevance", "entry_seq"),
                          ("memory_embeddings", "seq"), ("memory_embedding_queue", "seq"), ("memory_entries", "seq")):
        tx.execute(f"DELETE FROM {table} WHERE {column} IN ({marks})", seqs)
    return len(rows)


def strip_expired_events(tx: Transaction, page: int) -> int:
    """Strip up to `page` of tx.namespace's expired events to their tombstones (expires_at 0 marks one done,
    still expired to every read); returns how many."""
    rows = tx.fetchall("SELECT cursor, payload FROM events WHERE expires_at > 0 AND expires_at <= ? AND namespace = ?"
                       " ORDER BY expires_at LIMIT ?", (tx.now, tx.namespace, page))
    tx.executemany("UPDATE events SET payload = ?, expires_at = 0 WHERE cursor = ?",
                   [(payload_text(tombstone(json.loads(row[1]))), row[0]) for row in rows])
    return len(rows)


def namespaces_with_old_log_lines(db: Reader, before: int) -> list[str]:
    """The namespaces holding action log lines written at or before this time."""
    return [row[0] for row in db.fetchall("SELECT DISTINCT namespace FROM action_logs WHERE created_at <= ?",
                                          (before,))]


def delete_expired_log_lines(tx: Transaction, cutoff: int | None, page: int) -> int:
    """Delete up to `page` of tx.namespace's log lines of finished actions written at or before cutoff (None:
    the namespace keeps its logs); a running action's lines stay. Returns how many."""
    if cutoff is None:
        return 0
    rows = tx.fetchall("SELECT l.action_id, l.sequence FROM action_logs l JOIN actions a"
                       " ON a.namespace = l.namespace AND a.id = l.action_id"
                       " WHERE l.namespace = ? AND l.created_at <= ? AND a.status != ? LIMIT ?",
                       (tx.namespace, cutoff, ActionStatus.RUNNING.value, page))
    tx.executemany("DELETE FROM action_logs WHERE namespace = ? AND action_id = ? AND sequence = ?",
                   [(tx.namespace, row[0], row[1]) for row in rows])
    return len(rows)


def delete_expired_episodes(tx: Transaction, page: int) -> int:
    """Delete up to `page` of tx.namespace's expired episodes, oldest expiry first; returns how many."""
    rows = tx.fetchall("SELECT seq FROM episodes WHERE expires_at <= ? AND namespace = ? ORDER BY expires_at LIMIT ?",
                       (tx.now, tx.namespace, page))
    if rows:
        tx.execute(f"DELETE FROM episodes WHERE seq IN ({', '.join('?' * len(rows))})", [row[0] for row in rows])
    return len(rows)


def namespaces_with_events(db: Reader) -> list[str]:
    """Every namespace with events (the event log's TTL checks each)."""
    return [row[0] for row in db.fetchall("SELECT DISTINCT namespace FROM events")]


def delete_old_events(tx: Transaction, cutoff: int | None, page: int) -> int:
    """The event log's TTL for tx.namespace (cutoff None: none): move its retention cursor up to its last event
    committed at or before cutoff, then delete up to `page` of its events at or below the cursor. Returns how
    many were deleted."""
    if cutoff is None:
        return 0
    gone = _advance_retention_cursor(tx, cutoff)
    rows = tx.fetchall("SELECT cursor FROM events WHERE namespace = ? AND cursor <= ? ORDER BY cursor LIMIT ?",
                       (tx.namespace, gone, page))
    if rows:
        tx.execute(f"DELETE FROM events WHERE cursor IN ({', '.join('?' * len(rows))})", [row[0] for row in rows])
    return len(rows)


def _advance_retention_cursor(tx: Transaction, cutoff: int) -> int:
    """The namespace's retention cursor, first moved up (looking at most RETENTION_SCAN events past it) to its
    last event committed at or before cutoff, but never past an event a webhook has still to send (a task's
    delivered_cursor) nor to the log's newest event (SQLite numbers the next event from it)."""
    gone, _ = retention_cursor(tx, tx.namespace)
    row = tx.fetchone("SELECT max(cursor) FROM (SELECT cursor, created_at FROM events WHERE namespace = ? AND cursor > ?"
                      " ORDER BY cursor LIMIT ?) AS head WHERE created_at <= ?",
                      (tx.namespace, gone, RETENTION_SCAN, cutoff))
    if row is None or row[0] is None:
        return gone
    target = int(row[0])
    hooked = tx.fetchone("SELECT min(coalesce(c.delivered_cursor, 0)) FROM tasks t LEFT JOIN webhook_cursors c"
                         " ON c.namespace = t.namespace AND c.task_id = t.id"
                         " WHERE t.namespace = ? AND t.callback_url != ''", (tx.namespace,))
    if hooked is not None and hooked[0] is not None:
        target = min(target, int(hooked[0]))
    newest = tx.fetchone("SELECT max(cursor) FROM events")
    target = min(target, int(newest[0]) - 1) if newest is not None and newest[0] is not None else target
    if target <= gone:
        return gone
    tx.execute("INSERT INTO event_retention (namespace, cursor, recorded_at) VALUES (?, ?, ?) ON CONFLICT (namespace)"
               " DO UPDATE SET cursor = excluded.cursor, recorded_at = excluded.recorded_at",
               (tx.namespace, target, tx.now))
    return target
