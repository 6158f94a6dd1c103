"""What one operation costs at a given size, for bench/scale.py: writes through the services,
write → vectors with a real Celery worker, build_context, the memory of a web process and of
the worker, and the database's size.

The worker is `celery worker` as `serve` starts it (prefork, CAIRN_WORKER_CONCURRENCY processes,
no beat), on the bench database, with its own throw-away mirror. The web process is uvicorn
serving memory_site.asgi on the bench database, asked REST searches and gets before its memory
is read. Memory is PSS summed over a process tree (prefork children share pages; RSS summed
would count them twice), with the largest single RSS beside it.
"""

from __future__ import annotations

import logging
import os
import secrets
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil
from django.conf import settings as django_settings

from bench._common import free_port, wait_for_port

logging.getLogger("httpx").setLevel(logging.WARNING)

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
SHORT_NOTE_WORDS = 40


def _env(settings_dict: dict, mirror: Path) -> dict[str, str]:
    db = settings_dict
    return {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}@/{db['NAME']}?host={db['HOST']}&port={db['PORT']}",
        "DJANGO_SECRET_KEY": os.environ.get("DJANGO_SECRET_KEY") or secrets.token_urlsafe(50),
        "CAIRN_MIRROR_PATH": str(mirror),
        "CAIRN_MIRROR_PUSH_URL": "",
        "LOG_LEVEL": "WARNING",
    }


def memory_mb(root: psutil.Process) -> dict[str, float]:
    procs = [root, *root.children(recursive=True)]
    pss = rss = 0.0
    for proc in procs:
        try:
            info = proc.memory_full_info()
        except psutil.NoSuchProcess:
            continue
        pss += info.pss
        rss = max(rss, info.rss)
    return {"pss_mb": round(pss / 2**20, 1), "largest_rss_mb": round(rss / 2**20, 1)}


class Worker:
    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.log = open(log, "wb")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [PY, "-m", "celery", "-A", "memory_site", "worker", "--loglevel", "INFO",
             "--without-gossip", "--without-mingle", "--without-heartbeat", "--purge"],
            cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def write_to_vectors(write, writes: int, interval: float, timeout: float = 120) -> list[float]:
    """Write one entry every `interval` s; seconds from each write's commit to its vectors."""
    from knowledge.models import Entry

    committed: dict[int, float] = {}
    took: dict[int, float] = {}
    next_write = time.monotonic()
    deadline = None
    while len(took) < writes:
        now = time.monotonic()
        if len(committed) < writes and now >= next_write:
            committed[write()] = time.monotonic()  # entry_upsert is durable: committed here
            next_write += interval
            if len(committed) == writes:
                deadline = time.monotonic() + timeout
        waiting = [pk for pk in committed if pk not in took]
        if waiting:
            done = Entry.objects.filter(
                pk__in=waiting, embed_pending_since__isnull=True, embedded_hash__gt=""
            ).values_list("pk", flat=True)
            for pk in done:
                took[pk] = time.monotonic() - committed[pk]
        if deadline and time.monotonic() > deadline:
            break
        time.sleep(0.05)
    return list(took.values()) + [float("inf")] * (writes - len(took))


def web_memory(env: dict[str, str], token: str, queries: list[str], ref: str) -> dict:
    """A uvicorn process on the bench database, after REST searches and a few gets."""
    port = free_port()
    proc = subprocess.Popen(
        [PY, "-m", "uvicorn", "memory_site.asgi:application", "--port", str(port),
         "--log-level", "warning"],
        cwd=ROOT, env=env, start_new_session=True,
    )  # fmt: skip
    try:
        base = f"http://127.0.0.1:{port}/api/v1"
        wait_for_port(proc, port, timeout=60, what="uvicorn")
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(headers=headers, timeout=60) as http:
            for q in queries:
                http.get(f"{base}/search", params={"q": q}).raise_for_status()
            for _ in range(5):
                http.get(f"{base}/entries/{ref}").raise_for_status()
        return memory_mb(psutil.Process(proc.pid))
    finally:
        proc.terminate()
        proc.wait(30)


