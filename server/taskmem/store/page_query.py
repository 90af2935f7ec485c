"""One builder for the filtered keyset-paged SELECT every List call runs.

    rows = (PageQuery("waits", order=("created_at DESC", "id DESC"))
            .equals("namespace", namespace).equals("task_id", task_id).any_of("status", statuses)
            .after(key).fetch(db, limit))

Filters whose value is empty are left out (an unset request field filters nothing). `after`
takes the sort key of the previous page's last row and continues strictly past it in the
sort order; a key sorted one way throughout becomes one row-value comparison (`(a, b) < (?, ?)`,
which both engines answer from an index on those columns), a key with mixed directions the
equivalent nested OR. The SQL is portable: SQLite and PostgreSQL run it as it is.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from taskmem.store.access import Reader, Row


def _order_term(term: str) -> tuple[str, bool]:
    """("created_at DESC") → ("created_at", True)."""
    column, _, direction = term.partition(" ")
    return column, direction.strip().upper() == "DESC"


class PageQuery:
    def __init__(self, source: str, order: Sequence[str], columns: str = "*") -> None:
        """source: the table (with an alias if the filters use one); order: its sort key, "column [DESC]" each,
        ending in a unique column so the order is total."""
        self._source = source
        self._columns = columns
        self._order = [_order_term(term) for term in order]
        self._clauses: list[str] = []
        self._params: list[Any] = []

    def where(self, clause: str, *params: Any) -> PageQuery:
        """A condition written out, its `?` marks bound to params in order."""
        self._clauses.append(clause)
        self._params.extend(params)
        return self

    def equals(self, column: str, value: Any) -> PageQuery:
        """column = value, unless value is empty ("", None)."""
        if value is None or value == "":
            return self
        return self.where(f"{column} = ?", value)

    def any_of(self, column: str, values: Iterable[Any]) -> PageQuery:
        """column IN (values), unless there are none."""
        values = list(values)
        if not values:
            return self
        return self.where(f"{column} IN ({', '.join('?' * len(values))})", *values)

    def after(self, key: Sequence[Any] | None) -> PageQuery:
        """Only rows past key (the previous page's last sort key) in the sort order; None: from the start."""
        if key is None:
            return self
        if len(key) != len(self._order):
            raise ValueError(f"a page key of {len(self._order)} values was expected, got {len(key)}")
        columns = [column for column, _ in self._order]
        descending = {desc for _, desc in self._order}
        if len(descending) == 1:
            marks = ", ".join("?" * len(key))
            return self.where(f"({', '.join(columns)}) {'<' if descending.pop() else '>'} ({marks})", *key)
        # Mixed directions: a < k1 OR (a = k1 AND (b > k2 OR (b = k2 AND …))), built from the last column out.
        clause, params = "", []
        for (column, desc), value in reversed(list(zip(self._order, key))):
            past = f"{column} {'<' if desc else '>'} ?"
            if not clause:
                clause, params = past, [value]
            else:
                clause, params = f"({past} OR ({column} = ? AND {clause}))", [value, value, *params]
        return self.where(clause, *params)

    def sql(self, limit: int) -> tuple[str, list[Any]]:
        where = f" WHERE {' AND '.join(self._clauses)}" if self._clauses else ""
        order = ", ".join(f"{column} DESC" if desc else column for column, desc in self._order)
        return f"SELECT {self._columns} FROM {self._source}{where} ORDER BY {order} LIMIT ?", [*self._params, limit]

    def fetch(self, db: Reader, limit: int) -> list[Row]:
        """The first `limit` rows."""
        sql, params = self.sql(limit)
        return db.fetchall(sql, params)
