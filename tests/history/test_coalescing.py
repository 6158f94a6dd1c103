"""Under load one queued task does the work of many writes (knowledge/services/background.py):
a write queues its embedding and mirror tasks only when none is queued and not yet started."""

import json

import pytest

from knowledge.services import EntryFields, background, entry_edit, entry_upsert
from memory_site.celery import app

pytestmark = pytest.mark.django_db


def queued() -> list[str]:
    with app.connection_for_write() as conn:
        messages = conn.default_channel.client.lrange("celery", 0, -1)
    return sorted(json.loads(m)["headers"]["task"] for m in messages)


def write(actor, title: str, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        return entry_upsert(
            actor=actor, project="acme", fields=EntryFields(title=title, body="text")
        ).entry


def test_many_writes_queue_one_task_of_each_kind_until_it_starts(
    broker, actor, project, django_capture_on_commit_callbacks
):
    for n in range(5):
        entry = write(actor, f"Note {n}", django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=True):
        entry_edit(actor=actor, ref=entry.pk, operation="append", content="more")
    assert queued() == [background.DRAIN, background.EMBED]

    background.task_started(background.EMBED)  # a worker takes the embedding task
    write(actor, "Note after", django_capture_on_commit_callbacks)
    assert queued() == [background.DRAIN, background.EMBED, background.EMBED]


def test_a_lost_task_only_delays_the_next_one(
    broker, actor, project, django_capture_on_commit_callbacks
):
    write(actor, "First", django_capture_on_commit_callbacks)
    with app.connection_for_write() as conn:
        conn.default_channel.queue_purge("celery")  # the broker lost the queued tasks
        client = conn.default_channel.client
        ttl = client.ttl(background.wake_key(background.EMBED))
    assert 0 < ttl <= background.WAKE_SECONDS  # the mark expires on its own
    write(actor, "Second", django_capture_on_commit_callbacks)
    assert queued() == []  # within that time a write relies on the mark (and the sweeps)

    background.tasks_started()  # a worker starting clears the marks and sweeps everything
    write(actor, "Third", django_capture_on_commit_callbacks)
    assert queued() == [background.DRAIN, background.EMBED]


def test_an_embedding_run_left_with_work_queues_one_more_task(
    broker, actor, project, settings, django_capture_on_commit_callbacks
):
    """After a burst no write queues a task: a run that leaves waiting entries to other
    processes asks for a helper, one cut short by its time queues its continuation, and a
    run that took everything, alone, queues nothing (the local model embeds)."""
    from knowledge.models import Entry
    from knowledge.services.embedding_queue import entries_embed_pending

    def backlog(prefix: str) -> None:
        settings.CAIRN_BACKGROUND_TASKS = False  # written while no write queues tasks
        for n in range(3):
            write(actor, f"{prefix} {n}", django_capture_on_commit_callbacks)
        settings.CAIRN_BACKGROUND_TASKS = True

    def waiting() -> int:
        return Entry.objects.filter(embed_pending_since__isnull=False).count()

    def taken() -> None:  # a worker took the queued task
        background.task_started(background.EMBED)
        with app.connection_for_write() as conn:
            conn.default_channel.queue_purge("celery")

    backlog("Alone")
    entries_embed_pending(batch_size=1, workers=1)
    assert waiting() == 0 and queued() == []  # one process took it all: nothing to ask

    backlog("Cut short")
    entries_embed_pending(batch_size=1, workers=1, max_seconds=0)
    assert waiting() == 2 and queued() == [background.EMBED]  # its continuation
    entries_embed_pending(batch_size=1, workers=1, max_seconds=0)
    assert waiting() == 1 and queued() == [background.EMBED]  # still one: coalesced
    taken()
    entries_embed_pending(batch_size=1, workers=1, max_seconds=0)
    assert waiting() == 0 and queued() == []  # cut short, but nothing is left

    backlog("Shared")
    entries_embed_pending(batch_size=1, workers=2)
    assert waiting() == 0 and queued() == [background.EMBED]  # the helper it asked for
