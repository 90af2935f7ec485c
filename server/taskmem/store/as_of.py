"""The moment an AsOf names (valid time, issue 29): a time, or an event cursor's commit time."""

from __future__ import annotations

from taskmem.core.valid_time import AsOf, Moment
from taskmem.store.access import Reader


def resolve(db: Reader, namespace: str, as_of: AsOf | None) -> Moment | None:
    """The moment an AsOf names (None: now). A cursor stands for its event's commit time; one at or past
    the newest event is now; cursor 0 (or one before every event) is before anything was written."""
    if as_of is None:
        return None
    if as_of.time is not None:
        return Moment(as_of.time)
    cursor = as_of.cursor or 0
    newest = db.fetchone("SELECT max(cursor) FROM events WHERE namespace = ?", (namespace,))
    if newest is None or newest[0] is None or cursor >= newest[0]:
        return None
    row = db.fetchone("SELECT created_at FROM events WHERE namespace = ? AND cursor <= ? ORDER BY cursor DESC LIMIT 1",
                      (namespace, cursor))
    return Moment(int(row[0]) if row else -1, cursor)
