"""The numbered migrations an engine ships (NNNN_name.sql in a package folder), in order."""

from __future__ import annotations

import importlib.resources
import re

_MIGRATION_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")


def migration_files(package: str) -> list[tuple[int, str, str]]:
    """(number, name, sql) of every migration in the package folder, in order."""
    found = []
    for entry in importlib.resources.files(package).iterdir():
        match = _MIGRATION_NAME.match(entry.name)
        if match:
            found.append((int(match.group(1)), entry.name, entry.read_text()))
    return sorted(found)
