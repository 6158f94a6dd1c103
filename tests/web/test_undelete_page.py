"""The deleted-entry page: what it was, its last text, and for an editor a button that brings
it back as it was (issue 37)."""

from __future__ import annotations

import pytest
from django.test import Client

from knowledge.models import Entry, Membership, Role
from knowledge.services import EntryFields, entry_delete, entry_upsert
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def gone(actor, project):
    entry = entry_upsert(
        actor=actor,
        project="acme",
        subtopic="ops",
        fields=EntryFields(
            title="Runbook", body="Restart <the> cache.", kind="howto", tags=["ops"]
        ),
        sources=[{"kind": "ticket", "external_id": "OPS-1"}],
    ).entry
    entry_delete(actor=actor, ref=entry.pk, reason="moved to the wiki")
    return entry


def test_an_editor_brings_a_deleted_entry_back_from_its_page(client, user, gone):
    client.force_login(user)
    page = client.get(f"/e/{gone.short_id}/")
    assert page.status_code == 404
    html = page.content.decode()
    assert "moved to the wiki" in html and "Restart &lt;the&gt; cache." in html
    assert f"/e/{gone.short_id}/undelete/" in html
    done = client.post(f"/e/{gone.short_id}/undelete/", {"reason": "still used"}, follow=True)
    assert done.status_code == 200 and "Brought back as version 2" in done.content.decode()
    entry = Entry.objects.get(short_id=gone.short_id)
    assert (entry.pk, entry.kind, entry.tags) == (gone.pk, "howto", ["ops"])
    assert entry.sources.get().external_id == "OPS-1"


def test_a_viewer_sees_the_deleted_page_without_the_button(gone, project):
    viewer = UserFactory(username="vic")
    Membership.objects.create(project=project, user=viewer, role=Role.VIEWER)
    client = Client()
    client.force_login(viewer)
    html = client.get(f"/e/{gone.short_id}/").content.decode()
    assert "moved to the wiki" in html and "/undelete/" not in html
    refused = client.post(f"/e/{gone.short_id}/undelete/", {"reason": "mine"})
    assert refused.status_code == 403
    assert not Entry.objects.filter(short_id=gone.short_id).exists()
