"""A shared log many agents append to at once (issue 49): every append waits its turn on the
entry's row and none is lost, however long the entry has grown; its facts keep up too."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from knowledge.models import Entry, Observation
from knowledge.services import EntryFields, entry_upsert
from knowledge.services.entries_edit import entry_edit

WRITERS, APPENDS = 8, 6


@pytest.mark.django_db(transaction=True)
def test_concurrent_appends_to_a_long_shared_entry_keep_every_line(agent, project):
    # Long already: 1,500 lines, 300 of them observations (under the 500 kept), and a fence.
    old = [f"- [note] earlier line {i} #log" if i % 5 == 0 else f"Line {i} of the log." for i in
           range(1500)]  # fmt: skip
    old[700:700] = ["```", "- [note] inside a fence is no observation", "```"]
    log = entry_upsert(
        actor=agent, project="acme", fields=EntryFields(title="Team log", body="\n".join(old))
    ).entry
    errors: list[BaseException] = []
    start = threading.Barrier(WRITERS)

    def writer(n: int) -> None:
        try:
            start.wait()
            for i in range(APPENDS):
                entry_edit(
                    actor=agent,
                    ref=log.pk,
                    operation="append",
                    content=f"- [done] writer {n} step {i} #shared",
                )
        except BaseException as exc:  # reported below, from the test's own thread
            errors.append(exc)
        finally:
            connection.close()  # this thread's own connection

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not errors, errors
    log.refresh_from_db()
    lines = log.body.split("\n")
    added = {
        f"- [done] writer {n} step {i} #shared" for n in range(WRITERS) for i in range(APPENDS)
    }
    assert lines[: len(old)] == old  # the old text as it was
    new = [line for line in lines[len(old) :] if line]
    assert sorted(new) == sorted(added)  # every append once, nothing else
    assert log.version == 1 + len(added)
    for n in range(WRITERS):  # each writer's lines in the order it wrote them
        mine = [line for line in lines if line.startswith(f"- [done] writer {n} ")]
        assert mine == [f"- [done] writer {n} step {i} #shared" for i in range(APPENDS)]
    current = Observation.objects.filter(entry=log, valid_to__isnull=True)
    assert set(current.filter(category="done").values_list("content", flat=True)) == {
        line.removeprefix("- [done] ").removesuffix(" #shared") for line in added
    }
    assert current.filter(category="note").count() == 300  # the fenced line is not one
    assert Entry.objects.get(pk=log.pk).body == log.body
