"""The numbered migrations an engine ships (NNNN_name.sql in a package folder), in order."""

from __future__ import annotations

import importlib.resources
import re
from collections.abc import Iterable, Sequence
from typing import Any

_MIGRATION_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")


def migration_files(package: str) -> list[tuple[int, str, str]]:
    """(number, name, sql) of every migration in the package folder, in order."""
    found = []
    for entry in importlib.resources.files(package).iterdir():
        match = _MIGRATION_NAME.match(entry.name)
        if match:
            found.append((int(match.group(1)), entry.name, entry.read_text()))
    return sorted(found)


class SchemaTooNew(Exception):
    """The database was migrated by a newer taskmem than this one: it is refused, and nothing in it changed."""


RECORDED_SQL = "SELECT number, name FROM schema_migrations"


def recorded_of(rows: Iterable[Sequence[Any]]) -> dict[int, str]:
    """{number: name} from the rows of RECORDED_SQL."""
    return {int(row[0]): str(row[1]) for row in rows}


def recorded_migrations(db: Any) -> dict[int, str]:
    """{number: name} of the migrations the database records: a Reader's query, either engine."""
    return recorded_of(db.fetchall(RECORDED_SQL))


def check_not_newer(recorded: dict[int, str], shipped: list[tuple[int, str, str]]) -> None:
    """Raise SchemaTooNew, naming both schema versions, when the database records a migration this code does
    not ship: a newer release wrote it, and this one would read and write a shape it does not know."""
    known = {number for number, _, _ in shipped}
    unknown = sorted(number for number in recorded if number not in known)
    if not unknown:
        return
    newest_known = shipped[-1][1] if shipped else "none"
    raise SchemaTooNew(
        f"the database's schema is newer than this taskmem: the database is at migration {recorded[max(recorded)]}, "
        f"this taskmem's schema goes up to {newest_known}, and it does not know "
        f"{', '.join(recorded[n] for n in unknown)}. Run a taskmem release that ships those migrations, or restore "
        "a backup taken before the upgrade; this server changed nothing in the database")
