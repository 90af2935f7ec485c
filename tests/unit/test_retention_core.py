"""When a written memory entry expires: its own expire time, else its namespace's TTL (or every namespace's),
never for pinned entries or the types a live task's views always read; and how the setting is read."""

from __future__ import annotations

import pytest

from taskmem.config import ConfigError, load_config
from taskmem.core.errors import InvalidArgument
from taskmem.core.memory import MemoryType, NewMemoryEntry
from taskmem.core.retention import Kind, Retention, check_expiry

NOW = 1_000_000_000
RETENTION = Retention.from_seconds((("*", "memory_entries", 60.0), ("alpha", "memory_entries", 5.0),
                                    ("beta", "memory_entries", 0.0)))


def _entry(kind: MemoryType = MemoryType.TOOL_RESULT, **fields: object) -> NewMemoryEntry:
    return NewMemoryEntry(task_id="tsk_1", type=kind, summary="s", **fields)  # type: ignore[arg-type]


def test_a_namespace_ttl_overrides_every_namespaces_and_zero_keeps() -> None:
    assert RETENTION.entry_expiry("alpha", _entry(), NOW) == NOW + 5_000_000
    assert RETENTION.entry_expiry("gamma", _entry(), NOW) == NOW + 60_000_000
    assert RETENTION.entry_expiry("beta", _entry(), NOW) is None
    assert Retention().ttl_us("alpha", Kind.MEMORY_ENTRIES) == 0


def test_pinned_entries_and_always_relevant_types_take_no_ttl_but_an_explicit_time_stands() -> None:
    assert RETENTION.entry_expiry("alpha", _entry(pinned=True), NOW) is None
    for kind in (MemoryType.DECISION, MemoryType.ERROR, MemoryType.USER_INSTRUCTION):
        assert RETENTION.entry_expiry("alpha", _entry(kind), NOW) is None
    assert RETENTION.entry_expiry("alpha", _entry(MemoryType.DECISION, expires_at=NOW + 7), NOW) == NOW + 7


def test_an_expire_time_must_be_ahead_and_not_pinned() -> None:
    check_expiry("f", NOW + 1, False, NOW)
    for expires_at, pinned in ((NOW, False), (NOW + 1, True)):
        with pytest.raises(InvalidArgument):
            check_expiry("f", expires_at, pinned, NOW)


def test_the_setting_reads_yaml_from_the_environment_and_names_a_bad_kind() -> None:
    config = load_config(environ={"TASKMEM_RETENTION": "{'*': {memory_entries: 60}, alpha: {memory_entries: 5}}"})
    assert config.retention == (("*", "memory_entries", 60.0), ("alpha", "memory_entries", 5.0))
    with pytest.raises(ConfigError, match="retention.alpha"):
        load_config(environ={"TASKMEM_RETENTION": "{alpha: {artifacts: 5}}"})
    with pytest.raises(ConfigError, match="must not be negative"):
        load_config(environ={"TASKMEM_RETENTION": "{alpha: {memory_entries: -1}}"})
