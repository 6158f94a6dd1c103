"""Waiting entries are embedded in batches, oldest first, by whichever worker process is free:
per-entry advisory locks keep two processes off the same entry without either waiting."""

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.db import connection, connections

from knowledge.models import Entry, EntryChunk
from knowledge.services import background
from knowledge.services.embedding_queue import ENTRY_LOCK_SPACE, entries_embed_pending
from knowledge.tasks import embed_entry
from memory_site import embedded
from memory_site.celery import app
from tests.factories import EntryFactory

ROOT = Path(__file__).resolve().parent.parent.parent


def texts_sent(fake_server) -> list[str]:
    return [t for request in fake_server.requests for t in request["body"]["input"]]


def waiting() -> int:
    return Entry.objects.filter(embed_pending_since__isnull=False).count()


@pytest.mark.django_db
def test_waiting_entries_are_embedded_oldest_first_a_batch_per_model_call(
    project, http_provider_settings, fake_server
):
    entries = [EntryFactory(project=project, title=f"Note {i}", body=f"body {i}") for i in range(5)]
    run = entries_embed_pending(batch_size=2)
    assert dict(run.counts) == {"embedded": 5} and waiting() == 0
    assert [len(r["body"]["input"]) for r in fake_server.requests] == [2, 2, 1]
    assert [t.split("\n")[0] for t in texts_sent(fake_server)] == [e.title for e in entries]
    assert dict(entries_embed_pending(batch_size=2).counts) == {}  # nothing waits: no call
    assert len(fake_server.requests) == 3


@pytest.mark.django_db
def test_a_short_queue_is_shared_by_the_worker_processes(
    project, http_provider_settings, fake_server
):
    for i in range(6):
        EntryFactory(project=project, title=f"Note {i}", body=f"body {i}")
    # Two processes: each claims at most half of what waits, so the other has work too.
    entries_embed_pending(batch_size=8, workers=2)
    assert [len(r["body"]["input"]) for r in fake_server.requests] == [3, 2, 1]


@pytest.mark.django_db
def test_the_task_embeds_its_entry_and_the_others_waiting(
    project, http_provider_settings, fake_server, settings
):
    settings.CAIRN_EMBED_BATCH, settings.CAIRN_WORKER_CONCURRENCY = 8, 1
    older = [EntryFactory(project=project, title=f"Older {i}", body="x") for i in range(3)]
    mine = EntryFactory(project=project, title="Mine", body="y")
    assert embed_entry(mine.pk) == "embedded"
    assert len(fake_server.requests) == 1  # one model call for all four
    assert texts_sent(fake_server)[0].startswith("Mine")  # the task's own entry first
    assert waiting() == 0
    for entry in older:
        assert embed_entry(entry.pk) == "unchanged"  # their tasks find nothing to do
    assert len(fake_server.requests) == 1
    gone = EntryFactory(project=project, title="Gone", body="z")
    gone_pk = gone.pk
    Entry.objects.filter(pk=gone_pk).delete()
    assert embed_entry(gone_pk) == "missing"


@pytest.mark.django_db
def test_an_entry_another_process_holds_is_skipped_not_waited_for(
    project, http_provider_settings, fake_server
):
    held, _ = (EntryFactory(project=project, title=t, body="b") for t in ("Held", "Free"))
    other = connections.create_connection("default")  # another worker's session
    try:
        with other.cursor() as cur:
            cur.execute("SELECT pg_advisory_lock(%s, %s)", [ENTRY_LOCK_SPACE, held.pk])
        run = entries_embed_pending(batch_size=8, first=held.pk)
        assert run.first == "elsewhere" and dict(run.counts) == {"embedded": 1}
        assert texts_sent(fake_server) == ["Free\nb"]
        assert list(Entry.objects.filter(embed_pending_since__isnull=False)) == [held]
        with other.cursor() as cur:
            cur.execute("SELECT pg_advisory_unlock(%s, %s)", [ENTRY_LOCK_SPACE, held.pk])
    finally:
        other.close()
    assert dict(entries_embed_pending(batch_size=8).counts) == {"embedded": 1}
    with connection.cursor() as cur:  # every entry lock was released
        # pg_locks is the whole server's: the other xdist worker's database has locks of its own.
        cur.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND database = "
            "(SELECT oid FROM pg_database WHERE datname = current_database())"
        )
        assert cur.fetchone()[0] == 0


