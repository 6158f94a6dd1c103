"""Bulk actions on the entry list: each asks for a reason first and makes one revision per entry
with it; a conflict or an entry the person may only read is refused and the rest is done."""

from __future__ import annotations

import pytest

from knowledge.models import Entry, Membership, Role
from knowledge.services import EntryFields, entry_update
from tests.admin.workbench import CHANGELIST, sam
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def _bulk(client, action: str, entries, **fields):
    data = {"action": action, "_selected_action": [e.pk for e in entries], "apply": "1"}
    data |= {f"version_{e.pk}": e.version for e in entries}
    return client.post(CHANGELIST, data | fields, follow=True)


def test_a_bulk_action_asks_for_a_reason_first(admin_client, notes):
    two = [notes["Holiday plans"], notes["Team charter"]]
    page = admin_client.post(
        CHANGELIST, {"action": "move_entries", "_selected_action": [e.pk for e in two]}
    )
    assert page.status_code == 200
    assert b"Move entries to a subtopic" in page.content
    assert f'name="version_{two[0].pk}" value="1"'.encode() in page.content
    nothing = admin_client.post(
        CHANGELIST,
        {"action": "move_entries", "_selected_action": [e.pk for e in two], "apply": "1",
         "subtopic": "archive"},
    )  # fmt: skip
    assert b"This field is required" in nothing.content  # no reason, no change
    assert Entry.objects.get(pk=two[0].pk).version == 1


def test_bulk_move_makes_one_revision_each_with_the_reason(admin_client, notes):
    two = [notes["Holiday plans"], notes["Team charter"]]
    response = _bulk(admin_client, "move_entries", two, subtopic="Archive > 2026",
                     reason="tidy up the tree")  # fmt: skip
    assert b"Moved 2 entries, one revision each (reason: tidy up the tree)" in response.content
    for entry in two:
        entry = Entry.objects.get(pk=entry.pk)
        assert entry.subtopic.path == "archive/2026"
        assert entry.version == 2
        assert entry.history.count() == 2
        assert entry.history.first().history_change_reason == "tidy up the tree"


def test_bulk_move_refuses_a_conflict_and_does_the_rest(admin_client, notes, actor):
    first, second, third = notes["Holiday plans"], notes["Team charter"], notes["Database backups"]
    entry_update(actor=sam(), ref=first.pk, fields=EntryFields(), subtopic="elsewhere")
    # A change of the body only leaves the move alone: it applies on the current version.
    entry_update(actor=sam(), ref=third.pk, fields=EntryFields(body="changed meanwhile"))
    response = _bulk(admin_client, "move_entries", [first, second, third], subtopic="archive",
                     reason="tidy")  # fmt: skip
    html = response.content.decode()
    assert "Moved 2 entries" in html
    assert f"Not changed: Holiday plans ({first.short_id})" in html
    assert Entry.objects.get(pk=first.pk).subtopic.path == "elsewhere"
    assert Entry.objects.get(pk=second.pk).subtopic.path == "archive"
    assert Entry.objects.get(pk=third.pk).subtopic.path == "archive"


def test_bulk_tags_add_and_remove(admin_client, notes):
    entry = notes["Deployment checklist"]
    response = _bulk(admin_client, "tag_entries", [entry], add="Ops, runbook", remove="deploy",
                     reason="retag")  # fmt: skip
    assert b"Retagged 1 entry" in response.content
    entry.refresh_from_db()
    assert entry.tags == ["ops", "runbook"]
    assert entry.history.first().history_change_reason == "retag"


def test_bulk_tags_apply_on_an_entry_changed_since_the_page_was_read(admin_client, notes):
    """Tags change by difference, so another writer's change since the page was read (here its
    text and a tag of theirs) is kept and the retag applies on the current version (issue 48)."""
    first, second = notes["Holiday plans"], notes["Team charter"]
    entry_update(
        actor=sam(), ref=first.pk, fields=EntryFields(body="changed meanwhile", tags=["theirs"])
    )
    response = _bulk(admin_client, "tag_entries", [first, second], add="reviewed", reason="x")
    html = response.content.decode()
    assert "Retagged 2 entries" in html
    assert "Not changed" not in html
    now = Entry.objects.get(pk=first.pk)
    assert (now.body, set(now.tags)) == ("changed meanwhile", {"theirs", "reviewed"})
    assert "reviewed" in Entry.objects.get(pk=second.pk).tags


def test_bulk_status_and_verify(admin_client, notes, staff):
    two = [notes["Holiday plans"], notes["Team charter"]]
    _bulk(admin_client, "set_entries_status", two, status="archived", reason="done with it")
    assert {Entry.objects.get(pk=e.pk).status for e in two} == {"archived"}
    two = [Entry.objects.get(pk=e.pk) for e in two]
    response = _bulk(admin_client, "verify_entries", two, reason="read them both")
    assert b"Verified 2 entries" in response.content
    for entry in two:
        entry.refresh_from_db()
        assert entry.verified_by == staff
        assert entry.history.first().history_change_reason == "read them both"


def test_bulk_changes_refuse_what_the_person_may_only_read(client, notes, project):
    from django.contrib.auth.models import Permission

    reader = UserFactory(username="rita", is_staff=True)
    reader.user_permissions.add(*Permission.objects.filter(content_type__app_label="knowledge"))
    Membership.objects.create(project=project, user=reader, role=Role.VIEWER)
    client.force_login(reader)
    entry = notes["Team charter"]
    response = _bulk(client, "set_entries_status", [entry], status="archived", reason="x")
    assert b"Not changed: Team charter" in response.content
    assert b"editor role" in response.content
    assert Entry.objects.get(pk=entry.pk).status == "active"
