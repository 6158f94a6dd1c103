"""Admin: a deleted entry's history page offers to bring it back, through the service."""

import pytest

from history import mirror
from knowledge.actors import Actor
from knowledge.models import Entry
from knowledge.services import EntryFields, entry_delete, entry_upsert

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.admin.urls")]


@pytest.fixture
def gone(staff, project):
    actor = Actor.for_user(staff)
    entry = entry_upsert(
        actor=actor,
        project="acme",
        fields=EntryFields(title="Plan", body="one\n<b>two</b>\n", tags=["q3"]),
    ).entry
    entry_delete(actor=actor, ref=entry.pk, reason="obsolete")
    return entry


def test_a_deleted_entry_comes_back_from_its_history_page(client, staff, gone):
    client.force_login(staff)
    page = client.get(f"/admin/knowledge/entry/{gone.pk}/history/")
    html = page.content.decode()
    assert page.status_code == 200 and "obsolete" in html and "&lt;b&gt;two" in html
    url = f"/admin/knowledge/entry/{gone.pk}/history/undelete/"
    assert url in html
    assert client.get(url).status_code == 405  # a change needs a POST
    done = client.post(url, {"reason": "needed after all"})
    assert done.status_code == 302
    entry = Entry.objects.get(pk=gone.pk)
    assert (entry.short_id, entry.tags, entry.version) == (gone.short_id, ["q3"], 2)
    latest = entry.history.order_by("-history_id").first()
    assert latest.history_change_reason == "undelete: needed after all"
    mirror.drain()  # the git mirror takes the entry back like any other revision
    assert entry.history.filter(git_commit="").count() == 0
    assert entry.history.order_by("-history_id").first().git_commit
