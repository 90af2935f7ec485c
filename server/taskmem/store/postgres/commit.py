"""A group-commit batch on PostgreSQL, and why its event cursors appear in commit order.

Several processes write at once, so a cursor from a sequence (BIGSERIAL) could become
visible out of order: transaction A takes 41, B takes 42, B commits first, a reader
sees 42 and moves on, then A commits 41 behind it. Here a batch takes its cursors as
its last statement before COMMIT by updating the one row of event_cursor
(`UPDATE … SET last = last + n RETURNING last`). The row lock that update takes is held
until the batch commits, and PostgreSQL makes a transaction visible before it releases
its locks; the next batch's update waits on that lock, so it reads `last` only after
this batch is visible and can commit only after it. Cursors therefore become visible in
increasing order with no gap: a reader that has seen cursor N never later finds an
event below N. The lock is held only for the last three statements of a batch (the
update, the event insert, NOTIFY), so writers elsewhere are serialised only there.

NOTIFY carries no payload: it only wakes the other replicas' event tails, which read
the events table by cursor (store/postgres/event_tail.py).
"""

from __future__ import annotations

import psycopg

from taskmem.core.events import Event
from taskmem.store.event_log import payload_text
from taskmem.store.postgres.connection import Row
from taskmem.store.postgres.statements import Statements
from taskmem.store.storage import PayloadEncoder
from taskmem.store.writer import Job, Outcome, run_mutations

CHANNEL = "taskmem_events"
# A batch that loses a deadlock (two replicas' batches locking the same rows in another order)
# is run again whole; its mutations are plain functions of the transaction, so they can be.
ATTEMPTS = 5
_RETRIED = (psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure)


def _store_events(connection: psycopg.Connection[Row], events: list[Event], unexplained: bool) -> None:
    """The batch's events with their cursors; a batch that changed something with no event also counts one
    more silent commit (the other replicas' thread-read caches watch that count: store/postgres/view_freshness.py)."""
    row = connection.execute(
        "UPDATE event_cursor SET last = last + %s, silent_commits = silent_commits + %s WHERE id = 1 RETURNING last",
        (len(events), int(unexplained))).fetchone()
    assert row is not None  # the migration inserts the row
    if not events:
        return
    first = int(row[0]) - len(events) + 1
    for offset, event in enumerate(events):
        event.cursor = first + offset
    with connection.cursor() as cursor:
        cursor.executemany(
            "INSERT INTO events (cursor, namespace, type, task_id, correlation_id, payload, created_at, expires_at,"
            " key_id, agent_id)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            [(e.cursor, e.namespace, e.type.value, e.task_id, e.correlation_id,
              payload_text(e.payload), e.created_at, e.expires_at, e.key_id, e.agent_id) for e in events])
    connection.execute(f"NOTIFY {CHANNEL}")


def _attempt(connection: psycopg.Connection[Row], batch: list[Job], encode: PayloadEncoder) -> list[Outcome]:
    connection.execute("BEGIN")
    try:
        # A lost deadlock or serialization failure loses the whole transaction: the batch runs again.
        outcomes = run_mutations(Statements(connection, writing=True), batch, encode, _RETRIED)
        events = [event for _, _, mutation_events, _ in outcomes for event in mutation_events]
        unexplained = any(outcome[3] for outcome in outcomes)
        if events or unexplained:
            _store_events(connection, events, unexplained)
        connection.execute("COMMIT")
    except BaseException:
        if not connection.broken:
            connection.execute("ROLLBACK")
        raise
    return outcomes


def run_batch(connection: psycopg.Connection[Row], batch: list[Job], encode: PayloadEncoder) -> list[Outcome]:
    """In the writer thread: every mutation in its savepoint, then the events, then one COMMIT."""
    for attempt in range(1, ATTEMPTS + 1):
        try:
            return _attempt(connection, batch, encode)
        except _RETRIED:
            if attempt == ATTEMPTS:
                raise
    raise AssertionError("unreachable")
