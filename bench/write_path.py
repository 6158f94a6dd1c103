"""Write-path benchmark: entry_upsert through the services (create, update, unchanged).

    .venv/bin/python bench/write_path.py [--n 500]      # or: make bench

Runs in a database of its own, `cairn_bench_write` on the configured server (created and
migrated when missing, so it starts on a fresh checkout too), in a throw-away project. Where
the time goes, per write: this process's CPU (Python: building statements, parsing the body),
the statements sent and the time spent waiting on them.
"""

from __future__ import annotations

import argparse
import os
import time

from _common import SqlCount, percentile, print_table, write_json
from _setup import setup_django
from django.conf import settings as django_settings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=500, help="entries per phase")
    args = parser.parse_args()
    setup_django("cairn_bench_write")

    from django.contrib.auth import get_user_model
    from django.db import connection

    from knowledge.actors import Actor
    from knowledge.models import Entry, Project
    from knowledge.services import EntryFields, ProjectFields, entry_upsert, project_create

    django_settings.CAIRN_BACKGROUND_TASKS = False  # measure the write, not the queueing
    user, _ = get_user_model().objects.get_or_create(username="bench")
    actor = Actor.for_user(user, agent="agent:bench")
    slug = f"bench-write-{int(time.time())}"
    project_create(actor=actor, slug=slug, fields=ProjectFields(name=slug))

    sql = SqlCount()

    body = "Paragraph about the incident and what we learned. " * 20
    phases = {}
    for phase in ("create", "update", "unchanged"):
        timings = []
        sql.reset()
        started, cpu = time.perf_counter(), time.process_time()
        with connection.execute_wrapper(sql):
            for i in range(args.n):
                text = body + (" v2" if phase != "create" else "")
                t0 = time.perf_counter()
                entry_upsert(
                    actor=actor,
                    project=slug,
                    subtopic=f"area-{i % 10}/sub-{i % 3}",
                    fields=EntryFields(title=f"Entry {i}", body=text, tags=["bench", f"t{i % 5}"]),
                )
                timings.append((time.perf_counter() - t0) * 1000)
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
        phases[phase] = {
            "n": args.n,
            "p50_ms": percentile(timings, 50),
            "p95_ms": percentile(timings, 95),
            "per_second": args.n / elapsed,
            "cpu_ms_per_write": cpu * 1000 / args.n,
            "statements_per_write": sql.statements / args.n,
            "sql_wait_ms_per_write": sql.seconds * 1000 / args.n,
        }
    # Benchmark clean-up, not an application write: drop the throw-away project.
    Entry.objects.filter(project__slug=slug).delete()
    Project.objects.filter(slug=slug).delete()

    print_table(
        ["phase", "n", "p50 ms", "p95 ms", "writes/s", "CPU ms/write", "statements", "SQL wait ms"],
        [
            [k, v["n"], v["p50_ms"], v["p95_ms"], v["per_second"], v["cpu_ms_per_write"],
             v["statements_per_write"], v["sql_wait_ms_per_write"]]
            for k, v in phases.items()
        ],
    )  # fmt: skip
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs")
    write_json("write_path", {"phases": phases, "load_average": load})


if __name__ == "__main__":
    main()
