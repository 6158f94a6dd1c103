"""How fast writes become searchable by meaning: entries/s to vectors and write→vectors latency.

    .venv/bin/python bench/embed_rate.py --data ../shared/bench-data/locomo-dev.json \
        [--sessions 128] [--steady-seconds 60] [--configs before,after]

    # issue 49's measure: the burst only, `serve`'s defaults
    .venv/bin/python bench/embed_rate.py --configs after --steady-seconds 0

For each worker configuration, in one sitting (same machine load, back to back):

1. burst: write the LoCoMo sessions (one entry per session, as bench/locomo.py ingests them)
   through the services as fast as they go, with a real Celery worker running, and time from
   the last write until every session is searchable by meaning (has a vector: its first chunk)
   and until every chunk has its vector (the backlog is zero); entries and chunks per second,
   the worker's CPU seconds per chunk and its idle share (the part of its processes' wall time
   they did not spend on a CPU), and of that the part they were ready to run but waited for a
   CPU (other work on the machine; the rest is the worker's own idleness).
2. steady: write one session per second for --steady-seconds and measure, per write, the time
   from its commit to its vectors being stored (p50/p95/max).

Configurations: `before` is one worker process, one model thread, one entry per model call
(CAIRN_WORKER_CONCURRENCY=1, CAIRN_EMBEDDING_THREADS=1, CAIRN_EMBED_BATCH=1: what Cairn ran
before issue 23); `after` is the defaults `serve` picks from the cores. Runs in a throw-away
database (bench_embed_rate); the data never enters the repository.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from _common import ROOT, locomo_data, percentile, print_table, setup_django, write_json
from django.conf import settings as django_settings

CONFIGS = {
    "before": {"CAIRN_WORKER_CONCURRENCY": "1", "CAIRN_EMBEDDING_THREADS": "1",
               "CAIRN_EMBED_BATCH": "1"},
    "after": {},  # the defaults, chosen from the cores
    "1x2threads": {"CAIRN_WORKER_CONCURRENCY": "1", "CAIRN_EMBEDDING_THREADS": "2",
                   "CAIRN_EMBED_BATCH": "8"},
}  # fmt: skip


def sessions(path: Path, limit: int) -> list[tuple[str, str, str]]:
    """(conversation, title, body) per session, as bench/locomo.py writes them."""
    from locomo_data import sessions_of, turn_line

    out = []
    for sample in json.loads(path.read_text()):
        for n, date, turns in sessions_of(sample["conversation"]):
            body = "\n".join(turn_line(t) for t in turns)
            out.append((sample["sample_id"], f"Session {n} ({date})", body))
    return out[:limit]


def edit_work(data) -> list[list[object]]:
    """Chunks the model reads for an edit of each session, re-embedding whole entries (before)
    against only the chunks whose text changed (after): no model needed, only the chunking."""
    from django.conf import settings

    from knowledge.search.chunking import chunk_text
    from knowledge.services.embeddings import chunk_hash

    def hashes(title: str, body: str) -> list[str]:
        # What the worker embeds (knowledge.services.embeddings): a session is far below
        # CAIRN_EMBED_MAX_TOKENS, so every chunk.
        chunks = chunk_text(
            body, size=settings.CAIRN_CHUNK_WORDS, overlap=settings.CAIRN_CHUNK_OVERLAP
        )
        return [chunk_hash(c.for_embedding(title)) for c in chunks]

    edits = {
        "append a turn": lambda lines: [*lines, "Melanie: One more thing I forgot to say."],
        "fix a typo mid-session": lambda lines: [
            *lines[: len(lines) // 2], lines[len(lines) // 2] + " (edited)",
            *lines[len(lines) // 2 + 1 :]],
    }  # fmt: skip
    rows = []
    for name, edit in edits.items():
        whole = changed = 0
        for _, title, body in data:
            old = set(hashes(title, body))
            new = hashes(title, "\n".join(edit(body.split("\n"))))
            whole += len(new)
            changed += sum(1 for h in new if h not in old)
        rows.append([name, len(data), whole, changed, whole / max(1, changed)])
    return rows


def start_worker(db_name: str, tmp: Path, overrides: dict, log_path: Path) -> subprocess.Popen:
    env = (
        os.environ
        | overrides
        | {
            "DJANGO_SETTINGS_MODULE": "tests.history.worker_settings",
            "CAIRN_TEST_DATABASE_NAME": db_name,
            "CAIRN_MIRROR_PATH": str(tmp / "mirror.git"),
            "CAIRN_MIRROR_PUSH_URL": "",
        }
    )
    # The worker command `serve` runs, with the concurrency it would pick.
    probe = subprocess.run(
        [sys.executable, "-c", "from django.conf import settings; import django; django.setup();"
         "print(settings.CAIRN_WORKER_CONCURRENCY, settings.CAIRN_EMBEDDING_THREADS,"
         " settings.CAIRN_EMBED_BATCH)"],
        cwd=ROOT, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    concurrency, threads, batch = probe.stdout.split()
    proc = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "memory_site", "worker", "-B",
         "-s", str(tmp / "beat-schedule"), "--concurrency", concurrency, "-l", "warning",
         "--without-gossip", "--without-mingle", "--without-heartbeat", "--purge"],
        cwd=ROOT, env=env, stdout=log_path.open("wb"), stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip
    proc.shape = {"processes": int(concurrency), "threads": int(threads), "batch": int(batch)}
    return proc


def stop_worker(proc: subprocess.Popen) -> None:
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)


class Watcher:
    """Polls (on its own connection) which watched entries have their vectors, and when."""

    def __init__(self) -> None:
        self.watched: set[int] = set()
        self.ready: dict[int, float] = {}
        self.searchable: dict[int, float] = {}
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def add(self, entry_id: int) -> None:
        with self.lock:
            self.watched.add(entry_id)

    def _run(self) -> None:
        import psycopg
        from django.db import connection

        s = connection.settings_dict
        with psycopg.connect(dbname=s["NAME"], user=s["USER"], host=s["HOST"], port=s["PORT"],
                             autocommit=True) as conn:  # fmt: skip
            while not self.stop.is_set():
                with self.lock:
                    todo = list(self.watched - self.ready.keys())
                if todo:
                    now = time.time()
                    for pk, done in conn.execute(
                        "SELECT id, embed_pending_since IS NULL AND embedded_hash <> '' "
                        "FROM knowledge_entry e WHERE id = ANY(%s) AND EXISTS "
                        "(SELECT 1 FROM knowledge_entrychunk c WHERE c.entry_id = e.id)",
                        [todo],
                    ).fetchall():
                        self.searchable.setdefault(pk, now)
                        if done:
                            self.ready[pk] = now
                time.sleep(0.05)

    def wait_all(self, timeout: float, worker: subprocess.Popen, log: Path) -> None:
        deadline = time.monotonic() + timeout
        while len(self.ready) < len(self.watched):
            if time.monotonic() > deadline or worker.poll() is not None:
                raise RuntimeError(f"not every entry got its vectors; see {log}")
            time.sleep(0.05)

    def close(self) -> None:
        self.stop.set()
        self.thread.join()


def worker_cpu(worker: subprocess.Popen) -> tuple[float, float]:
    """CPU seconds the worker's processes (the main one and its pool) have used so far, and the
    seconds their threads were ready to run but waited for a CPU (Linux's schedstat run delay:
    the other work on the machine, not the worker's own idleness; 0 where it is not kept)."""
    import psutil

    main = psutil.Process(worker.pid)
    total = waited = 0.0
    for proc in [main, *main.children(recursive=True)]:
        try:
            times = proc.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system
        for task in Path(f"/proc/{proc.pid}/task").glob("*/schedstat"):
            try:
                waited += int(task.read_text().split()[1]) / 1e9
            except (OSError, IndexError, ValueError):
                continue  # a thread that ended meanwhile
    return total, waited


def chunk_count(entry_ids: list[int]) -> int:
    from knowledge.models import EntryChunk

    return EntryChunk.objects.filter(entry_id__in=entry_ids).count()


def run_config(name: str, overrides: dict, actor, data, args, db_name: str, tmp: Path) -> dict:
    from knowledge.models import Entry, Project
    from knowledge.services import EntryFields, ProjectFields, entry_upsert, project_create

    Entry.objects.all().delete()
    Project.objects.filter(slug__startswith="embed-").delete()
    slugs = sorted({conv for conv, _, _ in data})
    for slug in slugs:
        project_create(actor=actor, slug=f"embed-{slug}".lower(), fields=ProjectFields(name=slug))
    log = tmp / f"worker-{name}.log"
    worker = start_worker(db_name, tmp, overrides, log)
    watcher = Watcher()
    try:
        # Warm up: the worker's processes load the model on their first entries.
        warm = [
            entry_upsert(
                actor=actor, project=f"embed-{slugs[0]}".lower(),
                fields=EntryFields(title=f"warm-up {i}", body="Loading the model."),
            ).entry.pk
            for i in range(worker.shape["processes"] * 2)
        ]  # fmt: skip
        for pk in warm:
            watcher.add(pk)
        watcher.wait_all(300, worker, log)

        # 1. burst
        written: dict[int, float] = {}
        cpu0, wait0 = worker_cpu(worker)
        t0 = time.time()
        for conv, title, body in data:
            entry = entry_upsert(
                actor=actor,
                project=f"embed-{conv}".lower(),
                fields=EntryFields(title=title, body=body, kind="session"),
            ).entry
            written[entry.pk] = time.time()
            watcher.add(entry.pk)
        last_write = time.time()
        write_seconds = last_write - t0
        watcher.wait_all(args.timeout, worker, log)
        burst_seconds = max(watcher.ready[pk] for pk in written) - t0
        cpu1, wait1 = worker_cpu(worker)
        burst_cpu, burst_wait = cpu1 - cpu0, wait1 - wait0
        burst_lat = [watcher.ready[pk] - t for pk, t in written.items()]
        searchable_after = max(watcher.searchable[pk] for pk in written) - last_write
        complete_after = max(watcher.ready[pk] for pk in written) - last_write
        chunks = chunk_count(list(written))

        # 2. steady: one write per second (open loop), again the sessions, as new entries
        steady: dict[int, float] = {}
        n = int(args.steady_seconds)
        steady_lat = [float("nan")]
        t1 = time.time()
        for i in range(n):
            delay = t1 + i - time.time()
            if delay > 0:
                time.sleep(delay)
            conv, title, body = data[i % len(data)]
            entry = entry_upsert(
                actor=actor,
                project=f"embed-{conv}".lower(),
                fields=EntryFields(title=f"{title} again {i}", body=body, kind="session"),
            ).entry
            steady[entry.pk] = time.time()
            watcher.add(entry.pk)
        watcher.wait_all(args.timeout, worker, log)
        if steady:
            steady_lat = [watcher.ready[pk] - t for pk, t in steady.items()]
    finally:
        watcher.close()
        stop_worker(worker)
    return {
        "config": name,
        "overrides": overrides,
        **worker.shape,
        "sessions": len(data),
        "write_seconds": write_seconds,
        "burst_seconds": burst_seconds,
        "entries_per_second": len(data) / burst_seconds,
        "chunks": chunks,
        "chunks_per_second": chunks / burst_seconds,
        "searchable_after_last_write": searchable_after,
        "complete_after_last_write": complete_after,
        "worker_cpu_seconds": burst_cpu,
        "cpu_per_chunk": burst_cpu / max(1, chunks),
        "worker_idle_share": max(0.0, 1 - burst_cpu / (burst_seconds * worker.shape["processes"])),
        # Of that, the part spent ready to run but waiting for a CPU (a loaded machine).
        "worker_cpu_wait_share": burst_wait / (burst_seconds * worker.shape["processes"]),
        "burst_latency_p50": percentile(burst_lat, 50),
        "burst_latency_max": max(burst_lat),
        "steady_writes": n,
        "steady_p50": percentile(steady_lat, 50),
        "steady_p95": percentile(steady_lat, 95),
        "steady_max": max(steady_lat),
        "load_after": os.getloadavg(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--data", help="LoCoMo dev JSON (default: shared/bench-data/ beside or above the checkout)"
    )
    parser.add_argument("--sessions", type=int, default=128, help="how many sessions (max 128)")
    parser.add_argument("--steady-seconds", type=float, default=60)
    parser.add_argument("--configs", default="before,after", help=f"of {', '.join(CONFIGS)}")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per phase")
    parser.add_argument("--edits-only", action="store_true", help="only the edit table")
    args = parser.parse_args()
    args.data = locomo_data(args.data)
    sys.path.insert(0, str(ROOT / "bench"))
    tmp = Path(tempfile.mkdtemp(prefix="cairn-bench-embed-"))
    os.environ["CAIRN_MIRROR_PATH"] = str(tmp / "mirror.git")
    setup_django()

    from django.contrib.auth import get_user_model
    from django.db import connection

    from knowledge.actors import Actor
    from memory_site import embedded

    data = sessions(Path(args.data), args.sessions)
    edits = edit_work(data)
    print_table(
        ["edit", "sessions", "chunks, whole entries", "chunks, changed only", "less"], edits
    )
    if args.edits_only:
        return
    connection.settings_dict["TEST"]["NAME"] = "bench_embed_rate"
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    started_broker = embedded.start_broker()
    django_settings.CAIRN_BACKGROUND_TASKS = True
    rows = []
    load_before = os.getloadavg()
    try:
        user = get_user_model().objects.create(username="bench", email="bench@example.com")
        actor = Actor.for_user(user, agent="agent:bench")
        for name in args.configs.split(","):
            print(f"{name}: {args.sessions} sessions, then {args.steady_seconds:g} s at 1/s …")
            rows.append(
                run_config(
                    name, CONFIGS[name], actor, data, args, connection.settings_dict["NAME"], tmp
                )
            )
    finally:
        if started_broker is not None:
            embedded.stop_broker()
        connection.creation.destroy_test_db(old_name, verbosity=0)
        shutil.rmtree(tmp, ignore_errors=True)

    base = rows[0]["entries_per_second"]
    print_table(
        ["config", "sessions", "chunks", "write s", "searchable s after last write",
         "all vectors s after last write", "entries/s", "chunks/s", "worker CPU s per chunk",
         "worker idle share", "of it waiting for a CPU"],
        [[r["config"], r["sessions"], r["chunks"], r["write_seconds"],
          r["searchable_after_last_write"], r["complete_after_last_write"],
          r["entries_per_second"], r["chunks_per_second"], r["cpu_per_chunk"],
          r["worker_idle_share"], r["worker_cpu_wait_share"]] for r in rows],
    )  # fmt: skip
    print_table(
        ["config", "procs x threads", "batch", "entries/s", "vs first", "burst s",
         "steady p50 s", "steady p95 s", "steady max s", "load after"],
        [[r["config"], f"{r['processes']} x {r['threads']}", r["batch"], r["entries_per_second"],
          r["entries_per_second"] / base, r["burst_seconds"], r["steady_p50"], r["steady_p95"],
          r["steady_max"], f"{r['load_after'][0]:.1f}"] for r in rows],
    )  # fmt: skip
    print(f"load average before: {load_before[0]:.1f} {load_before[1]:.1f} {load_before[2]:.1f}")
    write_json(
        "embed_rate",
        {
            "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
            "load_before": load_before,
            "rows": rows,
            "edits": edits,
        },
    )


if __name__ == "__main__":
    main()
