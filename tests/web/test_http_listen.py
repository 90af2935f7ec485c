"""Where the web view may listen, and that it is off by default."""

from __future__ import annotations

import json
import ssl
import urllib.request
from pathlib import Path

import pytest

from taskmem.config import ApiKey, Config, ConfigError, load_config
from taskmem.web.listener import check_http_bind_allowed
from tests.support.certificates import needs_openssl, self_signed_localhost
from tests.support.server_process import ServerProcess
from tests.web.conftest import WEB_PREFIX
from tests.support.eventually import HANG_GUARD_SECONDS

KEYS = (ApiKey("k", ("default",)),)


def test_the_web_view_is_off_by_default_and_set_by_flag_file_or_environment(tmp_path: Path) -> None:
    assert load_config(environ={}).http_listen == ""
    assert load_config(environ={"TASKMEM_HTTP_LISTEN": "127.0.0.1:8080"}).http_listen == "127.0.0.1:8080"
    file = tmp_path / "taskmem.yaml"
    file.write_text("http_listen: 127.0.0.1:9090\n")
    assert load_config(file=str(file), environ={}).http_listen == "127.0.0.1:9090"


@pytest.mark.parametrize("listen", ["127.0.0.1:8080", "localhost:0", "[::1]:8080"])
def test_loopback_is_always_allowed(listen: str) -> None:
    check_http_bind_allowed(Config(http_listen=listen))


@pytest.mark.parametrize(("config", "named"), [
    (Config(http_listen="0.0.0.0:8080"), "no api_keys"),
    (Config(http_listen="0.0.0.0:8080", api_keys=KEYS), "has no TLS"),
])
def test_off_loopback_needs_keys_and_tls(config: Config, named: str) -> None:
    with pytest.raises(ConfigError, match=named):
        check_http_bind_allowed(config)


@pytest.mark.parametrize("config", [
    Config(http_listen="0.0.0.0:8080", insecure=True),
    Config(http_listen="0.0.0.0:8080", api_keys=KEYS, tls_cert_file="c.pem", tls_key_file="k.pem"),
])
def test_off_loopback_is_allowed_with_keys_and_tls_or_insecure(config: Config) -> None:
    check_http_bind_allowed(config)


def test_serve_refuses_a_non_loopback_web_view_without_tls(fresh_server: ServerProcess) -> None:
    fresh_server.extra_args = ("--api-key", "k", "--http", "0.0.0.0:0")
    with pytest.raises(RuntimeError, match="http_listen: 0.0.0.0:0 is not a loopback address"):
        fresh_server.start()


@needs_openssl
def test_with_tls_configured_the_web_view_serves_https_and_its_calls_still_work(tmp_path: Path) -> None:
    cert, key = self_signed_localhost(tmp_path)
    server = ServerProcess(tmp_path / "t.db", "--tls-cert-file", str(cert), "--tls-key-file", str(key),
                           "--api-key", "k", "--http", "127.0.0.1:0", "--embedding-backend", "none")
    server.start()
    try:
        url = next(line for line in server.output if line.startswith(WEB_PREFIX))[len(WEB_PREFIX):].strip()
        assert url.startswith("https://127.0.0.1:")
        request = urllib.request.Request(f"{url}api/call/TaskService/ListTasks", data=b"{}", method="POST",
                                         headers={"x-taskmem-web": "1", "authorization": "Bearer k"})
        with urllib.request.urlopen(request, context=ssl.create_default_context(cafile=str(cert)), timeout=HANG_GUARD_SECONDS) as reply:
            assert json.loads(reply.read()) == {"tasks": [], "next_page_token": ""}
    finally:
        server.stop()
