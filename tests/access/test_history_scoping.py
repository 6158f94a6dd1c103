"""Revisions written while an entry lived in a hidden project stay hidden after it moves."""

from __future__ import annotations

import pytest
from django.test import Client

from knowledge.actors import Actor
from knowledge.models import Sensitivity
from knowledge.selectors import entry_revisions
from knowledge.services import EntryFields, ProjectFields, entry_move, entry_upsert, project_create
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_a_moved_entry_keeps_its_hidden_past_hidden():
    root = UserFactory(username="root", is_superuser=True, is_staff=True)
    owner = Actor.for_user(root)
    project_create(
        actor=owner, slug="vault", fields=ProjectFields(sensitivity=Sensitivity.RESTRICTED)
    )
    project_create(
        actor=owner, slug="commons", fields=ProjectFields(sensitivity=Sensitivity.PUBLIC)
    )
    entry = entry_upsert(
        actor=owner, project="vault", fields=EntryFields(title="Launch", body="codename nightjar")
    ).entry
    entry_move(actor=owner, ref=entry.pk, project="commons", subtopic="")

    reader = UserFactory(username="reader", is_staff=True, is_superuser=False)
    seen = list(entry_revisions(Actor.for_user(reader), entry))
    assert [r.version for r in seen] == [2]
    assert "vault" not in (seen[0].history_change_reason or "")  # "move from another project"
    assert [r.version for r in entry_revisions(owner, entry)] == [2, 1]

    # The admin's history list agrees (as superuser-less staff with view permission).
    from django.contrib.auth.models import Permission

    reader.user_permissions.set(Permission.objects.filter(codename="view_entry"))
    client = Client()
    client.force_login(reader)
    first = entry.history.order_by("history_id").first()
    old = client.get(f"/admin/knowledge/entry/{entry.pk}/history/{first.history_id}/")
    assert old.status_code == 404
    listing = client.get(f"/admin/knowledge/entry/{entry.pk}/history/").content.decode()
    assert "create Launch" not in listing  # the hidden revision's reason
    assert "nightjar" not in listing


def test_a_stale_write_shows_only_the_past_its_writer_may_see():
    """Every versioned write passes its actor to the conflict answer: the revisions it shows
    come from the projects the writer can see, whichever project the entry is in now."""
    from knowledge.errors import EntryConflict
    from knowledge.services import entry_set_status, membership_grant

    root = Actor.for_user(UserFactory(username="root", is_superuser=True, is_staff=True))
    for slug, sensitivity in (("vault", "restricted"), ("commons", "public"), ("beta", "public")):
        project_create(actor=root, slug=slug, fields=ProjectFields(sensitivity=sensitivity))
    user = UserFactory(username="writer")
    for slug in ("commons", "beta"):
        membership_grant(actor=root, project=slug, role="editor", user=user)
    writer = Actor.for_user(user)

    def stale_status(origin: str) -> dict:
        entry = entry_upsert(
            actor=root, project=origin, fields=EntryFields(title=origin, body="codename nightjar")
        ).entry
        entry_move(actor=root, ref=entry.pk, project="commons", subtopic="")
        with pytest.raises(EntryConflict) as refused:
            entry_set_status(actor=writer, ref=entry.pk, status="resolved", expected_version=1)
        return refused.value.data

    hidden = stale_status("vault")  # version 1 was written where the writer may not read
    assert "vault" not in str(hidden) and "diff" not in hidden and "fields" not in hidden
    assert [c["version"] for c in hidden["changes"]] == [2]
    # Version 1 was in a project the writer reads: a move leaves the status alone, so the
    # status applies on the current version.
    entry = entry_upsert(
        actor=root, project="beta", fields=EntryFields(title="beta", body="codename nightjar")
    ).entry
    entry_move(actor=root, ref=entry.pk, project="commons", subtopic="")
    done = entry_set_status(actor=writer, ref=entry.pk, status="resolved", expected_version=1)
    assert (done.entry.status, done.entry.project.slug) == ("resolved", "commons")
    assert done.rebased.read_version == 1
