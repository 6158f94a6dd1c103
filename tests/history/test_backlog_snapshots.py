"""The backlogs' history (history/snapshots.py): one snapshot per interval, pruned after the
retention, and the dashboard's plots drawn from it, scoped to the reader, at a query count that
does not grow with the snapshots or the entries."""

from __future__ import annotations

import datetime as dt

import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from history.models import BacklogSnapshot, ParkedRevision
from history.snapshots import backlog_snapshot_take
from history.tasks import backlog_snapshot
from knowledge.actors import Actor
from knowledge.models import HistoricalEntry, Membership, Role
from knowledge.services import EntryFields, entry_upsert
from tests.factories import ProjectFactory, StaffFactory, UserFactory

pytestmark = pytest.mark.django_db
SYSTEM = Actor.system()


def _open(actor, project: str, n: int, start: int = 0) -> None:
    for i in range(start, start + n):
        fields = EntryFields(title=f"Call back {i}", body=f"x {i}", status="open")
        entry_upsert(actor=actor, project=project, fields=fields)


@pytest.fixture
def lead(db):
    return StaffFactory(username="lead")


@pytest.fixture
def two_projects(lead):
    for slug in ("acme", "hidden"):
        project = ProjectFactory(slug=slug, name=slug.title(), sensitivity="confidential")
        Membership.objects.create(project=project, user=lead, role=Role.EDITOR)
    return Actor.for_user(lead)


def test_one_snapshot_per_interval_with_the_counts_and_old_ones_pruned(two_projects, settings):
    settings.CAIRN_BACKLOG_SNAPSHOT_SECONDS = 3600
    settings.CAIRN_BACKLOG_SNAPSHOT_KEEP_DAYS = 90
    _open(two_projects, "acme", 2)
    _open(two_projects, "hidden", 1, start=10)
    revision = HistoricalEntry.objects.order_by("history_id").first()
    ParkedRevision.objects.create(revision=revision, entry_id=revision.id, error="boom")
    old = BacklogSnapshot.objects.create(
        taken_at=timezone.now() - dt.timedelta(days=91), mirror_pending=0,
        mirror_lag_seconds=0, parked=0,
    )  # fmt: skip
    now = timezone.now().replace(minute=10)
    taken = backlog_snapshot_take(actor=SYSTEM, now=now)
    assert taken is not None and taken.taken_at == now.replace(minute=0, second=0, microsecond=0)
    acme, hidden = (ProjectFactory._meta.model.objects.get(slug=s).pk for s in ("acme", "hidden"))
    assert taken.open_by_project == {str(acme): 2, str(hidden): 1}
    assert taken.parked == 1 and taken.mirror_pending == 2  # three revisions, one parked
    assert taken.mirror_lag_seconds >= 0 and taken.embedding_backlog is not None
    assert not BacklogSnapshot.objects.filter(pk=old.pk).exists()  # past the 90 days
    # Later in the same hour: nothing new; the next hour: a second row.
    assert backlog_snapshot_take(actor=SYSTEM, now=now.replace(minute=50)) is None
    assert BacklogSnapshot.objects.count() == 1
    assert backlog_snapshot_take(actor=SYSTEM, now=now + dt.timedelta(hours=1)) is not None
    assert BacklogSnapshot.objects.count() == 2


def test_the_task_records_once_and_beat_runs_it_on_its_interval(two_projects):
    assert settings.CELERY_BEAT_SCHEDULE["history-backlog-snapshot"] == {
        "task": "history.tasks.backlog_snapshot",
        "schedule": settings.CAIRN_BACKLOG_SNAPSHOT_SECONDS,
    }
    assert backlog_snapshot() is True
    assert backlog_snapshot() is False  # the same interval
    assert BacklogSnapshot.objects.count() == 1


def _snapshot(days_ago: int, open_by_project: dict, pending: int = 0) -> None:
    at = timezone.now() - dt.timedelta(days=days_ago)
    BacklogSnapshot.objects.create(
        taken_at=at, open_by_project=open_by_project, embedding_backlog=days_ago,
        mirror_pending=pending, mirror_lag_seconds=60.0 * pending, parked=days_ago % 2,
    )  # fmt: skip


def _day(days_ago: int) -> str:
    day = timezone.localdate() - dt.timedelta(days=days_ago)
    return f"{day:%b} {day.day}"


def _card(html: str, key: str) -> str:
    return html.split(f'data-plot="{key}"')[1].split("</article>")[0]


def test_the_dashboard_draws_each_day_from_the_snapshots_scoped_to_the_reader(client, lead):
    acme = ProjectFactory(slug="acme", name="Acme", sensitivity="confidential")
    hidden = ProjectFactory(slug="hidden", name="Hidden", sensitivity="confidential")
    person = UserFactory(username="sam", is_staff=True)
    Membership.objects.create(project=acme, user=person, role=Role.EDITOR)
    for days_ago, n in ((5, 3), (4, 7)):
        _snapshot(days_ago, {str(acme.pk): n, str(hidden.pk): 100}, pending=n)
    client.force_login(person)
    html = client.get("/admin/").content.decode()
    waiting = _card(html, "waiting")
    assert f"<title>{_day(5)}: 3</title>" in waiting and f"<title>{_day(4)}: 7</title>" in waiting
    assert (
        "103" not in waiting and "107" not in waiting
    )  # the hidden project's items are not summed
    assert f"<title>{_day(6)}: no record</title>" in waiting  # before the first snapshot
    assert f"kept since {_day(5)}" in waiting
    mirror = _card(html, "mirror")
    assert f"<title>{_day(4)}: 7</title>" in mirror and "<polyline" in mirror  # the lag line
    assert f"<title>{_day(4)}: 4</title>" in _card(html, "embedding")
    client.force_login(lead)  # a superuser sees every project's open items
    assert f"<title>{_day(4)}: 107</title>" in _card(client.get("/admin/").content.decode(),
                                                       "waiting")  # fmt: skip


def test_the_dashboard_says_when_there_is_no_history_yet(client, lead):
    client.force_login(lead)
    html = client.get("/admin/").content.decode()
    for key in ("waiting", "embedding", "mirror", "parked"):
        assert (
            "no history yet: the first snapshot is taken when the worker starts, then every 1 h"
            in (_card(html, key))
        ), key


def _index_queries(client) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get("/admin/").status_code == 200
    return len(captured)


def test_the_dashboard_costs_the_same_for_more_snapshots_and_entries(client, lead, two_projects):
    client.force_login(lead)
    _open(two_projects, "acme", 2)
    backlog_snapshot_take(actor=SYSTEM)
    few = _index_queries(client)
    _open(two_projects, "acme", 20, start=10)
    _open(two_projects, "hidden", 5, start=40)
    for hours in range(1, 24 * 40, 5):  # 40 days, several snapshots a day
        backlog_snapshot_take(actor=SYSTEM, now=timezone.now() - dt.timedelta(hours=hours))
    assert BacklogSnapshot.objects.count() > 150
    assert _index_queries(client) == few
