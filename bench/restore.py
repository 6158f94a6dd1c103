"""Restore benchmark: how long it takes to get Cairn back after losing the database.

    .venv/bin/python bench/restore.py [--entries 10000] [--revisions 50000] [--reuse]

1. build: write --entries entries and --revisions revisions in all (creates, then edits, a few
   moves and deletes) over four projects through the services, in database cairn_bench_restore,
   and drain them into a git mirror (var/bench-restore/source.git). `--reuse` keeps a source of
   the same size from an earlier run.
2. mirror restore: into a new, migrated database (cairn_bench_restore_target), the code
   `manage.py mirror restore --from` runs, verify included.
3. backup / restore: `backup` of the source (pg_dump + git bundle + manifest), then `restore`
   into a new, empty database (no tables: as after deleting var/postgres), checks included.

Prints a table (seconds and revisions per second) and writes JSON to bench/results/.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

from _setup import ROOT, setup_django, table, write_json
from tqdm import tqdm

SOURCE_DB, TARGET_DB = "cairn_bench_restore", "cairn_bench_restore_target"
WORK = ROOT / "var" / "bench-restore"
PROJECTS = [("eng", "public"), ("ops", "internal"), ("money", "confidential"),
            ("people", "restricted")]  # fmt: skip


def admin_connection():
    import psycopg
    from django.conf import settings

    db = settings.DATABASES["default"]
    return psycopg.connect(host=db["HOST"], port=db["PORT"], user=db["USER"],
                           password=db.get("PASSWORD") or None, dbname="postgres",
                           autocommit=True)  # fmt: skip


def use_database(name: str, *, fresh: bool = False) -> None:
    """Point Django's default connection at `name` (dropped and created again when `fresh`)."""
    from django.conf import settings
    from django.db import connection

    connection.close()
    if fresh:
        with admin_connection() as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            admin.execute(f'CREATE DATABASE "{name}"')
    settings.DATABASES["default"]["NAME"] = name  # the connection's settings_dict is this one


def body_of(i: int, edit: int) -> str:
    words = ["restore", "mirror", "ledger", "deploy", "budget", "hiring", "incident", "review"]
    return (
        f"- [fact] entry {i} is about {words[i % len(words)]} #{words[(i + 3) % len(words)]}\n\n"
        + "A paragraph about what was decided, why, and what to check next time. " * 6
        + f"\n\nEdit {edit}.\n"
    )


