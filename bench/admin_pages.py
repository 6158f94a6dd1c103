"""The admin's pages: server time and query count per page, with 10 and with 1,000 entries.

    .venv/bin/python bench/admin_pages.py [--n 30] [--sizes 10,1000]

For each size a project `bench-admin-<size>` is filled (once; later runs reuse it) with that
many entries in a three-level subtopic tree, embedded, and a staff member who is a member of
only that project requests each admin page `--n` times after a warm-up: the index (dashboard),
the entry list, the list filtered by a tree node, the list searched (Cairn's hybrid search), an
entry's change form, the editor's live preview, an entry's history, the project's page (its
tree) and a bulk action's intermediate page. Uses its own database (`cairn_bench_admin`).
Prints a table (p50, p95 ms, queries) and writes bench/results/admin_pages.json. Server time is
measured in-process around the whole request (Django's test client, no network hop).
"""

from __future__ import annotations

import argparse
import os
import time

from _setup import percentile, setup_django, table, write_json

BODY = (
    "Runbook step {i}: restart the workers after the database restore, then watch the error "
    "rate.\n\n- [step] restart worker {i} #ops\n- depends_on [[Note {prev}]]\n- see [[Note 0]]\n"
)


def fill(actor, slug: str, size: int) -> None:
    from knowledge.models import Entry
    from knowledge.services import EntryFields, entry_upsert

    have = Entry.objects.filter(project__slug=slug).count()
    for i in range(have, size):
        entry_upsert(
            actor=actor,
            project=slug,
            subtopic=f"area-{i % 4}/part-{i % 3}/leaf-{i % 2}" if i % 5 else "",
            fields=EntryFields(
                title=f"Note {i}",
                body=BODY.format(i=i, prev=max(i - 1, 0)),
                tags=["bench", f"t{i % 7}"],
                status="open" if i % 9 == 0 else "active",
            ),
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=30, help="timed requests per page")
    parser.add_argument("--sizes", default="10,1000", help="entries per measured project")
    args = parser.parse_args()
    setup_django("cairn_bench_admin")

    from django.conf import settings
    from django.contrib.auth.models import Permission
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from tqdm import tqdm

    from knowledge.actors import Actor
    from knowledge.models import Entry, Membership, Project, Role
    from knowledge.services import (
        ProjectFields,
        entries_embed,
        lexeme_stats_refresh,
        project_create,
    )
    from tests.factories import UserFactory

    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    rows, results = [], {}
    for size in [int(s) for s in args.sizes.split(",")]:
        slug = f"bench-admin-{size}"
        person = UserFactory(username=f"bench-admin-{size}")
        person.is_staff = True
        person.save()
        person.user_permissions.add(*Permission.objects.filter(content_type__app_label="knowledge"))
        actor = Actor.for_user(person)
        project = Project.objects.filter(slug=slug).first() or project_create(
            actor=actor, slug=slug, fields=ProjectFields(name=f"Bench admin {size}")
        )
        Membership.objects.get_or_create(
            project=project, user=person, defaults={"role": Role.MAINTAINER}
        )
        fill(actor, slug, size)
        entries_embed(
            entry_ids=list(Entry.objects.filter(project=project).values_list("pk", flat=True))
        )
        lexeme_stats_refresh()
        entry = Entry.objects.filter(project=project, title="Note 3").first()
        two = list(Entry.objects.filter(project=project).order_by("pk")[:2])
        bulk = {"action": "move_entries", "_selected_action": [e.pk for e in two]}
        live = {
            "text": BODY.format(i=size, prev=size - 1) + "- [[Nobody wrote this]]\n",
            "project": str(project.pk),
            "subtopic_path": "area-1",
            "title": "Note 3",
        }
        pages = {
            "index (dashboard)": ("get", "/admin/", None),
            "entry list": ("get", "/admin/knowledge/entry/", None),
            "entry list, tree node": ("get", f"/admin/knowledge/entry/?tree={slug}%2Farea-1", None),
            "entry list, search (hybrid)": (
                "get", "/admin/knowledge/entry/?q=restart+workers+database", None),
            "entry change form": ("get", f"/admin/knowledge/entry/{entry.pk}/change/", None),
            "live preview (POST)": ("post", "/admin/knowledge/entry/preview/live/", live),
            "entry history": ("get", f"/admin/knowledge/entry/{entry.pk}/history/", None),
            "project page (tree)": ("get", f"/admin/knowledge/project/{project.pk}/change/", None),
            "bulk move, reason page": ("post", "/admin/knowledge/entry/", bulk),
        }  # fmt: skip
        client = Client()
        client.force_login(person)
        for name, (method, url, data) in tqdm(pages.items(), desc=f"{size} entries"):
            call = getattr(client, method)
            for _ in range(3):  # warm-up: model load, template cache, connection
                assert call(url, data).status_code == 200, url
            times, queries = [], 0
            for _ in range(args.n):
                with CaptureQueriesContext(connection) as captured:
                    start = time.perf_counter()
                    response = call(url, data)
                    times.append((time.perf_counter() - start) * 1000)
                assert response.status_code == 200, url
                queries = len(captured)
            p50, p95 = percentile(times, 50), percentile(times, 95)
            results.setdefault(name, {})[size] = {"p50_ms": p50, "p95_ms": p95, "queries": queries}
            rows.append([name, size, p50, p95, queries])
    load = os.getloadavg()
    print(
        f"\n{args.n} requests per page, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, "
        f"{os.cpu_count()} CPUs\n"
    )
    print(table(["page", "entries", "p50 ms", "p95 ms", "queries"], rows))
    path = write_json("admin_pages", {"n": args.n, "load_average": load, "pages": results})
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
