"""Pages for people: server time and query count per page, on the demo data.

    .venv/bin/python bench/web_pages.py [--n 100] [--extra 0]

Loads the demo data (`seed_demo`) into its own database (`cairn_bench_web`), embeds it (so the
search page runs the real hybrid search), signs a member in through Django's test client and
requests each page `--n` times after a warm-up. `--extra N` adds N more entries (spread over
the demo subtopics, each linking to the one before and to the first) to see that list pages do
not grow with the data and to time an entry page with many links and the graph data. Prints a
table (p50, p95, p99 server time in ms, queries per request, and where the time goes: SQL vs
Python + templates) and writes bench/results/web_pages-<stamp>.json. Server time is measured
in-process around the whole request (middleware, view, selectors, templates), without a
network hop.
"""

from __future__ import annotations

import argparse
import os
import time

from _setup import percentile, setup_django, table, write_json


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=100, help="timed requests per page")
    parser.add_argument("--extra", type=int, default=0, help="more entries beyond the demo")
    args = parser.parse_args()
    setup_django("cairn_bench_web")

    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection
    from django.db.models import Count
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from knowledge.actors import Actor
    from knowledge.models import Entry, Membership, Project, Role
    from knowledge.services import EntryFields, entries_embed, entry_upsert, lexeme_stats_refresh
    from tests.factories import UserFactory

    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    call_command("seed_demo", verbosity=0)
    from django.contrib.auth import get_user_model

    person = get_user_model().objects.filter(username="bench-web").first() or UserFactory(
        username="bench-web"
    )
    for project in Project.objects.all():
        Membership.objects.get_or_create(
            project=project, user=person, defaults={"role": Role.EDITOR}
        )
    actor = Actor.for_user(person)
    for i in range(args.extra):
        entry_upsert(
            actor=actor,
            project="platform",
            subtopic=f"runbooks/bulk-{i % 5}",
            fields=EntryFields(
                title=f"Bulk note {i}",
                body=f"Runbook step {i}: restart the workers after the database restore.\n\n"
                f"- [step] restart worker {i} #ops\n- depends_on [[Bulk note {max(i - 1, 0)}]]\n"
                "- see [[Bulk note 0]]\n",
                tags=["bulk"],
            ),
        )
    entries_embed(entry_ids=list(Entry.objects.values_list("pk", flat=True)))
    lexeme_stats_refresh()

    entry = Entry.objects.filter(project__slug="customer-x").order_by("pk").first()
    # The entry with the most links in and out: its page lists observations, links, backlinks.
    linked = (
        Entry.objects.annotate(
            links=Count("relations_out", distinct=True) + Count("relations_in", distinct=True)
        )
        .order_by("-links", "pk")
        .first()
    )
    misfit = Entry.objects.get(project__slug="platform", title="Tom Becker")
    pages = {
        "home /": "/",
        "project /p/platform/ (with note types)": "/p/platform/",
        "note type /p/platform/?kind=person": "/p/platform/?kind=person",
        "misfits /p/platform/?kind=person&fit=no": "/p/platform/?kind=person&fit=no",
        "entry with a schema /e/<misfit>/": f"/e/{misfit.short_id}/",
        "subtopic /p/customer-x/t/2026-08/incident/": "/p/customer-x/t/2026-08/incident/",
        "entry /e/<id>/": f"/e/{entry.short_id}/",
        "diff /e/<id>/diff/": f"/e/{entry.short_id}/diff/?from=1&to=1",
        "search /search/?q=… (hybrid)": "/search/?q=database+restore",
        "search as you type (htmx)": "/search/?q=checkout+outage",
        f"entry with {linked.links} links /e/<id>/": f"/e/{linked.short_id}/",
        "graph /graph/": "/graph/",
        "graph data /graph/data.json (all)": "/graph/data.json",
        "graph data ?around=<it>&depth=2": f"/graph/data.json?around={linked.short_id}&depth=2",
    }
    client = Client()
    client.force_login(person)
    rows, results = [], {}
    for name, url in pages.items():
        headers = {"HX-Request": "true"} if "htmx" in name else {}
        for _ in range(5):  # warm-up: model load, template cache, connection
            assert client.get(url, headers=headers).status_code == 200, url
        times, sql, queries = [], [], 0
        for _ in range(args.n):
            with CaptureQueriesContext(connection) as captured:
                start = time.perf_counter()
                response = client.get(url, headers=headers)
                times.append((time.perf_counter() - start) * 1000)
            assert response.status_code == 200
            queries = len(captured)
            sql.append(sum(float(q["time"]) for q in captured.captured_queries) * 1000)
        p50, p50_sql = percentile(times, 50), percentile(sql, 50)
        results[name] = {
            "url": url,
            "p50_ms": p50,
            "p95_ms": percentile(times, 95),
            "p99_ms": percentile(times, 99),
            "queries": queries,
            "sql_p50_ms": p50_sql,
        }
        rows.append(
            [name, p50, percentile(times, 95), percentile(times, 99), queries, p50_sql,
             max(p50 - p50_sql, 0.0)]
        )  # fmt: skip
    load = os.getloadavg()
    print(
        f"{Entry.objects.count()} entries, {args.n} requests per page, "
        f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, {os.cpu_count()} CPUs\n"
    )
    headers = ["page", "p50 ms", "p95 ms", "p99 ms", "queries", "SQL p50 ms", "Python+templates"]
    print(table(headers, rows))
    path = write_json(
        "web_pages",
        {
            "entries": Entry.objects.count(),
            "n": args.n,
            "load_average": load,
            "pages": results,
        },
    )
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