def build(entries: int, revisions: int, seed: int) -> dict:
    """Write the source through the services and drain it into the source mirror."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    from history import mirror
    from knowledge.actors import Actor
    from knowledge.services import (
        EntryFields,
        ProjectFields,
        entry_delete,
        entry_move,
        entry_update,
        entry_upsert,
        membership_grant,
        project_create,
    )  # fmt: skip

    rng = random.Random(seed)
    users = get_user_model()
    admin = users.objects.create_superuser(username="admin", password="x")
    people = [users.objects.create_user(username=f"user{k}", password="x") for k in range(8)]
    team = Group.objects.create(name="team")
    actors = [Actor.for_user(admin)] + [Actor(user=u, agent="agent:bench") for u in people[:4]]
    for slug, sensitivity in PROJECTS:
        project_create(
            actor=actors[0],
            slug=slug,
            fields=ProjectFields(name=slug.title(), sensitivity=sensitivity),
        )
        for u in people[:4]:
            membership_grant(actor=actors[0], project=slug, user=u, role="editor")
        membership_grant(actor=actors[0], project=slug, group=team, role="viewer")
    t0 = time.perf_counter()
    live: list[int] = []
    made = {"create": 0, "update": 0, "move": 0, "delete": 0}
    with tqdm(total=revisions, desc="build", unit="rev") as bar:
        for i in range(entries):
            slug = PROJECTS[i % len(PROJECTS)][0]
            e = entry_upsert(
                actor=rng.choice(actors), project=slug, subtopic=f"area-{i % 10}/part-{i % 3}",
                fields=EntryFields(title=f"Entry {i}", body=body_of(i, 0), tags=["bench"]),
                reason="first draft",
            ).entry  # fmt: skip
            live.append(e.pk)
            made["create"] += 1
            bar.update(1)
        for n in range(revisions - entries):
            pk = rng.choice(live)
            roll = rng.random()
            actor = rng.choice(actors)
            if roll < 0.97:
                entry_update(actor=actor, ref=pk, fields=EntryFields(body=body_of(pk, n + 1)),
                             reason=f"edit {n}")  # fmt: skip
                made["update"] += 1
            elif roll < 0.99:
                entry_move(actor=actor, ref=pk, subtopic=f"moved/{n % 7}", reason="tidy")
                made["move"] += 1
            else:
                live.remove(pk)
                entry_delete(actor=actors[0], ref=pk, reason="not needed")
                made["delete"] += 1
            bar.update(1)
    write_seconds = time.perf_counter() - t0
    result = mirror.drain()
    return {"mix": made, "write_seconds": write_seconds, "drain_seconds": result.seconds,
            "drained": result.committed}  # fmt: skip


def source_ready(entries: int, revisions: int) -> bool:
    from history import mirror
    from knowledge.models import Entry

    made = Entry.history.filter(history_type="+").count()
    return (
        made == entries
        and Entry.history.count() == revisions
        and not mirror.pending().exists()
        and mirror.open_mirror().head() is not None
    )


def mirror_restore(source: Path, tmp: Path) -> dict:
    from django.conf import settings
    from django.core.management import call_command

    from history.mirror_restore import mirror_restore as restore_from_mirror

    use_database(TARGET_DB, fresh=True)
    call_command("migrate", verbosity=0)
    settings.CAIRN_MIRROR_PATH = str(tmp / "restored.git")
    t0 = time.perf_counter()
    with tqdm(desc="mirror restore", unit="rev") as bar:
        report, problems = restore_from_mirror(source=str(source), progress=bar)
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "revisions": report.revisions, "entries": report.entries,
            "lost": len(report.lost), "verify_differences": len(problems)}  # fmt: skip


def backup_restore(source: Path, tmp: Path) -> dict:
    from django.conf import settings

    from memory_site.backup import backup
    from memory_site.backup import backup_restore as restore_from_backup

    use_database(SOURCE_DB)
    settings.CAIRN_MIRROR_PATH = str(source)
    snap = tmp / "snapshot"
    steps: dict[str, float] = {}

    def timer(prefix: str):
        last = {"name": None, "t": time.perf_counter()}

        def step(name: str) -> None:
            now = time.perf_counter()
            if last["name"]:
                key = f"{prefix}: {last['name']}"
                steps[key] = steps.get(key, 0.0) + now - last["t"]
            last.update(name=name, t=now)

        return step, lambda: step("")

    step, done = timer("backup")
    t0 = time.perf_counter()
    manifest = backup(snap, step=step)
    done()
    backup_seconds = time.perf_counter() - t0
    use_database(TARGET_DB, fresh=True)  # no tables at all, as after deleting var/postgres
    settings.CAIRN_MIRROR_PATH = str(tmp / "from-backup.git")
    step, done = timer("restore")
    t0 = time.perf_counter()
    result = restore_from_backup(snap, drop_old=True, step=step)
    done()
    restore_seconds = time.perf_counter() - t0
    return {"backup_seconds": backup_seconds, "restore_seconds": restore_seconds,
            "bytes": manifest["bytes"], "revisions": manifest["counts"]["revisions"],
            "problems": result.problems, "steps": steps}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=10000)
    parser.add_argument("--revisions", type=int, default=50000)
    parser.add_argument("--reuse", action="store_true", help="keep a source of the same size")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    if args.revisions < args.entries:
        sys.exit("--revisions counts every revision, creates included: at least --entries.")
    source = WORK / "source.git"
    os.environ["CAIRN_MIRROR_PATH"] = str(source)
    setup_django(SOURCE_DB)
    from django.core.management import call_command

    built: dict = {"reused": True}
    if not (args.reuse and source_ready(args.entries, args.revisions)):
        shutil.rmtree(source, ignore_errors=True)
        use_database(SOURCE_DB, fresh=True)
        call_command("migrate", verbosity=0)
        built = build(args.entries, args.revisions, args.seed)
    with tempfile.TemporaryDirectory(prefix="cairn-bench-restore-") as work:
        tmp = Path(work)
        mirrored = mirror_restore(source, tmp)
        backed = backup_restore(source, tmp)
    use_database(SOURCE_DB)
    with admin_connection() as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{TARGET_DB}" WITH (FORCE)')

    revs = mirrored["revisions"]
    rows = [
        ["mirror restore (replay + derive + verify)", revs, mirrored["seconds"],
         revs / mirrored["seconds"], f"{mirrored['verify_differences']} differences"],
        ["backup (drain + pg_dump + git bundle)", backed["revisions"], backed["backup_seconds"],
         backed["revisions"] / backed["backup_seconds"], f"{backed['bytes'] / 1e6:.1f} MB"],
        ["restore (pg_restore + mirror + checks)", backed["revisions"],
         backed["restore_seconds"], backed["revisions"] / backed["restore_seconds"],
         f"{len(backed['problems'])} problems"],
    ]  # fmt: skip
    rows += [[f"  {name}", "", s, "", ""] for name, s in backed["steps"].items()]
    print(f"\n{args.entries} entries, {revs} revisions, load average {os.getloadavg()[0]:.1f}")
    print(table(["what", "revisions", "seconds", "revisions/s", "check"], rows))
    path = write_json("restore", {"args": vars(args), "build": built, "mirror_restore": mirrored,
                                  "backup_restore": backed})  # fmt: skip
    print(f"\nwrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
