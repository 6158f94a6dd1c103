"""The servers of bench/mcp_load.py (and the benches that reuse them: agents_mix, graph,
reliability, write_probe): a fresh, migrated `cairn_bench` database on the embedded
PostgreSQL with a user and token, uvicorn serving a checkout, the CPU a server's process group
spent, the settings of the A/B run's 'before' server, and stopping the embedded servers a run
started. Cairn is imported inside the functions, so this module imports before Django is set up."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench._common import free_port, wait_for_port  # noqa: E402

PY = sys.executable
BENCH_DB = "cairn_bench"


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


def stop_what_we_started() -> None:
    """Leave the machine as we found it: stop the embedded servers this run started."""
    from memory_site import embedded

    if "broker" in embedded.started_here:
        # The server queued embedding and mirror tasks for cairn_bench that no worker ran; left
        # in the broker's append-only file, the next worker (a test's) would churn through them.
        from memory_site.celery import app

        app.control.purge()
        embedded.stop_broker()
    if "postgres" in embedded.started_here:
        embedded.stop_postgres()


def start_server(
    env: dict[str, str], workers: int, root: Path = ROOT
) -> tuple[subprocess.Popen, str]:
    """uvicorn serving the checkout at `root` (this one, or --baseline's)."""
    port = free_port()
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
        cwd=root,
        start_new_session=True,
    )
    wait_for_port(proc, port, timeout=60, what="uvicorn (run it by hand to see why)")
    return proc, f"http://127.0.0.1:{port}/mcp"


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


BEFORE = {  # the search path as it was: every speed-up of this branch switched off
    "CAIRN_SEARCH_EMBED_AHEAD": "false",
    "CAIRN_SEARCH_QUERY_CACHE_BYTES": "0",
    "CAIRN_TOKEN_CACHE_SECONDS": "0",
    "CAIRN_SEARCH_SNIPPETS": "headline",
    "CAIRN_SEARCH_FUSION": "rrf",
    "CAIRN_SEARCH_SEMANTIC_WEIGHT": "0.3",
}
