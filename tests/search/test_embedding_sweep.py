"""The embedding sweep: every entry whose vectors are missing or stale is embedded, in batches,
so the backlog /readyz reports reaches 0 on its own after lost embed tasks."""

import pytest
from django.db import connections

from knowledge.actors import Actor
from knowledge.search.providers import get_provider
from knowledge.selectors.embeddings import stale_embeddings
from knowledge.services import EntryFields, entry_update, entry_upsert
from knowledge.services.embedding_queue import SWEEP_LOCK_KEY, entries_embed_stale
from knowledge.services.embeddings import embedding_key
from memory_site import health
from tests.factories import EntryFactory
from tests.history.conftest import broker  # noqa: F401  (the real embedded broker)
from tests.history.test_worker import Worker, wait_until


def backlog() -> int:
    return health.snapshot(fresh=True)["embeddings"]["backlog"]


@pytest.mark.django_db
def test_the_sweep_embeds_every_stale_entry_in_batches(
    actor, project, http_provider_settings, fake_server
):
    entries = [
        EntryFactory(project=project, title=f"Café n°{i}", body=f"note {i}") for i in range(5)
    ]
    assert backlog() == 5
    assert entries_embed_stale(batch_size=2) == {"embedded": 5}
    assert len(fake_server.requests) == 3  # 2 + 2 + 1 entries per model call
    assert backlog() == 0 and not stale_embeddings(model_name=get_provider().name).exists()
    entries[0].refresh_from_db()
    assert entries[0].embedded_hash == embedding_key(entries[0])  # the SQL key is the Python one

    entry_update(actor=actor, ref=entries[3].pk, fields=EntryFields(title="Renamed"))
    assert backlog() == 1
    assert entries_embed_stale(batch_size=2) == {"embedded": 1}
    assert entries_embed_stale(batch_size=2) == {}  # nothing left: no model call
    assert len(fake_server.requests) == 4


@pytest.mark.django_db
def test_a_sweep_with_a_time_budget_stops_after_the_batch_that_used_it(
    project, http_provider_settings
):
    for i in range(3):
        EntryFactory(project=project, title=f"Note {i}", body="x")
    assert entries_embed_stale(batch_size=1, max_seconds=0) == {"embedded": 1}
    assert backlog() == 2  # left for the next sweep
    assert entries_embed_stale(batch_size=1) == {"embedded": 2}


@pytest.mark.django_db
def test_a_model_change_makes_every_entry_stale(project, http_provider_settings):
    EntryFactory(project=project, title="Kettle", body="Descale it.")
    assert entries_embed_stale() == {"embedded": 1}
    http_provider_settings.CAIRN_EMBEDDING_MODEL = "another-model"
    assert backlog() == 1
    assert entries_embed_stale() == {"embedded": 1}


@pytest.mark.django_db
def test_a_second_sweep_while_one_runs_does_nothing(project, http_provider_settings, fake_server):
    EntryFactory(project=project, title="Kettle", body="Descale it.")
    other = connections.create_connection("default")  # another worker's session
    try:
        with other.cursor() as cur:
            cur.execute("SELECT pg_advisory_lock(%s)", [SWEEP_LOCK_KEY])
        assert entries_embed_stale() == {"busy": 1}
        assert fake_server.requests == [] and backlog() == 1
        with other.cursor() as cur:  # now, not when the server gets round to the closed session
            cur.execute("SELECT pg_advisory_unlock(%s)", [SWEEP_LOCK_KEY])
    finally:
        other.close()
    assert entries_embed_stale() == {"embedded": 1}


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("broker")
def test_entries_written_while_no_worker_ran_are_embedded_by_the_sweep(
    tmp_path, monkeypatch, user, project, settings
):
    actor = Actor.for_user(user)
    settings.CAIRN_BACKGROUND_TASKS = False  # every embed task is lost
    for i in range(3):
        entry_upsert(
            actor=actor,
            project="acme",
            fields=EntryFields(title=f"Seeded {i}", body="written offline"),
        )
    assert backlog() == 3
    worker = Worker(tmp_path, tmp_path / "mirror.git")
    worker.env["CAIRN_EMBED_SWEEP_SECONDS"] = "1"
    worker.start()
    try:
        wait_until(lambda: backlog() == 0, 120, worker, "the sweep at worker start")
        # worker_ready fires once: what is written (and lost) now is the beat sweep's.
        entry_upsert(
            actor=actor, project="acme", fields=EntryFields(title="Later", body="also lost")
        )
        assert backlog() == 1
        wait_until(lambda: backlog() == 0, 60, worker, "the periodic sweep")
    finally:
        worker.stop()