def database_mb() -> float:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_database_size(current_database())")
        return round(cursor.fetchone()[0] / 2**20, 1)


def measure(
    *, actor, corpus, settle, size: int, writes: int, vector_writes: int, contexts: int
) -> dict:
    """One row of the costs table at `size` entries (the corpus is already filled)."""
    from django.db import connection

    from bench._setup import percentile
    from knowledge.models import Entry
    from knowledge.reads.context import build_context
    from knowledge.services import EntryFields, entry_upsert, token_create
    from memory_site import embedded

    def write(words: int | None = None) -> int:
        data = corpus.linked_entry(words)
        made = entry_upsert(
            actor=actor,
            project=data["project"],
            subtopic=data["subtopic"],
            fields=EntryFields.pick(data),
        )
        return made.entry.pk

    # Writes through the services, with nothing queued (the worker is not running yet).
    times = []
    for _ in range(writes):
        start = time.perf_counter()
        write()
        times.append((time.perf_counter() - start) * 1000)

    # build_context on entries written through the services (they link to earlier ones).
    linked = list(
        Entry.objects.filter(generated_by=actor.agent, body__contains="[[")
        .order_by("-pk")
        .values_list("project__slug", "pk")[:contexts]
    )
    ctx_times = []
    for _slug, pk in linked:
        start = time.perf_counter()
        build_context(actor, str(pk), depth=1)
        ctx_times.append((time.perf_counter() - start) * 1000)

    settle()
    mirror = ROOT / "var" / "bench-scale-mirror.git"
    shutil.rmtree(mirror, ignore_errors=True)
    env = _env(connection.settings_dict, mirror)
    started_broker = embedded.start_broker()
    worker = Worker(env, ROOT / "var" / f"bench-scale-worker-{size}.log")
    django_settings.CAIRN_BACKGROUND_TASKS = True
    try:
        time.sleep(8)  # the pool forks and connects; the first write loads the model
        # Short notes (one chunk): the model's cost per chunk is the same at every size, and
        # this machine's two cores embed about one such note per second.
        write(SHORT_NOTE_WORDS)
        vectors = write_to_vectors(lambda: write(SHORT_NOTE_WORDS), vector_writes, 1.0)
        worker_mem = memory_mb(psutil.Process(worker.proc.pid))
    finally:
        django_settings.CAIRN_BACKGROUND_TASKS = False
        worker.stop()
        if started_broker is not None:
            embedded.stop_broker()
    secret = token_create(actor=actor, user=actor.user, name=f"bench-scale-{size}").secret
    web_mem = web_memory(env, secret, [corpus.query() for _ in range(20)], str(linked[0][1]))
    return {
        "entries": size,
        "write_p50_ms": round(percentile(times, 50), 1),
        "write_p95_ms": round(percentile(times, 95), 1),
        "write_to_vectors_p50_s": round(percentile(vectors, 50), 2),
        "write_to_vectors_p95_s": round(percentile(vectors, 95), 2),
        "build_context_p50_ms": round(percentile(ctx_times, 50), 1),
        "build_context_p95_ms": round(percentile(ctx_times, 95), 1),
        "web_memory": web_mem,
        "worker_memory": worker_mem,
        "database_mb": database_mb(),
    }


def table_of(rows: list[dict], table) -> str:
    def cell(row: dict, key: str) -> str:
        found = row["latency"].get(key)
        return f"{found['p50_ms']} / {found['p95_ms']}" if found else "-"

    return table(
        ["entries", "write p50/p95 ms", "write→vectors p50/p95 s", "search", "search in project",
         "build_context p50 ms", "web PSS MB", "worker PSS MB", "database MB"],
        [
            [r["entries"], f"{r['write_p50_ms']} / {r['write_p95_ms']}",
             f"{r['write_to_vectors_p50_s']} / {r['write_to_vectors_p95_s']}",
             cell(r, "none/hybrid"), cell(r, "project/hybrid"), r["build_context_p50_ms"],
             r["web_memory"]["pss_mb"], r["worker_memory"]["pss_mb"], r["database_mb"]]
            for r in rows
        ],
    )  # fmt: skip
