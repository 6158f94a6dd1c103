"""`manage.py serve` as a newcomer runs it: it answers, and SIGTERM leaves no process behind."""

import http.client
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import quote

import psutil
import pytest
from django.db import connection

from ops.version import VERSION

ROOT = Path(__file__).resolve().parent.parent


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _database_url() -> str:
    db = connection.settings_dict
    host = quote(db["HOST"], safe="") if db["HOST"].startswith("/") else db["HOST"]
    return f"postgres://{db['USER']}@{host}:{db['PORT'] or 5432}/{db['NAME']}"


OPS_TOKEN = "ops-token-of-the-serve-test"
# What the test run exports for its own isolation (tests/settings.py): a newcomer has none of it.
_RUN_ONLY = ("CELERY_BROKER_URL", "CAIRN_BROKER_DIR", "CAIRN_MIRROR_PATH", "CAIRN_PG_DIR",
             "CAIRN_TEST_ISOLATED", "CAIRN_TEST_VAR_DIR", "CAIRN_LIVE_VAR_DIR",
             "DJANGO_SETTINGS_MODULE")  # fmt: skip


def _newcomer_env(var_dir: Path, *, database_url: str | None) -> dict:
    """A fresh installation under var_dir; on the run's database server when given its URL
    (serve then owns no PostgreSQL), else on an embedded one of its own."""
    env = {k: v for k, v in os.environ.items() if k not in _RUN_ONLY}
    env["CAIRN_VAR_DIR"] = str(var_dir)
    env["CAIRN_METRICS_TOKEN"] = OPS_TOKEN  # /readyz shows its report to it (or to staff)
    env.pop("DATABASE_URL", None)
    env.pop("CAIRN_SITE_URL", None)
    if database_url:
        env["DATABASE_URL"] = database_url
    return env


def _processes_mentioning(marker: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        if marker in " ".join(proc.info["cmdline"] or []):
            found.append(proc)
    return found


def _left_running(marker: str, timeout: float = 15.0) -> list[psutil.Process]:
    """The processes still mentioning `marker` once they had `timeout` seconds to exit (a
    stopped child may take a moment to be gone on a loaded machine)."""
    deadline = time.monotonic() + timeout
    while (found := _processes_mentioning(marker)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return found


def _ops(url: str) -> urllib.request.Request:
    return urllib.request.Request(url, headers={"Authorization": f"Bearer {OPS_TOKEN}"})


def _check_operations(url: str, var_dir: Path) -> None:
    """Readiness sees the broker serve started; /metrics adds up the web workers' counters."""
    with urllib.request.urlopen(_ops(f"{url}/readyz")) as response:
        ready = json.load(response)
    assert ready["checks"]["database"]["status"] == "ok"
    assert ready["checks"]["broker"]["status"] == "ok"
    with pytest.raises(urllib.error.HTTPError) as refused:  # a bad token, counted
        urllib.request.urlopen(
            urllib.request.Request(f"{url}/api/v1/projects", headers={"Authorization": "Bearer x"})
        )
    assert refused.value.code == 401
    with urllib.request.urlopen(_ops(f"{url}/metrics")) as response:
        exposition = response.read().decode()
    assert 'cairn_token_auth_failures_total{surface="rest"} 1.0' in exposition
    assert (var_dir / "prometheus").is_dir()


def _healthz_times(port: int, count: int = 25) -> tuple[list[float], list[float]]:
    """(kept-alive times, new-connection times), one of each in turn: a burst of load on the
    machine falls on both lists alike."""
    kept_alive = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    kept, new = [], []
    for i in range(count + 1):
        for conn, times in ((kept_alive, kept), (None, new)):
            conn = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            started = time.perf_counter()
            conn.request("GET", "/healthz")
            conn.getresponse().read()
            if i:  # the first request of the kept-alive connection opens it
                times.append(time.perf_counter() - started)
            if conn is not kept_alive:
                conn.close()
    kept_alive.close()
    return kept, new


def _check_connections_stay_bounded(url: str, web_processes: int) -> None:
    """Each REST request runs in a thread of its own: without a pool every request in flight
    held a connection of its own (and left it open until the garbage collector found it: a busy
    process ran the database out of connections). The pool holds a web process's connections at
    CAIRN_WEB_DB_POOL_SIZE, however many requests arrive at once."""
    from django.conf import settings

    from knowledge.actors import Actor
    from knowledge.models import Membership, Role
    from knowledge.services.tokens import token_create
    from tests.factories import ProjectFactory, UserFactory

    user = UserFactory()
    Membership.objects.create(project=ProjectFactory(slug="pool"), user=user, role=Role.EDITOR)
    secret = token_create(actor=Actor.system(), user=user, name="pool").secret

    def write(i: int) -> int:
        body = json.dumps({"project": "pool", "title": f"note {i}", "body": "- [x] y\n" * 4000})
        request = urllib.request.Request(
            f"{url}/api/v1/entries", data=body.encode(), method="PUT",
            headers={"Authorization": f"Bearer {secret}", "Content-Type": "application/json"},
        )  # fmt: skip
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status

    seen, done = [], threading.Event()

    def watch() -> None:
        with connection.cursor() as cursor:
            while not done.is_set():
                cursor.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                )
                seen.append(cursor.fetchone()[0])
                time.sleep(0.02)

    with connection.cursor() as cursor:  # this test's, the worker's, earlier tests' servers'
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()")
        (before,) = cursor.fetchone()
    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        with ThreadPoolExecutor(32) as pool:
            assert set(pool.map(write, range(64))) == {201}
    finally:
        done.set()
        watcher.join()
    # Each pool had one connection open already (its min_size); the worker's two processes, its
    # main process and its beat open one each for the writes' background tasks.
    bound = before + web_processes * settings.CAIRN_WEB_DB_POOL_SIZE + 4
    assert max(seen) <= bound, f"{max(seen)} connections open at once under 32 writers"


def _check_kept_alive_requests_do_not_wait(port: int) -> None:
    """Every HTTP and MCP client keeps its connection: a request on it must not wait for the
    client's delayed ACK (Nagle on the web processes' sockets cost 44 ms against 4 ms on a new
    connection, Kludex/uvicorn#3149). A ratio in one run, so a busy machine does not decide."""
    kept, new = (statistics.median(times) for times in _healthz_times(port))
    assert kept < 3 * new, f"kept-alive p50 {kept:.4f} s, new connection {new:.4f} s"


def _check_sign_in_names_this_port(port: int) -> None:
    """On a port other than 8000 and without CAIRN_SITE_URL, the MCP sign-in metadata names the
    address serve listens on: a client refuses metadata naming another resource."""
    url = f"http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp"
    with urllib.request.urlopen(url) as response:
        metadata = json.load(response)
    assert metadata["resource"] == f"http://127.0.0.1:{port}/mcp"
    with urllib.request.urlopen(
        f"http://127.0.0.1:{port}/.well-known/oauth-authorization-server"
    ) as response:
        assert json.load(response)["issuer"].rstrip("/") == f"http://127.0.0.1:{port}"


@pytest.mark.django_db(transaction=True)
def test_serve_starts_everything_and_stops_it_on_sigterm(tmp_path):
    port = _free_port()
    env = _newcomer_env(tmp_path, database_url=_database_url())
    env |= {
        "CAIRN_WORKER_CONCURRENCY": "2",
        "CAIRN_EMBEDDING_THREADS": "1",
        "CAIRN_WEB_PROCESSES": "2",
    }
    proc = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--port", str(port)],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    lines = []
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            lines.append(line)
            if "Stop:" in line or proc.poll() is not None:
                break
        output = "".join(lines)
        # The rest is read as it comes: a full pipe would stop the server's processes mid-write.
        reader = threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True)
        reader.start()
        assert f"Cairn {VERSION} is running at http://127.0.0.1:{port}/" in output, output
        assert "Log in as admin / " in output
        assert "Web … 2 process(es)" in output
        assert "Worker … 2 process(es), embedding model with 1 thread(s) each" in output
        assert (tmp_path / "admin-password.txt").exists()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/admin/login/") as response:
            assert response.status == 200
        _check_operations(f"http://127.0.0.1:{port}", tmp_path)
        _check_sign_in_names_this_port(port)
        _check_connections_stay_bounded(f"http://127.0.0.1:{port}", web_processes=2)
        _check_kept_alive_requests_do_not_wait(port)
        assert (tmp_path / "valkey" / "valkey.sock").exists()
        children = _processes_mentioning(str(tmp_path))
        assert len(children) >= 2, "expected the broker and the worker"
        # By ancestry, not by command line: with setproctitle installed (mutmut needs it) Celery
        # renames its processes "[celeryd: …]".
        worker = [
            p
            for p in psutil.Process(proc.pid).children(recursive=True)
            if "celery" in " ".join(p.cmdline())
        ]
        assert len(worker) >= 3, "the worker and its two processes"
        _check_worker_yields_to_the_web(psutil.Process(proc.pid))
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        reader.join(timeout=10)
    rest = "".join(lines)
    assert proc.returncode == 0, rest
    assert "Stopped." in rest
    assert _left_running(str(tmp_path)) == []
    assert _left_running(f"--port {port}") == []
    assert not (tmp_path / "valkey" / "valkey.sock").exists()


