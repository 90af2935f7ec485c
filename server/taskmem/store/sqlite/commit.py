"""A group-commit batch on SQLite: one BEGIN IMMEDIATE … COMMIT, a SAVEPOINT per mutation.

SQLite has one writer at a time (the IMMEDIATE lock), so the batch's events take
the cursors after the log's last one, in commit order, with no gap.
"""

from __future__ import annotations

import sqlean as sqlite3

from taskmem.core.events import Event
from taskmem.store.event_log import payload_text
from taskmem.store.sqlite.statements import Statements
from taskmem.store.storage import PayloadEncoder
from taskmem.store.writer import Job, Outcome, run_mutations


def _store_events(connection: sqlite3.Connection, events: list[Event]) -> None:
    """Append a batch's events in one statement; cursors follow on from the log's last one."""
    last = connection.execute("SELECT coalesce(max(cursor), 0) FROM events").fetchone()[0]
    for offset, event in enumerate(events, start=1):
        event.cursor = last + offset
    connection.executemany(
        "INSERT INTO events (cursor, namespace, type, task_id, correlation_id, payload, created_at, expires_at,"
            " key_id, agent_id)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(e.cursor, e.namespace, e.type.value, e.task_id, e.correlation_id,
          payload_text(e.payload), e.created_at, e.expires_at, e.key_id, e.agent_id) for e in events])


def run_batch(connection: sqlite3.Connection, batch: list[Job], encode: PayloadEncoder) -> list[Outcome]:
    """In the writer thread: the batch run grouped (store/writer.py, run_mutations), then one COMMIT."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        outcomes = run_mutations(Statements(connection), batch, encode)
        events = [event for _, _, mutation_events, _ in outcomes for event in mutation_events]
        if events:
            _store_events(connection, events)
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
    return outcomes
