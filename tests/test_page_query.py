"""The keyset-paging builder, run against a real SQLite database: every row once, in order, page by page."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from taskmem.store.page_query import PageQuery
from taskmem.store.sqlite.connection import connect
from taskmem.store.sqlite.statements import Statements

# (namespace, frequency, last_seen, id): ties on the leading columns, so the key's later columns decide.
ROWS = [("a" if n % 4 else "b", n % 3, n % 5, f"p{n:02d}") for n in range(40)]


@pytest.fixture
def reader(tmp_path: Path) -> Iterator[Statements]:
    connection = connect(str(tmp_path / "paging.db"))
    connection.execute("CREATE TABLE patterns (namespace TEXT, frequency INTEGER, last_seen INTEGER, id TEXT)")
    connection.executemany("INSERT INTO patterns VALUES (?, ?, ?, ?)", ROWS)
    yield Statements(connection)
    connection.close()


def all_pages(reader: Statements, order: tuple[str, ...], size: int, namespace: str = "") -> list[tuple]:
    """Every row, read `size` at a time, each page continuing after the previous page's last key."""
    columns = [term.split()[0] for term in order]
    seen: list[tuple] = []
    key = None
    while True:
        rows = PageQuery("patterns", order=order).equals("namespace", namespace).after(key).fetch(reader, size)
        seen.extend(tuple(row) for row in rows)
        if len(rows) < size:
            return seen
        key = [rows[-1][column] for column in columns]


def sorted_rows(order: tuple[str, ...], namespace: str = "") -> list[tuple]:
    rows = [row for row in ROWS if not namespace or row[0] == namespace]
    index = {"namespace": 0, "frequency": 1, "last_seen": 2, "id": 3}
    for term in reversed(order):  # stable sorts, last key first
        column, _, direction = term.partition(" ")
        rows.sort(key=lambda row: row[index[column]], reverse=direction == "DESC")
    return rows


@pytest.mark.parametrize("order", [("frequency DESC", "last_seen DESC", "id"), ("frequency", "last_seen", "id"),
                                   ("frequency DESC", "last_seen DESC", "id DESC"), ("last_seen", "frequency DESC", "id")])
@pytest.mark.parametrize("size", [1, 3, 7, 40])
def test_pages_return_every_row_once_in_the_sort_order(reader: Statements, order: tuple[str, ...], size: int) -> None:
    assert all_pages(reader, order, size) == sorted_rows(order)


def test_an_empty_filter_value_filters_nothing_and_a_set_one_filters(reader: Statements) -> None:
    order = ("frequency DESC", "id")
    assert all_pages(reader, order, 4, namespace="") == sorted_rows(order)
    assert all_pages(reader, order, 4, namespace="b") == sorted_rows(order, "b")


def test_any_of_with_no_values_filters_nothing(reader: Statements) -> None:
    everything = PageQuery("patterns", order=("id",)).any_of("frequency", []).fetch(reader, 100)
    some = PageQuery("patterns", order=("id",)).any_of("frequency", [0, 2]).fetch(reader, 100)
    assert len(everything) == len(ROWS)
    assert {row["frequency"] for row in some} == {0, 2}
    assert [row["id"] for row in some] == sorted(row[3] for row in ROWS if row[1] in (0, 2))


def test_a_page_key_of_the_wrong_length_is_refused() -> None:
    with pytest.raises(ValueError):
        PageQuery("patterns", order=("created_at", "id")).after([1])


def test_every_mixed_order_of_two_columns_pages_like_one_query(reader: Statements) -> None:
    for first, second in itertools.product(["frequency", "frequency DESC"], ["id", "id DESC"]):
        order = (first, second)
        assert all_pages(reader, order, 6) == sorted_rows(order)
