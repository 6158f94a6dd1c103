"""The admin's index: recent changes, open items and backlogs at a constant cost, plots that link
to their lists, and timings for superusers only."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from history.snapshots import backlog_snapshot_take
from knowledge.actors import Actor
from knowledge.services import EntryFields, entry_upsert
from tests.admin.workbench import fill
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_the_index_shows_recent_changes_open_items_and_backlogs(admin_client, notes, actor):
    call = EntryFields(title="Call back Dana", body="x", status="open")
    entry_upsert(actor=actor, project="acme", fields=call)
    html = admin_client.get("/admin/").content.decode()
    assert 'id="cairn-dashboard"' in html
    assert "Call back Dana" in html and "Team charter" in html
    assert "Parked revisions" in html and "Embedding backlog" in html
    fill(actor, 0, 10)
    backlog_snapshot_take(actor=Actor.system())
    with CaptureQueriesContext(connection) as before:
        admin_client.get("/admin/")
    fill(actor, 10, 30)
    for hours in range(1, 24 * 30, 7):  # the backlogs' history over the plotted 30 days
        backlog_snapshot_take(actor=Actor.system(), now=timezone.now() - timedelta(hours=hours))
    with CaptureQueriesContext(connection) as after:
        admin_client.get("/admin/")
    assert len(after) == len(before)


def test_the_dashboard_plots_link_to_their_lists(admin_client, notes, actor, project):
    html = admin_client.get("/admin/").content.decode()
    keys = ("writes", "searches", "open", "waiting", "embedding", "parked", "mirror", "projects",
            "kinds")  # fmt: skip
    for key in keys:
        assert f'data-plot="{key}"' in html, key
    assert f"?project__id__exact={project.pk}" in html  # a project's bar opens its entries
    assert "?kind__exact=note" in html
    assert "operation__exact=search" in html
    assert html.count('<rect class="hit"') >= 30 * 5  # a link per day in each day plot
    assert "style=" not in html.split('id="cairn-dashboard"')[1]  # colours come from the CSS


def test_timings_are_for_superusers_on_the_dashboard_and_in_the_menu(client, notes, project):
    from django.contrib.auth.models import Permission

    person = UserFactory(username="sam-staff", is_staff=True)
    person.user_permissions.add(*Permission.objects.filter(codename__startswith="view_"))
    client.force_login(person)
    html = client.get("/admin/").content.decode()
    assert 'data-plot="writes"' in html
    assert 'data-plot="searches"' not in html
    assert "Operation timings" not in html
