"""Webhook delivery state: per-namespace secrets (and the one a rotation replaced), per-task delivery cursors
and delivery rows."""

from __future__ import annotations

import base64
import json
import secrets
from typing import Any

from taskmem.core.events import Event, EventFilter, EventType
from taskmem.core.webhooks import SECRET_PREFIX, Delivery, DeliveryState, SigningSecrets
from taskmem.store.event_log import list_events
from taskmem.store.page_query import PageQuery
from taskmem.store.access import Reader, Row, Transaction

_COLUMNS = ("namespace", "task_id", "cursor", "event_type", "url", "state", "attempts", "last_status_code",
            "last_error", "first_attempt_at", "last_attempt_at", "next_attempt_at")
_UPSERT = (f"INSERT INTO webhook_deliveries ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))})"
           " ON CONFLICT (namespace, task_id, cursor) DO UPDATE SET"
           + ", ".join(f" {c} = excluded.{c}" for c in _COLUMNS[4:]))
_ADVANCE = ("INSERT INTO webhook_cursors (namespace, task_id, delivered_cursor) VALUES (?, ?, ?)"
            " ON CONFLICT (namespace, task_id) DO UPDATE SET"
            " delivered_cursor = CASE WHEN excluded.delivered_cursor > webhook_cursors.delivered_cursor"
            " THEN excluded.delivered_cursor ELSE webhook_cursors.delivered_cursor END")


def _values(d: Delivery) -> tuple[Any, ...]:
    return (d.namespace, d.task_id, d.cursor, d.event_type, d.url, d.state, d.attempts, d.last_status_code,
            d.last_error, d.first_attempt_at, d.last_attempt_at, d.next_attempt_at)


def delivery_from_row(row: Row) -> Delivery:
    return Delivery(*(row[c] for c in _COLUMNS))


# --- reads --------------------------------------------------------------------------------------

def hooked_tasks(db: Reader) -> list[tuple[str, str, str, list[str]]]:
    """(namespace, task id, callback_url, webhook_event_types) of every task with a callback_url."""
    rows = db.fetchall("SELECT namespace, id, callback_url, webhook_event_types FROM tasks WHERE callback_url != ''")
    return [(r["namespace"], r["id"], r["callback_url"], json.loads(r["webhook_event_types"])) for r in rows]


def task_hook(db: Reader, namespace: str, task_id: str) -> tuple[str, list[str]] | None:
    row = db.fetchone("SELECT callback_url, webhook_event_types FROM tasks WHERE namespace = ? AND id = ?",
                      (namespace, task_id))
    return (row["callback_url"], json.loads(row["webhook_event_types"])) if row else None


def delivery_position(db: Reader, namespace: str, task_id: str) -> tuple[int, Delivery | None]:
    """The task's delivered cursor and its PENDING delivery, if one is being retried."""
    row = db.fetchone("SELECT delivered_cursor FROM webhook_cursors WHERE namespace = ? AND task_id = ?",
                      (namespace, task_id))
    pending = db.fetchone("SELECT * FROM webhook_deliveries WHERE namespace = ? AND task_id = ? AND state = ?"
                          " ORDER BY cursor LIMIT 1", (namespace, task_id, DeliveryState.PENDING))
    return (row["delivered_cursor"] if row else 0), (delivery_from_row(pending) if pending else None)


def events_to_send(db: Reader, namespace: str, task_id: str, after: int, types: frozenset[EventType],
                   limit: int) -> list[Event]:
    return list_events(db, EventFilter(namespace, frozenset({task_id}), types), after, limit)


def find_secret(db: Reader, namespace: str) -> str | None:
    row = db.fetchone("SELECT secret FROM webhook_secrets WHERE namespace = ?", (namespace,))
    return row["secret"] if row else None


def signing_secrets(db: Reader, namespace: str) -> SigningSecrets | None:
    """The namespace's secret and the one a rotation replaced, with the end of its overlap."""
    row = db.fetchone("SELECT secret, previous_secret, previous_until FROM webhook_secrets WHERE namespace = ?",
                      (namespace,))
    return SigningSecrets(row["secret"], row["previous_secret"], row["previous_until"]) if row else None


