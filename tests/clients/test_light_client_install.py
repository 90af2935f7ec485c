"""`pip install clients/python` into a fresh virtualenv brings the stubs and the client, and none of
the server's heavy dependencies; the client's example then runs from that venv against a server."""

from __future__ import annotations

import shutil
import subprocess
import venv
from pathlib import Path

from tests.support.server_process import ServerProcess

CLIENT = Path(__file__).resolve().parents[2] / "clients" / "python"
# What the server needs and an agent author should not get with the client.
SERVER_ONLY = {"taskmem", "onnxruntime", "numpy", "tokenizers", "tiktoken", "sqlite-vec", "sqlean-py", "mcp"}


def test_the_light_client_installs_alone_without_the_server_dependencies(tmp_path: Path,
                                                                        fresh_server: ServerProcess) -> None:
    environment = tmp_path / "venv"
    venv.create(environment, with_pip=True)
    python = environment / "bin" / "python"
    # A copy, so the build leaves nothing in the source tree; pip may use its wheel cache.
    source = shutil.copytree(CLIENT, tmp_path / "client", ignore=shutil.ignore_patterns(
        "__pycache__", "*.egg-info", "build"))
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(source)],
                   check=True, timeout=600)

    listed = subprocess.run([python, "-m", "pip", "list", "--format=freeze", "--disable-pip-version-check"],
                            check=True, capture_output=True, text=True).stdout
    installed = {line.split("==")[0].lower().replace("_", "-").replace(".", "-") for line in listed.split()}
    assert "taskmem-client" in installed and "grpcio" in installed and "protobuf" in installed
    assert not installed & {name.replace(".", "-") for name in SERVER_ONLY}, installed

    address = fresh_server.start()
    ran = subprocess.run([python, str(source / "examples" / "agent.py"), "--address", address],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.rstrip().endswith("agent: done")
    server_import = subprocess.run([python, "-c", "import taskmem.server"], capture_output=True, text=True)
    assert server_import.returncode != 0 and "No module named 'taskmem.server'" in server_import.stderr
