"""Checkpoints (issue 39): an agent framework's saved states as steps of a task's record (pure).

A checkpoint's value and its pending writes are the framework's own serialised bytes with their type name:
stored and returned exactly, never parsed. Only the metadata, a JSON object, is read: step, source and
run_id are taken from it at write, and lists filter on its top-level keys.

Pending writes follow LangGraph's BaseCheckpointSaver: a write is keyed by (graph task, idx); a
non-negative idx is stored once (a repeat is ignored), a negative one (WRITES_IDX_MAP's special channels)
replaces what is stored; writes read back in (task path, task id, idx) order.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from typing import Any

from taskmem.core.errors import InvalidArgument


class PruneStrategy(enum.StrEnum):
    KEEP_LATEST = "keep_latest"
    DELETE = "delete"


@dataclasses.dataclass(frozen=True)
class Serialized:
    """(type, bytes) as the framework's serialiser made them."""

    type: str
    data: bytes


@dataclasses.dataclass(frozen=True)
class PendingWrite:
    graph_task_id: str
    idx: int
    channel: str
    value: Serialized
    graph_task_path: str = ""

    @property
    def replaces(self) -> bool:
        """A negative idx (a special channel) replaces the stored write; a non-negative one is written once."""
        return self.idx < 0


@dataclasses.dataclass(frozen=True)
class Checkpoint:
    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    parent_checkpoint_id: str
    task_id: str
    value: Serialized | None  # None: read without its value (a list of steps)
    metadata_json: str
    step: int
    source: str
    run_id: str
    created_at: int
    expires_at: int | None = None
    pending_writes: tuple[PendingWrite, ...] = ()

    @property
    def size_bytes(self) -> int:
        return len(self.value.data) if self.value is not None else 0


@dataclasses.dataclass(frozen=True)
class MetadataFields:
    """What the server reads from a checkpoint's metadata."""

    step: int
    source: str
    run_id: str


def parse_metadata(field: str, text: str) -> tuple[dict[str, Any], MetadataFields]:
    """The metadata object and its step, source and run_id; "" is {}. Raises InvalidArgument for anything
    but a JSON object."""
    if not text:
        return {}, MetadataFields(0, "", "")
    try:
        metadata = json.loads(text)
    except ValueError as error:
        raise InvalidArgument(field, f"is not JSON: {error}") from None
    if not isinstance(metadata, dict):
        raise InvalidArgument(field, "is not a JSON object")
    step = metadata.get("step")
    source = metadata.get("source")
    run_id = metadata.get("run_id")
    return metadata, MetadataFields(
        step if isinstance(step, int) and not isinstance(step, bool) and abs(step) < 2**63 else 0,
        source if isinstance(source, str) else "",
        run_id if isinstance(run_id, str) else "")


def matches_filter(metadata_json: str, wanted: dict[str, Any]) -> bool:
    """Whether the metadata has each wanted top-level key with an equal JSON value."""
    if not wanted:
        return True
    metadata = json.loads(metadata_json) if metadata_json else {}
    return all(key in metadata and _equal(metadata[key], value) for key, value in wanted.items())


def _equal(stored: Any, wanted: Any) -> bool:
    """JSON equality, numbers by value (a filter arrives as a Struct, whose numbers are doubles)."""
    if isinstance(stored, bool) or isinstance(wanted, bool):
        return type(stored) is type(wanted) and stored == wanted
    if isinstance(stored, (int, float)) and isinstance(wanted, (int, float)):
        return stored == wanted
    if isinstance(stored, dict) and isinstance(wanted, dict):
        return stored.keys() == wanted.keys() and all(_equal(stored[k], wanted[k]) for k in stored)
    if isinstance(stored, list) and isinstance(wanted, list):
        return len(stored) == len(wanted) and all(_equal(a, b) for a, b in zip(stored, wanted))
    return type(stored) is type(wanted) and stored == wanted


def write_order(write: PendingWrite) -> tuple[str, str, int]:
    """The order writes read back in: LangGraph's (task_path, task_id, idx)."""
    return (write.graph_task_path, write.graph_task_id, write.idx)


def thread_task_name(thread_id: str, limit: int) -> str:
    """The name of the task created for a thread that names none."""
    name = f"LangGraph thread {thread_id}"
    return name if len(name) <= limit else name[:limit - 1] + "…"