def list_deliveries(db: Reader, namespace: str, task_id: str, states: list[str], after_key: list[Any] | None,
                    limit: int) -> list[Delivery]:
    """In (cursor, task id) order; after_key is the previous page's last (cursor, task id)."""
    rows = (PageQuery("webhook_deliveries", order=("cursor", "task_id"))
            .equals("namespace", namespace).equals("task_id", task_id).any_of("state", states)
            .after(after_key).fetch(db, limit))
    return [delivery_from_row(r) for r in rows]


# Spelled out so SQLite can use the partial index webhook_deliveries_finished (0015) with a bound state.
_FINISHED = f"state != '{DeliveryState.PENDING.value}'"


def namespaces_with_old_deliveries(db: Reader, cutoffs: dict[str, int]) -> list[str]:
    """The namespaces holding finished deliveries past retention (cutoffs: state -> last attempt before)."""
    found: set[str] = set()
    for state, cutoff in cutoffs.items():
        rows = db.fetchall("SELECT DISTINCT namespace FROM webhook_deliveries"
                           f" WHERE state = ? AND last_attempt_at < ? AND {_FINISHED}", (state, cutoff))
        found.update(row["namespace"] for row in rows)
    return sorted(found)


# --- mutations ----------------------------------------------------------------------------------

def ensure_secret(tx: Transaction) -> str:
    """The namespace's secret, made now if it has none."""
    found = find_secret(tx, tx.namespace)
    if found is not None:
        return found
    secret = _new_secret()
    tx.execute("INSERT INTO webhook_secrets (namespace, secret, created_at) VALUES (?, ?, ?)",
               (tx.namespace, secret, tx.now))
    return secret


def rotate_secret(tx: Transaction, overlap_us: int) -> SigningSecrets:
    """A new secret for the namespace; the one it replaces (if any) signs beside it for overlap_us.
    A previous secret still in its overlap is dropped: at most two secrets sign."""
    tx.quiet = True  # secrets show in no view
    replaced = find_secret(tx, tx.namespace)
    rotated = SigningSecrets(_new_secret())
    if replaced is not None and overlap_us > 0:
        rotated = SigningSecrets(rotated.current, replaced, tx.now + overlap_us)
    tx.execute("INSERT INTO webhook_secrets (namespace, secret, created_at, previous_secret, previous_until)"
               " VALUES (?, ?, ?, ?, ?) ON CONFLICT (namespace) DO UPDATE SET secret = excluded.secret,"
               " created_at = excluded.created_at, previous_secret = excluded.previous_secret,"
               " previous_until = excluded.previous_until",
               (tx.namespace, rotated.current, tx.now, rotated.previous, rotated.previous_until))
    return rotated


def _new_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


def save_attempts(tx: Transaction, deliveries: list[Delivery]) -> None:
    """Store deliveries as they stand; a finished one (delivered or dead-lettered) advances its task's cursor."""
    tx.executemany(_UPSERT, [_values(d) for d in deliveries])
    tx.executemany(_ADVANCE, [(d.namespace, d.task_id, d.cursor) for d in deliveries
                              if d.state != DeliveryState.PENDING])


def prune_deliveries(tx: Transaction, cutoffs: dict[str, int], limit: int) -> int:
    """Delete up to limit finished deliveries of the namespace past retention; returns how many.
    Task cursors are kept, so a pruned event is never sent again."""
    deleted = 0
    for state, cutoff in cutoffs.items():
        # Keys first, then the delete by key: the same statements on both engines (no rowid, no changes()).
        keys = [(tx.namespace, row["task_id"], row["cursor"]) for row in tx.fetchall(
            "SELECT task_id, cursor FROM webhook_deliveries"
            f" WHERE state = ? AND namespace = ? AND last_attempt_at < ? AND {_FINISHED} LIMIT ?",
            (state, tx.namespace, cutoff, limit - deleted))]
        tx.executemany("DELETE FROM webhook_deliveries WHERE namespace = ? AND task_id = ? AND cursor = ?", keys)
        deleted += len(keys)
    return deleted
