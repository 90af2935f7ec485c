"""A real server with the web view and two API keys, and headless Chromium driven by Playwright.

Chromium is Debian's `chromium` package (`make test` installs it when missing); Playwright's own
browser download is not used. Without the browser these tests skip, unless TASKMEM_REQUIRE_BROWSER
is set (as `make test` does), when they fail.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from tests.support.server_process import ServerProcess
from tests.support.eventually import HANG_GUARD_SECONDS

KEY_A, KEY_B = "key-team-a", "key-team-b"
WEB_PREFIX = "taskmem: web view on "


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path_factory.mktemp("web") / "taskmem.db", "--http", "127.0.0.1:0",
                            "--api-key", f"{KEY_A}:team-a", "--api-key", f"{KEY_B}:team-b",
                            "--embedding-backend", "none")
    process.start()
    yield process
    process.stop()


@pytest.fixture(scope="module")
def web_url(web_server: ServerProcess) -> str:
    line = next(line for line in web_server.output if line.startswith(WEB_PREFIX))
    return line[len(WEB_PREFIX):].strip()


@pytest.fixture(scope="module")
def channel(web_server: ServerProcess) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(web_server.address) as opened:
        yield opened


# Module scope: Playwright's sync API runs its own event loop while it is open, which the
# pytest-asyncio tests of other modules must not find running.
@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    path = chromium_path()
    if path is None:
        message = "no chromium on PATH (Debian: apt-get install chromium; `make test` does it)"
        if os.environ.get("TASKMEM_REQUIRE_BROWSER"):
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=path, args=["--no-sandbox", "--disable-gpu"])
        yield launched
        launched.close()


@pytest.fixture
def page(browser: object) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})  # type: ignore[attr-defined]
    opened = context.new_page()
    opened.set_default_timeout(HANG_GUARD_SECONDS * 1000)  # every wait, navigation included: a hang guard
    yield opened
    context.close()


@pytest.fixture(scope="session")
def screenshots() -> Path:
    """Where each page's screenshot goes: TASKMEM_SCREENSHOT_DIR, or build/screenshots in the project."""
    directory = Path(os.environ.get("TASKMEM_SCREENSHOT_DIR") or Path(__file__).parents[2] / "build" / "screenshots")
    directory.mkdir(parents=True, exist_ok=True)
    return directory
