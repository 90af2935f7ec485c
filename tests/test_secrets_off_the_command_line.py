"""Secrets need not be on a command line, where `ps` shows them (issue 27, point 7): the server takes its keys
from a file (--api-keys-file, TASKMEM_API_KEYS_FILE, any TASKMEM_<SETTING>_FILE) or the environment, and the
client commands their token from TASKMEM_TOKEN or --token-file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import grpc
import pytest

from taskmem.config import ConfigError, load_config
from taskmem.v1 import task_service_pb2 as pb
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from tests.support.server_process import ServerProcess


def test_a_setting_file_named_in_the_environment_holds_its_value(tmp_path: Path) -> None:
    keys, admin, llm = tmp_path / "keys", tmp_path / "admin", tmp_path / "llm"
    keys.write_text("# one key a line\nalpha-key:alpha,beta\n\nbeta-key\n")
    admin.write_text("alpha-key\n")
    llm.write_text("sk-model-key\n")
    config = load_config(environ={"TASKMEM_API_KEYS_FILE": str(keys), "TASKMEM_ADMIN_KEYS_FILE": str(admin),
                                  "TASKMEM_LLM_API_KEY_FILE": str(llm)})
    assert [(key.key, key.namespaces) for key in config.api_keys] == [
        ("alpha-key", ("alpha", "beta")), ("beta-key", ("default",))]
    assert config.admin_keys == ("alpha-key",) and config.llm_api_key == "sk-model-key"


def test_a_setting_and_its_file_together_are_refused(tmp_path: Path) -> None:
    (tmp_path / "keys").write_text("k\n")
    with pytest.raises(ConfigError, match="api_keys: set either TASKMEM_API_KEYS or TASKMEM_API_KEYS_FILE"):
        load_config(environ={"TASKMEM_API_KEYS": "k", "TASKMEM_API_KEYS_FILE": str(tmp_path / "keys")})
    with pytest.raises(ConfigError, match="llm_api_key: cannot read"):
        load_config(environ={"TASKMEM_LLM_API_KEY_FILE": str(tmp_path / "absent")})


async def test_a_server_keyed_from_a_file_shows_no_key_in_its_command_line(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    keys.write_text("file-key-27:alpha\n")
    server = ServerProcess(tmp_path / "taskmem.db", "--api-keys-file", str(keys))
    server.start()
    try:
        assert server.process is not None
        assert b"file-key-27" not in Path(f"/proc/{server.process.pid}/cmdline").read_bytes()
        async with grpc.aio.insecure_channel(server.address) as channel:
            created = await TaskServiceStub(channel).CreateTask(
                pb.CreateTaskRequest(name="keyed by file"), metadata=[("authorization", "Bearer file-key-27")])
        assert created.task.namespace == "alpha"
        token_file = tmp_path / "token"
        token_file.write_text("file-key-27\n")
        for how, env in ((["--token-file", str(token_file)], {}), ([], {"TASKMEM_TOKEN": "file-key-27"})):
            listed = subprocess.run([sys.executable, "-m", "taskmem", "tasks", "list", "--address", server.address,
                                     *how], capture_output=True, text=True, timeout=60, env={**os.environ, **env})
            assert listed.returncode == 0, listed.stderr
            assert "keyed by file" in listed.stdout
    finally:
        server.stop()


def test_help_says_where_else_secrets_can_come_from() -> None:
    serve = subprocess.run([sys.executable, "-m", "taskmem", "serve", "--help"], capture_output=True, text=True,
                           timeout=60).stdout
    assert "--api-keys-file" in serve and "TASKMEM_API_KEYS" in serve and "_FILE" in serve
    listing = subprocess.run([sys.executable, "-m", "taskmem", "tasks", "list", "--help"], capture_output=True,
                             text=True, timeout=60).stdout
    assert "TASKMEM_TOKEN" in listing and "--token-file" in listing
    mcp = subprocess.run([sys.executable, "-m", "taskmem", "mcp", "--help"], capture_output=True, text=True,
                         timeout=60).stdout
    assert "TASKMEM_TOKEN" in mcp and "--token-file" in mcp