@pytest.fixture
def prefork_worker(transactional_db, tmp_path, fake_server, http_provider_settings):
    """The embedded broker and a real Celery worker of two processes (prefork, as `serve`
    starts it) embedding with the fake server, started on demand."""
    started_broker = embedded.start_broker()
    log_path = tmp_path / "worker.log"
    log = open(log_path, "wb")  # noqa: SIM115
    db = connection.settings_dict
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}@/{db['NAME']}?host={db['HOST']}&port={db['PORT']}",
        "CAIRN_EMBEDDING_PROVIDER": "http",
        "CAIRN_EMBEDDING_URL": fake_server.url,
        "CAIRN_EMBEDDING_MODEL": "fake-embed",
        "CAIRN_EMBED_BATCH": "3",
    }
    procs = []

    def start(processes: int = 2, **settings: str):
        """No beat: the periodic sweep never runs, only the one at worker start."""
        args = [sys.executable, "-m", "celery", "-A", "memory_site", "worker",
                "--concurrency", str(processes), "--loglevel", "INFO", "--without-gossip",
                "--without-mingle", "--without-heartbeat", "-Q", "celery", "--purge"]  # fmt: skip
        proc = subprocess.Popen(
            args,
            cwd=ROOT,
            env={**env, "CAIRN_WORKER_CONCURRENCY": str(processes), **settings},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        proc.log_path = log_path
        procs.append(proc)
        return proc

    yield start
    for proc in procs:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
    log.close()
    if started_broker is not None:
        embedded.stop_broker()


def test_two_worker_processes_embed_every_waiting_entry_once_in_batches(
    prefork_worker, project, fake_server, settings
):
    settings.CAIRN_BACKGROUND_TASKS = False  # a backlog: written with no worker
    entries = [
        EntryFactory(project=project, title=f"Backlog {i}", body=f"text {i}") for i in range(12)
    ]
    settings.CAIRN_BACKGROUND_TASKS = True
    worker = prefork_worker()
    # Their tasks (one per write, as a busy server queues them) race the start-up sweep.
    entries += [EntryFactory(project=project, title=f"New {i}", body=f"t {i}") for i in range(6)]
    deadline = time.monotonic() + 120
    while waiting() and time.monotonic() < deadline:
        assert worker.poll() is None, worker.log_path.read_text(errors="replace")[-3000:]
        time.sleep(0.2)
    log = worker.log_path.read_text(errors="replace")
    assert waiting() == 0, log[-3000:]
    sent = texts_sent(fake_server)
    assert sorted(sent) == sorted(f"{e.title}\n{e.body}" for e in entries), log[-3000:]  # once
    assert len(fake_server.requests) < len(entries)  # batched across entries
    assert max(len(r["body"]["input"]) for r in fake_server.requests) == 3
    assert EntryChunk.objects.count() == len(entries)


def wait_until(done, worker, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not done() and time.monotonic() < deadline:
        assert worker.poll() is None, worker.log_path.read_text(errors="replace")[-3000:]
        time.sleep(0.1)


def queued_embeds() -> int:
    with app.connection_for_write() as conn:
        messages = conn.default_channel.client.lrange("celery", 0, -1)
    return sum(json.loads(m)["headers"]["task"] == background.EMBED for m in messages)


def test_a_run_stopped_on_time_queues_its_continuation_until_nothing_waits(
    prefork_worker, project, fake_server, settings
):
    # Every run stops after its first model call (CAIRN_EMBED_SWEEP_SECONDS=0), one process
    # (no helper is asked for), no beat: only the runs' continuations can carry the rest on.
    worker = prefork_worker(processes=1, CAIRN_EMBED_SWEEP_SECONDS="0")
    swept = re.compile(r"embedding_sweep\[[^]]*\] succeeded")
    wait_until(lambda: swept.search(worker.log_path.read_text(errors="replace")), worker)
    settings.CAIRN_BACKGROUND_TASKS = False  # written together: one task for all of them
    entries = [EntryFactory(project=project, title=f"Burst {i}", body=f"b {i}") for i in range(11)]
    settings.CAIRN_BACKGROUND_TASKS = True
    entries.append(EntryFactory(project=project, title="Last write", body="the end"))
    most_queued = 0

    def done() -> bool:
        nonlocal most_queued
        most_queued = max(most_queued, queued_embeds())
        return not waiting()

    wait_until(done, worker)
    log = worker.log_path.read_text(errors="replace")
    assert waiting() == 0, log[-3000:]
    sent = texts_sent(fake_server)
    assert sorted(sent) == sorted(f"{e.title}\n{e.body}" for e in entries), log[-3000:]  # once
    assert len(fake_server.requests) == 4  # 12 entries, 3 per run: the write's task + 3 more
    assert most_queued <= 1  # one continuation at a time, not a task per entry


def test_an_idle_worker_process_joins_a_run_that_leaves_entries_waiting(
    prefork_worker, project, fake_server, settings
):
    settings.CAIRN_BACKGROUND_TASKS = False  # a backlog, and no write after it to queue tasks
    entries = [EntryFactory(project=project, title=f"Old {i}", body=f"o {i}") for i in range(18)]
    fake_server.delay = 0.5  # 6 model calls of 3: one process alone needs 3 s
    # Runs never stop on time: the start-up sweep takes the whole backlog unless it asks the
    # other (idle) process to help.
    worker = prefork_worker(processes=2, CAIRN_EMBED_SWEEP_SECONDS="600")
    wait_until(lambda: not waiting(), worker)
    log = worker.log_path.read_text(errors="replace")
    assert waiting() == 0, log[-3000:]
    assert fake_server.most_in_flight == 2, log[-3000:]  # both processes were embedding
    sent = texts_sent(fake_server)
    assert sorted(sent) == sorted(f"{e.title}\n{e.body}" for e in entries), log[-3000:]  # once


def sections(*texts: str) -> str:
    # Each section is a chunk of its own (CAIRN_CHUNK_WORDS is 200).
    return "\n\n".join(f"## Part {i}\n\n" + (text + " ") * 60 for i, text in enumerate(texts))


@pytest.mark.django_db
def test_every_waiting_entry_gets_its_first_chunk_before_any_entry_gets_the_rest(
    project, http_provider_settings, fake_server
):
    entries = [
        EntryFactory(project=project, title=f"Log {i}", body=sections(f"first {i}", f"second {i}"))
        for i in range(3)
    ]
    run = entries_embed_pending(batch_size=8)
    assert dict(run.counts) == {"first": 3, "embedded": 3} and waiting() == 0
    # One call of the three first chunks (searchable by meaning after it), then the rests.
    calls = [
        [t.split("\n")[1].split()[0] for t in request["body"]["input"]]
        for request in fake_server.requests
    ]
    assert calls == [["first"] * 3, ["second"] * 3]
    # The first chunks were not embedded again with the rest: each chunk was read once.
    assert len(set(texts_sent(fake_server))) == len(texts_sent(fake_server)) == 6
    for entry in entries:
        chunks = EntryChunk.objects.filter(entry=entry).order_by("ordinal")
        assert [c.text.split()[0] for c in chunks] == ["first", "second"]
        entry.refresh_from_db()
        assert entry.embedded_hash and entry.embed_pending_since is None


@pytest.mark.django_db
def test_an_entry_with_only_its_first_chunk_is_found_by_meaning_and_still_waits(
    project, http_provider_settings, fake_server
):
    from knowledge.services.embeddings import entries_embed

    body = sections("alpha one", "beta two", "gamma three")
    entry = EntryFactory(project=project, title="Log", body=body)
    assert entries_embed(entry_ids=[entry.pk], first_chunk_first=True) == {entry.pk: "first"}
    assert list(EntryChunk.objects.filter(entry=entry).values_list("ordinal", flat=True)) == [0]
    entry.refresh_from_db()
    assert entry.embed_pending_since is not None and not entry.embedded_hash  # the rest waits
    assert entries_embed(entry_ids=[entry.pk], first_chunk_first=True) == {entry.pk: "embedded"}
    assert EntryChunk.objects.filter(entry=entry).count() == 3
    assert len(texts_sent(fake_server)) == 3  # 1 + 2: the first chunk was kept, not re-read
