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
