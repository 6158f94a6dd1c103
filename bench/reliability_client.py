"""Reliability's MCP client (bench/reliability.py and the benches built on it): one agent over
streamable HTTP, the text of a tool result, a percentile, and the project every phase writes in.
"""

from __future__ import annotations

import time
from contextlib import AsyncExitStack

import anyio
import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client


class Agent:
    def __init__(self, url: str, token: str) -> None:
        self.url, self.token = url, token

    async def __aenter__(self):
        # One exit stack, so a failure while closing one layer (a server error during an
        # outage) still closes the others and leaves no cancel scope open.
        self._stack = AsyncExitStack()
        try:
            http = await self._stack.enter_async_context(
                httpx2.AsyncClient(headers={"Authorization": f"Bearer {self.token}"}, timeout=60)
            )
            read, write = await self._stack.enter_async_context(
                streamable_http_client(self.url, http_client=http)
            )
            self.session = await self._stack.enter_async_context(ClientSession(read, write))
            await self.session.initialize()
        except BaseException:
            await self._stack.aclose()
            raise
        return self

    async def __aexit__(self, *exc):
        return await self._stack.__aexit__(*exc)

    async def call(self, tool: str, args: dict):
        start = time.perf_counter()
        result = await self.session.call_tool(tool, args)
        return result, time.perf_counter() - start


def tool_text(result) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "text", None))


def pct(values: list[float], p: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def ensure_project(url: str, token: str) -> None:
    async def go():
        async with Agent(url, token) as a:
            await a.call("create_project", {"slug": "rel", "name": "Reliability"})  # may exist

    anyio.run(go)
