"""When a written memory entry expires: its own expire time, else its namespace's TTL (or every namespace's),
never for pinned entries or the types a live task's views always read; and how the setting is read."""

from __future__ import annotations

import pytest

from taskmem.config import ConfigError, load_config
from taskmem.core.errors import InvalidArgument
from taskmem.core.memory import MemoryType, NewMemoryEntry
from taskmem.core.messages import Kind as MessageKind
from taskmem.core.retention import Cap, Kind, Retention, check_expiry, entry_capped, message_capped

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


def test_count_caps_read_beside_the_ttls_a_namespace_overriding_every_namespaces() -> None:
    retention = Retention.from_seconds((("*", "memory_entries_max", 100.0), ("alpha", "memory_entries_max", 3.0),
                                        ("alpha", "messages_max", 2.0), ("alpha", "memory_entries", 5.0),
                                        ("beta", "memory_entries_max", 0.0)))
    assert retention.cap("alpha", Cap.MEMORY_ENTRIES) == 3
    assert retention.cap("gamma", Cap.MEMORY_ENTRIES) == 100
    assert retention.cap("beta", Cap.MEMORY_ENTRIES) == 0
    assert retention.cap("gamma", Cap.MESSAGES) == 0
    assert retention.ttl_us("alpha", Kind.MEMORY_ENTRIES) == 5_000_000  # a cap is not read as a TTL


def test_a_cap_applies_to_what_a_ttl_applies_to_even_with_its_own_expire_time() -> None:
    assert entry_capped(_entry()) and entry_capped(_entry(expires_at=NOW + 7))
    assert not entry_capped(_entry(pinned=True))
    for kind in (MemoryType.DECISION, MemoryType.ERROR, MemoryType.USER_INSTRUCTION):
        assert not entry_capped(_entry(kind))
    assert message_capped(MessageKind.TEXT, False) and message_capped(MessageKind.PROGRESS, False)
    assert not message_capped(MessageKind.TEXT, True)
    for kind in (MessageKind.LIFECYCLE, MessageKind.PLAN, MessageKind.WAIT, MessageKind.STUCK):
        assert not message_capped(kind, False)


def test_a_cap_setting_must_be_a_whole_number_of_items() -> None:
    config = load_config(environ={"TASKMEM_RETENTION": "{alpha: {memory_entries_max: 3, messages: 60}}"})
    assert config.retention == (("alpha", "memory_entries_max", 3.0), ("alpha", "messages", 60.0))
    with pytest.raises(ConfigError, match="whole number"):
        load_config(environ={"TASKMEM_RETENTION": "{alpha: {messages_max: 2.5}}"})
    with pytest.raises(ConfigError, match="retention.alpha"):
        load_config(environ={"TASKMEM_RETENTION": "{alpha: {episodes_max: 5}}"})
