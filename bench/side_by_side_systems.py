"""The systems of bench/side_by_side.py: Cairn served by `manage.py serve` on its own var
directory with a streamable-HTTP MCP client, and Basic Memory (the released package, installed
into its own virtual environment under var/bench/) with its stdio MCP client. Both clients
answer create_project / write / search alike, so the sitting asks them in turn."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from contextlib import AsyncExitStack
from pathlib import Path

import httpx2
import psutil
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench._common import free_port  # noqa: E402

BM_VERSION = "0.24.1"
WORK = ROOT / "var" / "bench" / "side_by_side"


def bm_python(python: str) -> Path:
    """Basic Memory's own virtual environment, created (once) by this bench."""
    venv = ROOT / "var" / "bench" / f"basic-memory-{BM_VERSION}"
    exe = venv / "bin" / "basic-memory"
    if not exe.exists():
        print(f"Installing basic-memory=={BM_VERSION} into {venv} …", file=sys.stderr)
        subprocess.run([python, "-m", "venv", "--clear", str(venv)], check=True)
        subprocess.run(
            [venv / "bin" / "python", "-m", "pip", "install", "-q", f"basic-memory=={BM_VERSION}"],
            check=True,
        )
    return exe


class Cairn:
    """`manage.py serve` of one checkout on its own var directory, with an admin's token."""

    def __init__(self, label: str, root: Path, web_workers: int | None, worker: bool) -> None:
        self.label, self.root = label, root
        self.var = WORK / re.sub(r"\W+", "-", label.lower()).strip("-")
        shutil.rmtree(self.var, ignore_errors=True)
        self.var.mkdir(parents=True)
        self.port = free_port()
        self.env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE")
        }
        self.env.update(CAIRN_VAR_DIR=str(self.var), LOG_LEVEL="WARNING")
        self.profile = self.var / "search-profile.jsonl"
        self.env["CAIRN_SEARCH_PROFILE"] = str(self.profile)
        args = ["--web-workers", str(web_workers)] if web_workers else []
        if not worker:  # the bench embeds with the passage cache instead (embed())
            args.append("--no-worker")
        self.log = open(self.var / "serve.log", "w")  # noqa: SIM115 (closed in stop())
        self.proc = subprocess.Popen(
            [sys.executable, "manage.py", "serve", "--migrate", "--port", str(self.port), *args],
            cwd=root,
            env=self.env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.url = f"http://127.0.0.1:{self.port}/mcp"

    def wait_ready(self, timeout: float = 300) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.label}: serve exited; see {self.var / 'serve.log'}")
            if " is running at " in (self.var / "serve.log").read_text():  # "Cairn <version> …"
                break
            time.sleep(0.5)
        else:
            raise RuntimeError(f"{self.label}: serve did not start; see {self.var / 'serve.log'}")
        self.token = subprocess.run(
            [sys.executable, "manage.py", "create_token", "admin", "--name", "bench",
             "--agent", "agent:bench"],
            cwd=self.root, env=self.env, check=True, capture_output=True, text=True,
        ).stdout.strip()  # fmt: skip
        self.profile.write_text("")

    def embed(self, data: str) -> float:
        """Embed every entry as the worker would (its code), with bench/locomo.py's passage
        cache: a re-run embeds nothing again. Returns seconds."""
        # Each checkout embeds with its own code: its database has its own migrations.
        command = [sys.executable, str(self.root / "bench" / "mcp_load.py"), "--data", data]
        out = subprocess.run(
            [*command, "--embed", "conv-"],
            cwd=self.root, env=self.env, check=True, capture_output=True, text=True,
        ).stdout  # fmt: skip
        return float(out.strip().splitlines()[-1])

    def stop(self) -> None:
        """SIGTERM to serve's process group (serve stops its children in order), SIGKILL to the
        group after 60 s. Safe to call twice."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        self.log.close()


class CairnClient:
    """One kept-alive streamable-HTTP MCP session with Cairn."""

    def __init__(self, url: str, token: str) -> None:
        self.url, self.token = url, token

    async def open(self, stack: AsyncExitStack) -> CairnClient:
        headers = {"Authorization": f"Bearer {self.token}"}
        http = await stack.enter_async_context(httpx2.AsyncClient(headers=headers, timeout=60))
        read, write = await stack.enter_async_context(
            streamable_http_client(self.url, http_client=http)
        )
        self._session = await stack.enter_async_context(ClientSession(read, write))
        await self._session.initialize()
        return self

    async def tool(self, name: str, args: dict) -> tuple[float, dict]:
        start = time.perf_counter()
        result = await self._session.call_tool(name, args)
        elapsed = time.perf_counter() - start
        if result.is_error:
            raise RuntimeError(f"Cairn {name} failed: {result.content[0].text}")
        return elapsed, result.structured_content or {}

    async def create_project(self, conv: str) -> None:
        await self.tool("create_project", {"slug": conv})

    async def write(self, conv: str, session: dict) -> float:
        args = {"project": conv, "title": session["title"], "body": session["body"]}
        return (await self.tool("upsert", {**args, "subtopic": "sessions", "kind": "session"}))[0]

    async def search(self, conv: str, query: str) -> tuple[float, list[str]]:
        elapsed, data = await self.tool("search", {"query": query, "project": conv, "limit": 10})
        return elapsed, [hit["title"] for hit in data.get("results", [])]


class BasicMemory:
    """Basic Memory's MCP server over stdio, its config and notes under `home`."""

    def __init__(self, exe: Path, home: Path) -> None:
        shutil.rmtree(home, ignore_errors=True)
        (home / "projects").mkdir(parents=True)
        self.home = home
        env = {
            **os.environ,
            "BASIC_MEMORY_CONFIG_DIR": str(home / "config"),
            "BASIC_MEMORY_HOME": str(home / "main"),
            "BASIC_MEMORY_LOG_LEVEL": "WARNING",
        }
        self.params = StdioServerParameters(
            command=str(exe), args=["mcp", "--transport", "stdio"], env=env
        )
        self.search_type: str | None = None  # its default (hybrid where vectors can run)
        self.proc: psutil.Process | None = None

    async def open(self, stack: AsyncExitStack) -> BasicMemory:
        before = {child.pid for child in psutil.Process().children()}
        log = stack.enter_context(open(self.home / "server.log", "w"))  # noqa: SIM115
        read, write = await stack.enter_async_context(stdio_client(self.params, errlog=log))
        # The server process, so that kill() can end it whatever becomes of the transport.
        self.proc = next(
            (child for child in psutil.Process().children() if child.pid not in before), None
        )
        self._session = await stack.enter_async_context(ClientSession(read, write))
        await self._session.initialize()
        return self

    def kill(self, timeout: float = 10) -> str:
        """Terminate the server's process group (stdio_client starts it in a session of its
        own), kill it after `timeout`; says what it took."""
        proc = self.proc
        if proc is None or not proc.is_running():  # is_running() also rules out a reused pid
            return "exited"
        for sig, outcome in ((signal.SIGTERM, "terminated"), (signal.SIGKILL, "killed")):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, sig)
            try:
                proc.wait(timeout)
                return outcome
            except psutil.TimeoutExpired:
                continue
        return f"still running (pid {proc.pid})"

    async def tool(self, name: str, args: dict) -> tuple[float, str]:
        start = time.perf_counter()
        result = await self._session.call_tool(name, args)
        elapsed = time.perf_counter() - start
        text = result.content[0].text if result.content else ""
        if result.is_error:
            raise RuntimeError(f"Basic Memory {name} failed: {text[:500]}")
        return elapsed, text

    async def create_project(self, conv: str) -> None:
        path = str(self.home / "projects" / conv)
        await self.tool("create_memory_project", {"project_name": conv, "project_path": path})

    async def write(self, conv: str, session: dict) -> float:
        args = {"title": session["title"], "content": session["body"], "directory": "sessions"}
        return (await self.tool("write_note", {**args, "project": conv}))[0]

    async def search(self, conv: str, query: str) -> tuple[float, list[str]]:
        args = {"query": query, "project": conv, "page_size": 10, "output_format": "json"}
        if self.search_type:
            args["search_type"] = self.search_type
        elapsed, text = await self.tool("search_notes", args)
        try:
            results = json.loads(text)["results"]
        except (ValueError, KeyError, TypeError):
            raise RuntimeError(f"Basic Memory search_notes answered: {text[:500]}") from None
        return elapsed, [r.get("title", "") for r in results]

    async def pick_search_type(self, conv: str, query: str) -> str:
        """Its default search when that works here, else full text: hybrid needs SQLite
        extension loading, which not every Python build has (then it answers an error text)."""
        try:
            await self.search(conv, query)
            return "default"
        except RuntimeError:
            self.search_type = "text"
            await self.search(conv, query)
            return "text (its default, hybrid, needs SQLite extension loading)"
