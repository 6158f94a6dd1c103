"""The admin entry page lists an entry's links and backlinks, linked to their pages."""

import pytest
from django.urls import reverse

from knowledge.actors import Actor
from knowledge.services import EntryFields, entry_upsert
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_entry_page_lists_links_and_backlinks(client, project):
    root = UserFactory(username="root", is_superuser=True, is_staff=True)
    actor = Actor.for_user(root)
    target = entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="Target", body="")
    ).entry
    source = entry_upsert(
        actor=actor,
        project="acme",
        fields=EntryFields(title="Source", body="- uses [[Target]]\n- uses [[<b>x]]"),
    ).entry
    client.force_login(root)
    page = client.get(reverse("admin:knowledge_entry_change", args=[source.pk])).content.decode()
    assert f'uses → <a href="{reverse("admin:knowledge_entry_change", args=[target.pk])}">' in page
    assert "[[&lt;b&gt;x]] <small>(no entry yet)</small>" in page  # escaped
    back = client.get(reverse("admin:knowledge_entry_change", args=[target.pk])).content.decode()
    assert f'uses ← <a href="{reverse("admin:knowledge_entry_change", args=[source.pk])}">' in back