def _check_worker_yields_to_the_web(serve: psutil.Process) -> None:
    """Each worker process runs at CAIRN_WORKER_NICE (10), and so does its session's scheduling
    group: Linux shares the CPU between sessions before it reads nice, so a nice worker in a
    session of its own took as much CPU as the web processes (bench/shared_log.py)."""
    children = serve.children(recursive=True)
    worker = [p for p in children if "celery" in " ".join(p.cmdline())]
    web = [p for p in children if "memory_site.webserver" in " ".join(p.cmdline())]
    assert worker and web
    for process in worker:
        assert process.nice() == 10, process.cmdline()
    for process, nice in [*((p, "10") for p in worker), *((p, "0") for p in web)]:
        autogroup = Path(f"/proc/{process.pid}/autogroup")
        if autogroup.exists():  # a kernel built with autogroups
            assert autogroup.read_text().split()[-1] == nice, (process.cmdline(), nice)


def test_serve_refuses_a_busy_port_with_a_hint(tmp_path):
    # Its own var dir and database server: a failed start stops the PostgreSQL serve owns,
    # which must not be the one this test run uses.
    env = _newcomer_env(tmp_path, database_url=_database_url())
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "manage.py", "serve", "--port", str(port)],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert result.returncode != 0
    assert "already in use" in result.stderr
    assert f"--port {port + 1}" in result.stderr


def test_serve_on_a_never_migrated_database_says_what_to_run_and_leaves_nothing_running(
    tmp_path,
):
    # A newcomer's first run: a fresh embedded PostgreSQL under var/, no migrations applied.
    env = _newcomer_env(tmp_path, database_url=None)
    result = subprocess.run(
        [sys.executable, "manage.py", "serve", "--port", str(_free_port())],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode != 0
    assert "unapplied migration" in result.stderr, result.stderr
    assert "make run" in result.stderr and "--migrate" in result.stderr
    assert "Traceback" not in result.stderr
    assert _left_running(str(tmp_path)) == []  # the PostgreSQL it started is stopped
