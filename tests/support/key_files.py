"""A keys file (taskmem/keyring.py) for tests: one key of each role and scoped keys, in two namespaces."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

# id → entry; the secret of each is its id with "-secret" after it.
TEAM_KEYS: dict[str, dict[str, Any]] = {
    "dash": {"role": "reader", "namespaces": ["alpha"]},
    "agent": {"role": "writer", "namespaces": ["alpha"]},
    "ops": {"role": "admin", "namespaces": ["alpha"]},
    "own": {"role": "writer", "namespaces": ["alpha"], "tasks": {"created": True}},
    "builds": {"role": "reader", "namespaces": ["alpha"], "tasks": {"labels": ["build"]}},
    "other": {"role": "admin", "namespaces": ["beta"]},
}


def secret(key_id: str) -> str:
    return f"{key_id}-secret"


def bearer(key_id: str, agent: str = "", namespace: str = "") -> tuple[tuple[str, str], ...]:
    metadata = [("authorization", f"Bearer {secret(key_id)}")]
    if agent:
        metadata.append(("x-taskmem-agent", agent))
    if namespace:
        metadata.append(("x-taskmem-namespace", namespace))
    return tuple(metadata)


def write_keys(path: Path, keys: dict[str, dict[str, Any]]) -> None:
    """Write the file whole and swap it in, as an operator's tool would (the server never reads half a file)."""
    document = {"keys": [{"id": key_id, "secret": secret(key_id), **entry} for key_id, entry in keys.items()]}
    staged = path.with_suffix(".tmp")
    staged.write_text(yaml.safe_dump(document))
    os.replace(staged, path)
