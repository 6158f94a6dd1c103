"""A real Cairn ASGI app (Django + MCP) served by uvicorn on 127.0.0.1, and an MCP client.

The server runs in a thread of the test process, so it uses the test database pytest-django set
up. Its requests run in other threads: tests use `transactional_db` (and `db` is overridden with
it) so that what a test writes is committed and visible to the server (and what the server
writes, to the test). owner, acme and the token fixtures come from tests/conftest.py.
"""

from __future__ import annotations

import socket
import threading
import time
from contextlib import asynccontextmanager

import anyio
import httpx2
import pytest
import uvicorn
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def broker():
    """The embedded broker, as in production: every write queues its background tasks."""
    from django.conf import settings

    from memory_site import embedded

    proc = embedded.start_broker() if settings.CELERY_EMBEDDED_BROKER else None
    yield
    if proc is not None:
        embedded.stop_broker()


@pytest.fixture(scope="session")
def live_server_url(django_db_setup, django_db_blocker, broker):
    from django.test import override_settings

    from memory_site.asgi import application

    port = _free_port()
    # The server's own address, as a deployment sets CAIRN_SITE_URL: MCP authorization names
    # it as the resource and the issuer.
    site = override_settings(SITE_URL=f"http://127.0.0.1:{port}")
    site.enable()
    server = uvicorn.Server(
        uvicorn.Config(application, host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, name="uvicorn-test", daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test MCP server did not start")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)
    site.disable()


@pytest.fixture
def mcp_url(live_server_url):
    return f"{live_server_url}/mcp"


@pytest.fixture
def db(transactional_db):
    """`db` commits here: what a test writes (through the shared fixtures too: owner, acme,
    tokens) must be visible to the server's threads."""


@asynccontextmanager
async def mcp_session(url: str, token: str | None, headers: dict | None = None):
    all_headers = {**({"Authorization": f"Bearer {token}"} if token else {}), **(headers or {})}
    async with (
        httpx2.AsyncClient(headers=all_headers, timeout=30) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


@pytest.fixture
def call(mcp_url, token):
    """call(tool, **args) → CallToolResult, over a fresh MCP session with the write token."""

    def _call(tool: str, _token: str | None = None, **args):
        async def go():
            async with mcp_session(mcp_url, _token or token) as session:
                return await session.call_tool(tool, args)

        return anyio.run(go)

    return _call


def text(result) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "text", None))
