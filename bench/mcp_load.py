"""MCP load: upsert and search round trips through the official MCP client, 1 and 8 clients.

    .venv/bin/python bench/mcp_load.py [--data ../shared/bench-data/locomo-dev.json]
                                       [--searches 200] [--workers 1]

Starts what it measures: the embedded PostgreSQL and broker (when not running), a fresh
`cairn_bench` database on that server (migrated; the dev database is not touched), a user with a
token, and uvicorn serving memory_site.asgi. Ingests the LoCoMo conversations one entry per
session (each concurrency level into its own projects, so every upsert is a real write), then
searches with the questions. Prints a table and writes JSON to bench/results/.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import anyio
import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from tqdm import tqdm

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
PY = sys.executable
BENCH_DB = "cairn_bench"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def prepare_database() -> dict[str, str]:
    """A fresh, migrated cairn_bench database on the embedded server; returns the env to use."""
    import psycopg

    from memory_site import embedded

    cfg = embedded.ensure_postgres()
    if not os.environ.get("CELERY_BROKER_URL"):
        embedded.start_broker()
    admin = f"host={cfg['HOST']} port={cfg['PORT']} user={cfg['USER']} dbname=postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{BENCH_DB}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{BENCH_DB}"')
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{cfg['USER']}@:{cfg['PORT']}/{BENCH_DB}?host={cfg['HOST']}",
        "LOG_LEVEL": "WARNING",
        # DATABASE_URL means team mode, which needs a real key: one per run.
        "DJANGO_SECRET_KEY": os.environ.get("DJANGO_SECRET_KEY") or secrets.token_urlsafe(50),
        "DJANGO_SUPERUSER_PASSWORD": "bench-password-not-secret",
    }
    manage = [PY, str(ROOT / "manage.py")]
    subprocess.run([*manage, "migrate", "-v0"], env=env, check=True, cwd=ROOT)
    subprocess.run(
        [*manage, "createsuperuser", "--noinput", "--username", "bench", "--email", "b@x.invalid"],
        env=env,
        check=True,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
    )
    secret = subprocess.run(
        [*manage, "create_token", "bench", "--name", "bench", "--agent", "agent:bench"],
        env=env,
        check=True,
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout.strip()
    env["CAIRN_BENCH_TOKEN"] = secret
    return env


def _stop_what_we_started() -> None:
    """Leave the machine as we found it: stop the embedded servers this run started."""
    from memory_site import embedded

    if "broker" in embedded.started_here:
        embedded.stop_broker()
    if "postgres" in embedded.started_here:
        embedded.stop_postgres()


def start_server(env: dict[str, str], workers: int) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    proc = subprocess.Popen(
        [
            PY,
            "-m",
            "uvicorn",
            "memory_site.asgi:application",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "warning",
            "--workers",
            str(workers),
        ],
        env=env,
        cwd=ROOT,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start; run it by hand to see why") from None
            time.sleep(0.2)
    return proc, f"http://127.0.0.1:{port}/mcp"


def load_sessions(path: Path) -> tuple[list[dict], list[dict]]:
    data = json.loads(path.read_text())
    sessions, questions = [], []
    for sample in data:
        conv = sample["conversation"]
        n = 1
        while f"session_{n}" in conv:
            lines = []
            for turn in conv[f"session_{n}"]:
                text = turn["text"]
                if turn.get("blip_caption"):
                    text += f" [image: {turn['blip_caption']}]"
                lines.append(f"{turn['speaker']}: {text}")
            sessions.append(
                {
                    "conv": sample["sample_id"],
                    "title": f"Session {n} ({conv.get(f'session_{n}_date_time', '')})",
                    "body": "\n".join(lines),
                }
            )
            n += 1
        questions += [
            {"conv": sample["sample_id"], "q": q["question"]}
            for q in sample["qa"]
            if q.get("category") != 5
        ]
    return sessions, questions


def group_cpu_seconds(pgid: int) -> float:
    """User + system CPU of every process in the server's process group (Linux /proc)."""
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:  # field 5 of stat: the process group
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / os.sysconf("SC_CLK_TCK")


