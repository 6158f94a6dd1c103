"""Browser tests drive the system Chromium through Playwright (its own download is not
reachable everywhere): `make test` installs Debian's `chromium` when it is missing, and
CAIRN_CHROMIUM names another binary. A missing browser fails the browser tests, never skips."""

from __future__ import annotations

import os
import shutil

import pytest

# Playwright's sync API runs an event loop in the test thread; the test's own ORM calls
# (fixtures, checks) are still plain synchronous code.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str:
    for candidate in (os.environ.get("CAIRN_CHROMIUM"), "chromium", "chromium-browser"):
        found = candidate and shutil.which(candidate)
        if found:
            return found
    pytest.fail(
        "The browser tests need Chromium and found none. On Debian/Ubuntu run "
        "`apt-get install chromium` (make test does it when run as root); elsewhere run "
        "`.venv/bin/python -m playwright install chromium` and set CAIRN_CHROMIUM to the "
        "binary it prints, or point CAIRN_CHROMIUM at any Chromium or Chrome.",
        pytrace=False,
    )


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    return {
        **browser_type_launch_args,
        "executable_path": chromium_path(),
        "args": CHROMIUM_FLAGS,
    }


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    """The browser tests run last. Playwright's sync API keeps an asyncio loop running in the
    main thread from its session-scoped start until the session ends, and tests that call
    anyio.run / asyncio.run (the MCP client) fail inside a running loop. pytest-django sorts
    transactional tests (these use live_server) in among them; this puts ours at the end."""
    # Every test that drives the browser (asks for Playwright's `page`), wherever it lives.
    browser = [item for item in items if "page" in getattr(item, "fixturenames", ())]
    if browser:
        others = [item for item in items if item not in browser]
        items[:] = others + browser
