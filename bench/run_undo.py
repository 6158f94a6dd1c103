"""Undoing an agent's run: its preview, the undo, and the undo of the undo, as a run grows.

    .venv/bin/python bench/run_undo.py [--writes 200,1000] [--sittings 3]

Runs in a database of its own, `cairn_bench_runs` on the configured server (created and
migrated when missing), in a throw-away project per size. Per size, an agent's token writes
that many times (half new entries, then edits, field changes and deletes of a person's
entries), the person changes a tenth of what it touched, then the run's page (the preview) is
read and the run undone and redone, each timed, with the statements they sent and the time
spent waiting on them. The undo is one transaction; the background work a commit queues
(vectors, the mirror) is switched off, as in bench/write_path.py: this is the undo itself.
"""

from __future__ import annotations

import argparse
import os
import time

from _common import SqlCount, print_table, write_json
from _setup import setup_django


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--writes", default="200", help="run sizes in writes, comma-separated")
    parser.add_argument("--sittings", type=int, default=3, help="runs undone per size")
    args = parser.parse_args()
    sizes = [int(n) for n in args.writes.split(",")]
    setup_django("cairn_bench_runs")

    from django.db import connection

    sql = SqlCount()

    def timed(step):
        sql.reset()
        started, cpu = time.perf_counter(), time.process_time()
        with connection.execute_wrapper(sql):
            result = step()
        return result, {
            "seconds": time.perf_counter() - started,
            "cpu_seconds": time.process_time() - cpu,
            "statements": sql.statements,
            "sql_wait_seconds": sql.seconds,
        }

    rows, results = [], {}
    for size in sizes:
        for sitting in range(args.sittings):
            measured = one_run(size, timed)
            results.setdefault(str(size), []).append(measured)
            for step, m in measured["steps"].items():
                rows.append([size, sitting + 1, step, measured["entries"], m["seconds"],
                             m["cpu_seconds"], m["statements"], m["sql_wait_seconds"],
                             m.get("done", "")])  # fmt: skip
    print_table(
        ["writes", "sitting", "step", "entries", "s", "CPU s", "statements", "SQL wait s",
         "what it did"],
        rows,
    )  # fmt: skip
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs")
    write_json("run_undo", {"sizes": results, "load_average": load})


def one_run(writes: int, timed) -> dict:
    """A person's entries, an agent's run of `writes` writes over them, the person's changes
    after it; then the preview, the undo and the redo, each timed."""
    from django.contrib.auth import get_user_model

    from knowledge.actors import Actor
    from knowledge.models import Entry, Membership, Project, Role
    from knowledge.reads.run_preview import run_preview
    from knowledge.selectors.runs import runs_list
    from knowledge.services import (
        EntryFields,
        ProjectFields,
        entry_delete,
        entry_update,
        entry_upsert,
        project_create,
        run_undo,
        token_create,
    )

    users = get_user_model().objects
    person, _ = users.get_or_create(username="bench-person")
    owner, _ = users.get_or_create(username="bench-agent-owner")
    slug = f"bench-runs-{time.time_ns()}"
    me = Actor.for_user(person)
    project = project_create(actor=me, slug=slug, fields=ProjectFields(name=slug))
    Membership.objects.get_or_create(project=project, user=owner, defaults={"role": Role.EDITOR})
    token = token_create(actor=Actor.system(), user=owner, name=slug, agent_label="agent:bench")
    agent = Actor(user=owner, agent="agent:bench", token_id=token.token.pk)
    body = "\n".join(f"Line {n} of the person's note about the rollout." for n in range(40))
    touched = writes // 2  # the other half are new entries
    theirs = [
        entry_upsert(actor=me, project=slug, subtopic=f"area-{i % 5}",
                     fields=EntryFields(title=f"Note {i}", body=body, tags=["team"])).entry
        for i in range(touched)
    ]  # fmt: skip
    for i in range(writes - touched):
        entry_upsert(actor=agent, project=slug, subtopic="agent",
                     fields=EntryFields(title=f"Agent {i}", body=body, tags=["agent"]))  # fmt: skip
    for i, entry in enumerate(theirs):
        if i % 10 == 9:
            entry_delete(actor=agent, ref=entry.pk, reason="stale")
        elif i % 10 == 8:
            entry_update(actor=agent, ref=entry.pk, fields=EntryFields(status="open"))
        else:
            entry_update(actor=agent, ref=entry.pk, fields=EntryFields(
                body=body.replace("Line 3 ", "Line three ")))  # fmt: skip
    for entry in theirs[: max(1, touched // 10)]:  # the person's changes after the run
        if Entry.objects.filter(pk=entry.pk).exists():
            entry_update(
                actor=me,
                ref=entry.pk,
                fields=EntryFields(
                    body=body.replace("Line 30 ", "Line thirty ").replace("Line 3 ", "Line three ")
                ),
            )
    [run] = [r for r in runs_list(me, project=slug, limit=5) if r.agent == "agent:bench"]
    assert run.revisions == writes, (run.revisions, writes)
    page, preview = timed(lambda: run_preview(me, run.key))
    report, undo = timed(lambda: run_undo(actor=me, run=run.key, reason="bench",
                                          expected=page["expected"]))  # fmt: skip
    undo["done"] = report.summary()
    again, redo = timed(lambda: run_undo(actor=me, run=report.undo_run, reason="bench again"))
    redo["done"] = again.summary()
    # Benchmark clean-up, not an application write: drop the throw-away project.
    Entry.objects.filter(project__slug=slug).delete()
    Project.objects.filter(slug=slug).delete()
    return {
        "writes": writes,
        "entries": run.entries,
        "steps": {"preview": preview, "undo": undo, "undo the undo": redo},
    }


if __name__ == "__main__":
    main()