class Client:
    def __init__(self, url: str, token: str):
        self.url, self.token = url, token

    async def __aenter__(self):
        self._http = httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {self.token}"}, timeout=60
        )
        self._stream = streamable_http_client(self.url, http_client=self._http)
        read, write = await self._stream.__aenter__()
        self._session = ClientSession(read, write)
        await self._session.__aenter__()
        await self._session.initialize()
        return self

    async def __aexit__(self, *exc):
        await self._session.__aexit__(*exc)
        await self._stream.__aexit__(*exc)
        await self._http.aclose()

    async def call(self, tool: str, args: dict) -> float:
        start = time.perf_counter()
        result = await self._session.call_tool(tool, args)
        elapsed = time.perf_counter() - start
        if result.is_error:
            raise RuntimeError(f"{tool} failed: {result.content[0].text}")
        return elapsed


SERVER_PGID = 0


async def run_phase(url, token, clients: int, jobs: list[tuple[str, dict]], label: str):
    """Run the jobs spread over `clients` concurrent MCP sessions; latencies in seconds."""
    latencies: list[float] = []
    queue = list(reversed(jobs))
    bar = tqdm(total=len(jobs), desc=label, leave=False)

    async def worker():
        async with Client(url, token) as client:
            while queue:
                tool, args = queue.pop()
                latencies.append(await client.call(tool, args))
                bar.update()

    cpu = group_cpu_seconds(SERVER_PGID)
    start = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for _ in range(clients):
            tg.start_soon(worker)
    wall = time.perf_counter() - start
    bar.close()
    server_cpu_ms = (group_cpu_seconds(SERVER_PGID) - cpu) * 1000 / max(1, len(latencies))
    return latencies, wall, server_cpu_ms


def summarize(name: str, clients: int, latencies: list[float], wall: float, cpu=None) -> dict:
    ms = sorted(x * 1000 for x in latencies)
    return {
        "server_cpu_ms_per_call": None if cpu is None else round(cpu, 1),
        "operation": name,
        "clients": clients,
        "calls": len(ms),
        "p50_ms": round(statistics.median(ms), 1),
        "p95_ms": round(ms[max(0, int(len(ms) * 0.95) - 1)], 1),
        "per_second": round(len(ms) / wall, 1),
    }


