"""Git mirror benchmark: drain throughput and mirror lag under a steady write load.

    .venv/bin/python bench/mirror.py [--queued 5000] [--rate 50] [--seconds 60]

1. drain: queue --queued revisions (creates, edits, moves, deletes) with no worker running,
   then time one drain (the code the Celery task runs) committing them all.
2. lag: start the embedded broker and a real Celery worker (one solo process, embeddings off),
   write --rate entries per second for --seconds through the services, and measure for each
   revision the time from its save to its commit hash being recorded (polled every 20 ms).

Runs in a throw-away database (bench_mirror) and a temporary repository; both are removed.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from _common import ROOT, percentile, print_table, setup_django, write_json
from django.conf import settings as django_settings


def queue_revisions(actor, project: str, n: int, rng: random.Random) -> dict:
    from knowledge.models import Entry
    from knowledge.services import EntryFields, entry_delete, entry_move, entry_update, entry_upsert

    counts = {"create": 0, "update": 0, "move": 0, "delete": 0}
    live: list[int] = []
    body = "A paragraph about the incident and what we learned from it. " * 12
    made = 0
    pending = Entry.history.filter(git_commit="")
    while made < n or pending.count() < n:
        roll = rng.random()
        if len(live) < 50 or roll < 0.2:
            e = entry_upsert(
                actor=actor,
                project=project,
                subtopic=f"area-{made % 12}/sub-{made % 4}",
                fields=EntryFields(title=f"Entry {made}", body=f"{body}\n{made}\n", tags=["bench"]),
            ).entry
            live.append(e.pk)
            counts["create"] += 1
        elif roll < 0.9:
            pk = rng.choice(live)
            entry_update(
                actor=actor,
                ref=pk,
                fields=EntryFields(body=f"{body}\nedit {made}\n"),
                reason="edit",
            )
            counts["update"] += 1
        elif roll < 0.96:
            pk = rng.choice(live)
            entry_move(actor=actor, ref=pk, subtopic=f"moved/{made % 7}")
            counts["move"] += 1
        else:
            pk = live.pop(rng.randrange(len(live)))
            entry_delete(actor=actor, ref=pk, reason="bench delete")
            counts["delete"] += 1
        made += 1
    return counts


def start_worker(db_name: str, mirror_path: Path, log_path: Path) -> subprocess.Popen:
    env = os.environ | {
        "DJANGO_SETTINGS_MODULE": "tests.history.worker_settings",
        "CAIRN_TEST_DATABASE_NAME": db_name,
        "CAIRN_MIRROR_PATH": str(mirror_path),
        "CAIRN_MIRROR_PUSH_URL": "",
        # The mirror alone: with one solo process, each write's embedding would hold the drain
        # up behind the model (bench/embed_rate.py measures that side).
        "CAIRN_EMBEDDING_PROVIDER": "none",
    }
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "memory_site", "worker", "-B",
         "-s", str(log_path.parent / "beat-schedule"), "--pool", "solo", "-l", "warning",
         "--without-gossip", "--without-mingle", "--without-heartbeat"],
        cwd=ROOT, env=env, stdout=log_path.open("wb"), stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip


def measure_lag(
    actor, project: str, rate: float, seconds: float, writers: int, db_name: str, tmp: Path
) -> dict:
    import psycopg
    from django.db import connection

    from history import mirror
    from knowledge.models import HistoricalEntry
    from knowledge.services import EntryFields, entry_upsert
    from memory_site import embedded

    table = HistoricalEntry._meta.db_table
    started_broker = embedded.start_broker()
    django_settings.CAIRN_BACKGROUND_TASKS = True
    worker = start_worker(db_name, Path(mirror.open_mirror().path), tmp / "worker.log")
    seen: dict[int, float] = {}
    stop = threading.Event()
    s = connection.settings_dict

    def poll() -> None:
        # Its own connection: the poller must not share the writer's.
        with psycopg.connect(dbname=s["NAME"], user=s["USER"], host=s["HOST"], port=s["PORT"],
                             autocommit=True) as conn:  # fmt: skip
            while not stop.is_set():
                now = time.time()
                for (hid,) in conn.execute(
                    f"SELECT history_id FROM {table} WHERE git_commit <> '' "
                    "AND history_date > now() - interval '10 minutes'"
                ).fetchall():
                    seen.setdefault(hid, now)
                time.sleep(0.02)

    try:
        # Wait until the worker runs: one write, mirrored.
        first = entry_upsert(
            actor=actor, project=project, fields=EntryFields(title="warm-up", body="x")
        ).entry
        deadline = time.monotonic() + 60
        while mirror.pending().exists():
            if time.monotonic() > deadline or worker.poll() is not None:
                log = (tmp / "worker.log").read_text(errors="replace")[-3000:]
                raise RuntimeError(f"the worker mirrored nothing within 60 s; its log:\n{log}")
            time.sleep(0.1)
        start_id = first.history.order_by("-history_id").first().history_id
        poller = threading.Thread(target=poll)
        poller.start()
        body = "Steady load: one edit every few milliseconds. " * 10
        n = int(rate * seconds)
        t0 = time.monotonic()
        late = [0] * writers

        def write(k: int) -> None:
            # Open loop: slot i is due at t0 + i/rate, whatever the previous writes cost.
            try:
                for i in range(k, n, writers):
                    delay = t0 + i / rate - time.monotonic()
                    if delay > 0:
                        time.sleep(delay)
                    elif delay < -0.05:
                        late[k] += 1
                    entry_upsert(
                        actor=actor,
                        project=project,
                        subtopic=f"load/{i % 10}",
                        fields=EntryFields(title=f"Load {i % 400}", body=f"{body}{i}"),
                    )
            finally:
                connection.close()

        threads = [threading.Thread(target=write, args=(k,)) for k in range(writers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        late = sum(late)
        write_seconds = time.monotonic() - t0
        deadline = time.monotonic() + 120
        while mirror.pending().exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.1)
        stop.set()
        poller.join()
        rows = HistoricalEntry.objects.filter(history_id__gt=start_id).values_list(
            "history_id", "history_date"
        )
        lags = [seen[h] - d.timestamp() for h, d in rows if h in seen]
        missing = sum(1 for h, _ in rows if h not in seen)
    finally:
        stop.set()
        os.killpg(worker.pid, signal.SIGTERM)
        try:
            worker.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
        if started_broker is not None:
            embedded.stop_broker()
    return {
        "writes": n,
        "write_seconds": write_seconds,
        "writes_per_second": n / write_seconds,
        "late_writes": late,
        "revisions_measured": len(lags),
        "not_mirrored": missing,
        "lag_p50_s": percentile(lags, 50),
        "lag_p95_s": percentile(lags, 95),
        "lag_p99_s": percentile(lags, 99),
        "lag_max_s": max(lags) if lags else float("nan"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queued", type=int, default=5000)
    parser.add_argument("--rate", type=float, default=50.0, help="writes per second")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--writers", type=int, default=4, help="writer threads sharing the load")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="cairn-bench-mirror-"))
    os.environ["CAIRN_MIRROR_PATH"] = str(tmp / "mirror.git")
    setup_django()

    from django.contrib.auth import get_user_model
    from django.db import connection

    from history import maintenance, mirror
    from knowledge.actors import Actor
    from knowledge.services import ProjectFields, project_create

    connection.settings_dict["TEST"]["NAME"] = "bench_mirror"
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    try:
        user = get_user_model().objects.create(username="bench", email="bench@example.com")
        actor = Actor.for_user(user, agent="agent:bench")
        project_create(actor=actor, slug="bench", fields=ProjectFields(name="Bench"))

        django_settings.CAIRN_BACKGROUND_TASKS = False  # phase 1 queues with no worker
        t = time.perf_counter()
        mix = queue_revisions(actor, "bench", args.queued, random.Random(args.seed))
        queue_seconds = time.perf_counter() - t
        queued = mirror.pending().count()
        result = mirror.drain()
        drain = {
            "queued_revisions": queued,
            "mix": mix,
            "queue_seconds": queue_seconds,
            "drain_seconds": result.seconds,
            "revisions_per_second": result.committed / result.seconds,
            "committed": result.committed,
        }
        t = time.perf_counter()
        problems = maintenance.verify()
        drain["verify_seconds"] = time.perf_counter() - t
        drain["verify_differences"] = len(problems)

        lag = measure_lag(
            actor,
            "bench",
            args.rate,
            args.seconds,
            args.writers,
            connection.settings_dict["NAME"],
            tmp,
        )
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
        shutil.rmtree(tmp, ignore_errors=True)

    print_table(
        ["measure", "value", "target"],
        [
            ["queued revisions drained", drain["committed"], ""],
            ["drain throughput (revisions/s)", drain["revisions_per_second"], ">= 200"],
            ["drain time (s)", drain["drain_seconds"], ""],
            ["verify after drain (s)", drain["verify_seconds"], ""],
            ["steady writes/s achieved", lag["writes_per_second"], f"{args.rate:g}"],
            ["writes during load", lag["writes"], ""],
            ["writes late by > 50 ms", lag["late_writes"], ""],
            ["lag p50 (s)", lag["lag_p50_s"], ""],
            ["lag p95 (s)", lag["lag_p95_s"], "< 2"],
            ["lag p99 (s)", lag["lag_p99_s"], ""],
            ["lag max (s)", lag["lag_max_s"], ""],
            ["revisions not mirrored", lag["not_mirrored"], "0"],
        ],
    )
    write_json("mirror", {"args": vars(args), "drain": drain, "lag": lag})


if __name__ == "__main__":
    main()
