"""Access-scoping benchmark: what visible_projects costs on reads, per kind of actor.

    .venv/bin/python bench/access_scoping.py [--projects 1000] [--entries 20000] [--n 200]

Builds a throw-away organisation (projects of every sensitivity, groups, direct and group
memberships, entries), then times three reads for a superuser (no filter), a member of many
projects through groups and directly, and a user with no membership: the visible project ids,
the 50 most recent visible entries, and the count of visible entries. Removes it all at the end.
"""

from __future__ import annotations

import argparse
import random
import time

from _common import percentile, print_table, setup_django, write_json


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--projects", type=int, default=1000)
    parser.add_argument("--entries", type=int, default=20000)
    parser.add_argument("--n", type=int, default=200, help="timed repetitions per read")
    args = parser.parse_args()
    setup_django()

    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from django.db import connection

    from knowledge.actors import Actor
    from knowledge.models import Entry, Membership, Project, Role, Sensitivity
    from knowledge.selectors import visible_entries, visible_projects
    from knowledge.selectors.listings import entry_list

    rng = random.Random(6)
    tag = f"bench-acl-{int(time.time())}"
    User = get_user_model()
    # Benchmark fixtures, not application writes: bulk rows straight into the tables.
    projects = Project.objects.bulk_create(
        Project(slug=f"{tag}-{i}", name=f"{tag} {i}", sensitivity=Sensitivity.values[i % 4])
        for i in range(args.projects)
    )
    groups = Group.objects.bulk_create(Group(name=f"{tag}-g{i}") for i in range(50))
    root = User.objects.create(username=f"{tag}-root", is_superuser=True)
    member = User.objects.create(username=f"{tag}-member")
    loner = User.objects.create(username=f"{tag}-loner")
    member.groups.set(groups[:5])
    memberships = [
        Membership(project=p, group=rng.choice(groups), role=rng.choice(Role.values))
        for p in rng.sample(projects, min(len(projects), 400))
    ]
    memberships += [
        Membership(project=p, user=member, role=rng.choice(Role.values))
        for p in rng.sample(projects, min(len(projects), 50))
    ]
    Membership.objects.bulk_create(memberships, ignore_conflicts=True)
    Entry.objects.bulk_create(
        (
            Entry(
                project=rng.choice(projects),
                title=f"{tag} entry {i}",
                slug=f"e{i}",
                body="text",
                content_hash="x",
            )
            for i in range(args.entries)
        ),
        batch_size=2000,
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE knowledge_project, knowledge_membership, knowledge_entry")

    actors = {
        "superuser": Actor.for_user(root),
        "member (50 direct + 5 groups)": Actor.for_user(member),
        "no membership": Actor.for_user(loner),
    }
    reads = {
        "visible project ids": lambda a: list(visible_projects(a).values_list("pk", flat=True)),
        "50 recent entries": lambda a: list(entry_list(a).order_by("-updated_at")[:50]),
        "count visible entries": lambda a: visible_entries(a).count(),
    }
    rows, results = [], []
    for actor_name, actor in actors.items():
        for read_name, read in reads.items():
            read(actor)  # warm up
            timings = []
            for _ in range(args.n):
                t0 = time.perf_counter()
                read(actor)
                timings.append((time.perf_counter() - t0) * 1000)
            projects_seen = visible_projects(actor).count()
            p50, p95 = percentile(timings, 50), percentile(timings, 95)
            rows.append([actor_name, read_name, projects_seen, p50, p95])
            results.append(
                {
                    "actor": actor_name,
                    "read": read_name,
                    "visible_projects": projects_seen,
                    "p50_ms": p50,
                    "p95_ms": p95,
                }
            )

    # Raw deletes: no history rows for fixtures that were never revisions.
    Membership.objects.filter(project__slug__startswith=tag)._raw_delete("default")
    Entry.objects.filter(project__slug__startswith=tag)._raw_delete("default")
    Project.objects.filter(slug__startswith=tag)._raw_delete("default")
    Group.objects.filter(name__startswith=tag).delete()
    User.objects.filter(username__startswith=tag).delete()

    print(
        f"\n{args.projects} projects (all four sensitivities), {args.entries} entries, "
        f"{len(memberships)} memberships, n={args.n} per read\n"
    )
    print_table(["actor", "read", "projects visible", "p50 ms", "p95 ms"], rows)
    write_json(
        "access_scoping",
        {
            "projects": args.projects,
            "entries": args.entries,
            "memberships": len(memberships),
            "n": args.n,
            "results": results,
        },
    )


if __name__ == "__main__":
    main()
