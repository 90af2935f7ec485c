"""The keys file: what it accepts, how it names what it refuses, and what a reload does to the keys."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from taskmem.config import ApiKey, ConfigError
from taskmem.core.access import Role, TaskScope
from taskmem.keyring import KeyRing, legacy_key_id, parse_keys_document


def test_a_full_entry_is_read_with_its_role_namespaces_and_scope() -> None:
    (entry,) = parse_keys_document(
        "keys:\n  - {id: agent-7, secret: s3cret-s3cret, role: writer, namespaces: [a, b],"
        " tasks: {created: true, ids: [tsk_1], labels: [build]}}\n")
    assert (entry.id, entry.role, entry.namespaces) == ("agent-7", Role.WRITER, ("a", "b"))
    assert entry.scope == TaskScope(True, frozenset({"tsk_1"}), frozenset({"build"}))


@pytest.mark.parametrize(("text", "named"), [
    ("keys:\n  - {id: x, secret: long-enough, role: owner}\n", "keys_file.keys[0].role"),
    ("keys:\n  - {id: x, secret: short, role: reader}\n", "keys_file.keys[0].secret"),
    ("keys:\n  - {id: '-x', secret: long-enough, role: reader}\n", "keys_file.keys[0].id"),
    ("keys:\n  - {id: x, secret: long-enough, role: reader}\n  - {id: x, secret: other-long, role: reader}\n",
     "keys_file.keys[1].id"),
    ("keys:\n  - {id: x, secret: long-enough, role: reader, tasks: {owner: true}}\n", "keys_file.keys[0].tasks"),
    ("keys:\n  - {id: x, secret: long-enough, role: reader, extra: 1}\n", "keys_file.keys[0]"),
    ("keys: [ {id: half", "keys_file: not YAML"),
])
def test_a_bad_keys_file_is_refused_naming_the_entry_and_field(text: str, named: str) -> None:
    with pytest.raises(ConfigError, match=named.replace("[", r"\[").replace("]", r"\]")):
        parse_keys_document(text)


def test_old_style_keys_are_admins_with_an_id_derived_from_their_hash(tmp_path: Path) -> None:
    ring = KeyRing((ApiKey("old-key", ("alpha",)),))
    entry = ring.find("old-key")
    assert entry is not None and entry.role is Role.ADMIN and entry.scope is None
    assert entry.id == legacy_key_id("old-key") and "old-key" not in entry.id


def test_an_empty_keys_file_still_means_keys_are_checked(tmp_path: Path) -> None:
    (tmp_path / "keys.yaml").write_text("keys: []\n")
    ring = KeyRing(keys_file=str(tmp_path / "keys.yaml"))
    assert not ring.open and ring.find("anything") is None
    assert KeyRing().open


async def test_a_reload_replaces_the_keys_and_signals_the_watchers_of_changed_ones(tmp_path: Path) -> None:
    path = tmp_path / "keys.yaml"
    path.write_text("keys:\n  - {id: a, secret: secret-a-1, role: reader}\n  - {id: b, secret: secret-b-1, role: reader}\n")
    ring = KeyRing(keys_file=str(path))
    with ring.watch("a") as a_revoked, ring.watch("b") as b_revoked:
        path.write_text("keys:\n  - {id: b, secret: secret-b-1, role: reader}\n")
        assert ring.reload()
        assert a_revoked.is_set() and not b_revoked.is_set()
        assert ring.find("secret-a-1") is None and ring.find("secret-b-1") is not None
        path.write_text("keys: [ {id: broken")
        assert not ring.reload()  # kept as they were
        assert ring.find("secret-b-1") is not None and not b_revoked.is_set()
    await asyncio.sleep(0)
