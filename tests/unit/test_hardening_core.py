"""The pure rules behind issue 12: metadata merging, the listen check, working-memory limits, and the
beneath-the-root opener on a real folder tree."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from taskmem.config import Config, ConfigError, check_listen_allowed, parse_api_key
from taskmem.core.errors import ResourceExhausted, StaleEtag
from taskmem.core.tasks import MetadataChange
from taskmem.core.working_memory import WorkingMemory, check_size, replaced
from taskmem.waits.file_access import FileRoots, Missing, Refused, WaitFileRoots

SERVER_KEPT = {"active_wait_ids": ["wai_1"], "last_wait_state": "watching"}


def test_a_key_change_merges_and_keeps_the_server_keys() -> None:
    current = {"owner": "ann", "team": "infra", **SERVER_KEPT}
    change = MetadataChange(set_keys={"owner": "bob"}, removed_keys=frozenset({"team"}))
    assert change.apply(current) == {"owner": "bob", **SERVER_KEPT}


def test_a_replacement_drops_client_keys_but_never_server_keys() -> None:
    current = {"owner": "ann", **SERVER_KEPT}
    change = MetadataChange(replacement={"stage": 2, "active_wait_ids": [], "last_wait_state": "forged"})
    assert change.apply(current) == {"stage": 2, **SERVER_KEPT}


@pytest.mark.parametrize(("listen", "keys", "tls", "insecure", "refused"), [
    ("127.0.0.1:1", False, False, False, False),
    ("[::1]:1", True, False, False, False),
    ("0.0.0.0:1", False, False, False, True),
    ("0.0.0.0:1", True, False, False, True),
    ("0.0.0.0:1", True, True, False, False),
    ("0.0.0.0:1", True, False, True, False),
])
def test_a_listen_address_beyond_loopback_needs_keys_and_tls_or_insecure(
        listen: str, keys: bool, tls: bool, insecure: bool, refused: bool) -> None:
    config = Config(api_keys=(parse_api_key("k"),) if keys else (), insecure=insecure)
    if refused:
        with pytest.raises(ConfigError):
            check_listen_allowed(config, listen, tls=tls)
    else:
        check_listen_allowed(config, listen, tls=tls)


def test_working_memory_limits_name_their_setting() -> None:
    with pytest.raises(ResourceExhausted) as too_big:
        check_size(WorkingMemory("a", current_plan="x" * 500), 300)
    assert too_big.value.metadata["limit"] == "working_memory_max_bytes"
    with pytest.raises(ResourceExhausted) as crowded:
        replaced(None, WorkingMemory("new"), "", 1, agents=3, max_agents=3)
    assert crowded.value.metadata["limit"] == "working_memory_max_agents"
    known = replaced(None, WorkingMemory("a"), "", 1, agents=0, max_agents=3)
    assert replaced(known, WorkingMemory("a"), known.etag, 2, agents=0, max_agents=3).revision == 2
    with pytest.raises(StaleEtag):
        replaced(known, WorkingMemory("a"), 'W/"7"', 2, agents=0, max_agents=3)


def test_the_opener_reads_below_its_root_and_refuses_links_hard_links_and_the_database(tmp_path: Path) -> None:
    root, outside, data = tmp_path / "root", tmp_path / "outside", tmp_path / "root" / "data"
    for folder in (root, outside, data, root / "ws"):
        folder.mkdir()
    (outside / "secret").write_text("secret")
    (root / "ws" / "plain").write_text("plain")
    (data / "taskmem.db").write_text("db")
    os.symlink(outside, root / "ws" / "linked-folder")
    os.symlink(outside / "secret", root / "ws" / "linked-file")
    os.link(outside / "secret", root / "ws" / "hard")
    roots = FileRoots.build([str(root)], str(data / "taskmem.db"))
    assert roots.read(str(root / "ws" / "plain"), 100) == b"plain"
    assert roots.read(str(root / "ws"), 100) is None  # a folder exists, holds no text
    for name in ("linked-folder/secret", "linked-file", "hard"):
        with pytest.raises(Refused):
            roots.read(str(root / "ws" / name), 100)
    with pytest.raises(Refused, match="database folder"):
        roots.read(str(data / "taskmem.db"), 100)
    with pytest.raises(Missing):
        roots.read(str(root / "ws" / "absent" / "file"), 100)
    with pytest.raises(Refused, match="not below"):
        roots.read(str(outside / "secret"), 100)


def test_wait_file_roots_give_each_namespace_its_own_folders(tmp_path: Path) -> None:
    roots = WaitFileRoots.parse([str(tmp_path / "shared"), f"alpha={tmp_path / 'alpha'}"], str(tmp_path / "db"))
    assert roots.of("alpha").roots == (str(tmp_path / "alpha"), str(tmp_path / "shared" / "alpha"))
    assert roots.of("beta").roots == (str(tmp_path / "shared" / "beta"),)
    assert roots.of("..").roots == ()  # a namespace that is no folder name gets no shared folder


def test_a_look_outside_the_namespaces_roots_is_refused_naming_the_namespace(tmp_path: Path) -> None:
    (tmp_path / "shared" / "beta").mkdir(parents=True)
    (tmp_path / "shared" / "beta" / "creds.txt").write_text("token")
    roots = WaitFileRoots.parse([str(tmp_path / "shared")], str(tmp_path / "db" / "taskmem.db"))
    assert roots.of("beta").read(str(tmp_path / "shared" / "beta" / "creds.txt"), 100) == b"token"
    with pytest.raises(Refused, match="namespace 'alpha'"):
        roots.of("alpha").read(str(tmp_path / "shared" / "beta" / "creds.txt"), 100)


def test_a_namespace_root_without_a_path_is_a_configuration_error() -> None:
    with pytest.raises(ConfigError, match="wait_file_roots"):
        WaitFileRoots.parse(["alpha="], "taskmem.db")


def test_a_door_that_checks_no_key_needs_insecure_off_loopback_whatever_the_keys() -> None:
    keyed = Config(api_keys=(parse_api_key("k"),))
    with pytest.raises(ConfigError, match="metrics_listen: 0.0.0.0:9464 is not a loopback address"):
        check_listen_allowed(keyed, "0.0.0.0:9464", tls=True, setting="metrics_listen", authenticated=False)
    check_listen_allowed(Config(insecure=True), "0.0.0.0:9464", tls=False, authenticated=False)
    check_listen_allowed(keyed, "127.0.0.2:9464", tls=False, authenticated=False)