async def bench(url: str, token: str, sessions, questions, searches: int) -> list[dict]:
    rows = []
    convs = sorted({s["conv"] for s in sessions})
    async with Client(url, token) as admin:
        for level in (1, 8):
            for conv in convs:
                await admin.call("create_project", {"slug": f"c{level}-{conv}"})
    for level in (1, 8):
        jobs = [
            (
                "upsert",
                {
                    "project": f"c{level}-{s['conv']}",
                    "title": s["title"],
                    "body": s["body"],
                    "subtopic": "sessions",
                    "kind": "session",
                },
            )
            for s in sessions
        ]
        lat, wall, cpu = await run_phase(url, token, level, jobs, f"upsert x{level}")
        rows.append(summarize("upsert", level, lat, wall, cpu))
    picked = questions[:: max(1, len(questions) // searches)][:searches]
    for level in (1, 8):
        jobs = [
            ("search", {"query": q["q"], "project": f"c1-{q['conv']}", "limit": 10}) for q in picked
        ]
        lat, wall, cpu = await run_phase(url, token, level, jobs, f"search x{level}")
        rows.append(summarize("search", level, lat, wall, cpu))
    return rows


def direct(sessions, questions, searches: int) -> list[dict]:
    """The same writes and searches through the services in-process (no HTTP, no MCP): the floor
    the MCP numbers are compared with. Runs in a child process on the bench database."""
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_site.settings")
    django.setup()
    from django.contrib.auth import get_user_model

    from knowledge.actors import Actor
    from knowledge.search_adapter import search
    from knowledge.services import entry_upsert, project_create

    actor = Actor.for_user(get_user_model().objects.get(username="bench"), agent="agent:bench")
    for conv in sorted({s["conv"] for s in sessions}):
        project_create(actor=actor, slug=f"d-{conv}")
    lat = []
    start = time.perf_counter()
    for s in sessions:
        t = time.perf_counter()
        entry_upsert(
            actor=actor,
            project=f"d-{s['conv']}",
            title=s["title"],
            body=s["body"],
            subtopic="sessions",
            kind="session",
        )
        lat.append(time.perf_counter() - t)
    rows = [summarize("upsert (services, no MCP)", 1, lat, time.perf_counter() - start)]
    picked = questions[:: max(1, len(questions) // searches)][:searches]
    lat = []
    start = time.perf_counter()
    for q in picked:
        t = time.perf_counter()
        search(actor, q["q"], project=f"d-{q['conv']}", limit=10)
        lat.append(time.perf_counter() - t)
    rows.append(summarize("search (services, no MCP)", 1, lat, time.perf_counter() - start))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=str(ROOT.parent / "shared/bench-data/locomo-dev.json"))
    parser.add_argument("--searches", type=int, default=200)
    parser.add_argument("--workers", type=int, default=1, help="uvicorn worker processes")
    parser.add_argument("--direct", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    sessions, questions = load_sessions(Path(args.data))
    if args.direct:  # child mode: print the in-process rows as JSON
        print(json.dumps(direct(sessions, questions, args.searches)))
        return
    print(f"Preparing a fresh {BENCH_DB} database and the server …", file=sys.stderr)
    env = prepare_database()
    proc, url = start_server(env, args.workers)
    global SERVER_PGID
    SERVER_PGID = proc.pid  # started with start_new_session: its own process group
    load_before = os.getloadavg()
    try:
        rows = anyio.run(bench, url, env["CAIRN_BENCH_TOKEN"], sessions, questions, args.searches)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=20)
    child = subprocess.run(
        [PY, __file__, "--direct", "--data", args.data, "--searches", str(args.searches)],
        env=env,
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    rows += json.loads(child.stdout.strip().splitlines()[-1])
    load_after = os.getloadavg()
    _stop_what_we_started()
    header = (
        f"{'operation':<27}{'clients':>8}{'calls':>7}{'p50 ms':>9}{'p95 ms':>9}{'per s':>8}"
        f"{'web CPU ms/call':>17}"
    )
    print(header)
    for r in rows:
        print(
            f"{r['operation']:<27}{r['clients']:>8}{r['calls']:>7}{r['p50_ms']:>9}"
            f"{r['p95_ms']:>9}{r['per_second']:>8}{r['server_cpu_ms_per_call'] or '-':>17}"
        )
    out = ROOT / "bench/results"
    out.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    target = out / f"mcp_load-{stamp}.json"
    target.write_text(
        json.dumps(
            {
                "benchmark": "mcp_load",
                "when": stamp,
                "machine": {
                    "cpus": os.cpu_count(),
                    "python": platform.python_version(),
                    "loadavg_1m_before": round(load_before[0], 2),
                    "loadavg_1m_after": round(load_after[0], 2),
                },
                "server": {
                    "uvicorn_workers": args.workers,
                    "transport": "streamable-http, stateless, json",
                },
                "corpus": {
                    "sessions": len(sessions),
                    "questions_searched": min(args.searches, len(questions)),
                },
                "results": rows,
            },
            indent=2,
        )
    )
    print(
        f"Load average (1 min) before/after: {load_before[0]:.1f} / {load_after[0]:.1f} "
        f"on {os.cpu_count()} CPUs"
    )
    print(f"Wrote {target.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
