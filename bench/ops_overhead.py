"""What recording a timing costs per call, and a sample of `manage.py metrics` as memory grows.

    .venv/bin/python bench/ops_overhead.py [--n 20000] [--sizes 50,500,2000] [--calls 40]

Part 1 times the recorder alone (ops.timing): an empty block with and without
`timed()`, and each step of a recording (start, stop with the Prometheus counters, buffering,
the batched INSERT), so the table shows where the microseconds go. Part 2 grows a throw-away
project to each size through the services and makes REST calls (search, get, upsert) with the
Django test client, then prints the timings table of that run, as `manage.py metrics` does.
Runs in a database of its own, cairn_bench_ops, dropped and recreated each run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

from _common import percentile, print_table, write_json
from django.conf import settings as django_settings

DB_NAME = "cairn_bench_ops"


def fresh_database() -> None:
    """A new, migrated database of its own each run, so the memory sizes are exact."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_site.settings")
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    import psycopg
    from django.conf import settings

    from memory_site import embedded

    db = settings.DATABASES["default"]
    embedded.ensure_started(db)  # settings no longer start the embedded server
    with psycopg.connect(host=db.get("HOST") or None, port=db.get("PORT") or None,
                         user=db.get("USER") or None, password=db.get("PASSWORD") or None,
                         dbname="postgres", autocommit=True) as admin:  # fmt: skip
        admin.execute(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)')
    from bench._setup import setup_django

    setup_django(DB_NAME)


def _stats(name: str, samples_us: list[float]) -> list[object]:
    return [
        name,
        len(samples_us),
        percentile(samples_us, 50),
        percentile(samples_us, 90),
        percentile(samples_us, 99),
        max(samples_us),
        statistics.fmean(samples_us),
    ]


def recorder(n: int) -> list[list[object]]:
    from django.conf import settings

    from ops import metrics, timing

    settings.CAIRN_TIMINGS_BATCH = 100
    settings.CAIRN_TIMINGS_FLUSH_SECONDS = 3600
    rows = []
    clock = time.perf_counter

    def each(fn) -> list[float]:
        out = []
        for _ in range(n):
            t0 = clock()
            fn()
            out.append((clock() - t0) * 1e6)
        return out

    def bare():
        pass

    def with_timed():
        with timing.timed("bench", "noop"):
            pass

    rows.append(_stats("empty block", each(bare)))
    django_settings.CAIRN_TIMINGS_RECORD = False
    rows.append(_stats("timed(), metrics only", each(with_timed)))
    django_settings.CAIRN_TIMINGS_RECORD = True
    rows.append(_stats("timed() + row (batched, flush amortized)", each(with_timed)))
    timing.flush()
    # Where the time goes: the counters, one query through the execute wrapper, the INSERT.
    rows.append(_stats("  metrics.observe()", each(lambda: metrics.observe("bench", "x", "ok",
                                                                           0.001))))  # fmt: skip
    from django.db import connection

    def query():
        with connection.cursor() as cur:
            cur.execute("SELECT 1")

    plain = each(query)
    timer = timing.Timer("bench", "x").start()
    wrapped = each(query)
    connection.execute_wrappers.remove(timer)
    rows.append(_stats("  SELECT 1", plain))
    rows.append(_stats("  SELECT 1 inside timed() (db-time wrapper)", wrapped))
    settings.CAIRN_TIMINGS_BATCH = 10**9
    flushes = []
    for _ in range(max(5, n // 1000)):
        for _ in range(100):
            timing.record(timing.Timer("bench", "x"))
        t0 = clock()
        timing.flush()
        flushes.append((clock() - t0) * 1e6)
    rows.append(_stats("  flush() of 100 rows (count + COPY)", flushes))
    return rows


def growth(sizes: list[int], calls: int) -> tuple[str, list[dict]]:
    from django.contrib.auth import get_user_model
    from django.test import Client
    from django.utils import timezone

    from knowledge.actors import Actor
    from knowledge.services import EntryFields, ProjectFields, entry_upsert, project_create
    from knowledge.services.tokens import token_create
    from ops import report, timing
    from ops.models import OperationTiming

    django_settings.CAIRN_BACKGROUND_TASKS = False  # no worker: measure the calls, not the queue
    user, _ = get_user_model().objects.get_or_create(username="bench")
    actor = Actor.for_user(user, agent="agent:bench")
    slug = f"bench-ops-{int(time.time())}"
    project_create(actor=actor, slug=slug, fields=ProjectFields(name=slug))
    secret = token_create(actor=Actor.system(), user=user, name=slug).secret
    client = Client(HTTP_HOST="127.0.0.1", headers={"Authorization": f"Bearer {secret}"})
    OperationTiming.objects.filter(surface="bench").delete()  # part 1's rows
    started = timezone.now()
    made, ids = 0, []
    body = "A paragraph about the incident, the fix and what we learned from it. " * 10
    for size in sizes:
        while made < size:
            result = entry_upsert(
                actor=actor,
                project=slug,
                subtopic=f"area-{made % 10}",
                fields=EntryFields(title=f"Note {made}", body=body + str(made)),
            )
            ids.append(result.entry.pk)
            made += 1
        timing.flush()
        for i in range(calls):
            client.get("/api/v1/search", {"q": f"incident {i}", "project": slug, "mode": "text"})
            client.get(f"/api/v1/entries/{ids[(i * 7919) % len(ids)]}")
            write = {"project": slug, "title": f"Bench write {i}", "body": f"{body} size {size}"}
            client.put("/api/v1/entries", write, content_type="application/json")
        timing.flush()
    days = (timezone.now() - started).total_seconds() / 86400 + 1e-4
    table = report.render(days=days)
    ops = report.per_operation(days=days)
    return table, ops


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=20000, help="calls per recorder row")
    parser.add_argument("--sizes", default="50,500,2000", help="memory sizes for part 2")
    parser.add_argument("--calls", type=int, default=40, help="REST calls of each kind per size")
    args = parser.parse_args()
    fresh_database()
    load = os.getloadavg()

    rows = recorder(args.n)
    print(f"Recorder cost per call, microseconds (load average {load[0]:.2f}):")
    headers = ["what", "n", "p50 µs", "p90 µs", "p99 µs", "max µs", "mean µs"]
    print_table(headers, rows)
    bare, metrics_only, full = rows[0][6], rows[1][6], rows[2][6]
    print(f"\noverhead per call (mean): metrics only {metrics_only - bare:.1f} µs, "
          f"metrics + row {full - bare:.1f} µs")  # fmt: skip

    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    table, ops = growth(sizes, args.calls)
    print("\n`manage.py metrics` for this run:\n")
    print(table)
    write_json(
        "ops_overhead",
        {
            "load_average": load,
            "recorder": [dict(zip(headers, row, strict=True)) for row in rows],
            "overhead_us": {"metrics_only": metrics_only - bare, "with_row": full - bare},
            "sizes": sizes,
            "operations": ops,
            "metrics_table": table,
        },
    )


if __name__ == "__main__":
    main()
