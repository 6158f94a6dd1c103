"""Cairn's search in the entry list: a paraphrase finds the entry with a snippet, words are ranked
and highlighted, a short id finds its entry, the sidebar narrows the search, a person sees only
what they may, and a query the search refuses is said on the page."""

from __future__ import annotations

import pytest

from knowledge.models import Membership, Role
from tests.admin.workbench import CHANGELIST, row_titles
from tests.factories import EntryFactory, ProjectFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_a_paraphrase_finds_the_entry_with_a_snippet_column(admin_client, notes):
    response = admin_client.get(CHANGELIST, {"q": "vacation trip abroad in summer"})
    assert response.status_code == 200
    assert row_titles(response)[0] == "Holiday plans"
    assert b"column-snippet" in response.content
    assert b"midnight sun" in response.content  # the snippet shows a semantic hit's text


def test_words_are_ranked_and_highlighted(admin_client, notes):
    response = admin_client.get(CHANGELIST, {"q": "restart workers"})
    assert row_titles(response)[0] == "Deployment checklist"
    assert b"<mark>restart</mark>" in response.content


def test_an_exact_short_id_finds_that_entry_only(admin_client, notes):
    entry = notes["Database backups"]
    response = admin_client.get(CHANGELIST, {"q": entry.short_id})
    assert row_titles(response) == ["Database backups"]
    assert b"column-snippet" not in response.content  # the stock lookup, no ranking


def test_the_sidebar_filters_narrow_the_search(admin_client, notes, project):
    other = ProjectFactory(slug="other")
    EntryFactory(project=other, title="Restart notes", body="restart the workers nightly")
    both = admin_client.get(CHANGELIST, {"q": "restart workers"})
    assert set(row_titles(both)) >= {"Deployment checklist", "Restart notes"}
    one = admin_client.get(CHANGELIST, {"q": "restart workers", "project__id__exact": project.pk})
    assert "Restart notes" not in row_titles(one)
    tree = admin_client.get(CHANGELIST, {"q": "restart workers", "tree": "other"})
    assert row_titles(tree) == ["Restart notes"]


def test_search_shows_only_what_the_person_may_see(client, notes, project):
    hidden = ProjectFactory(slug="secret", sensitivity="restricted")
    EntryFactory(project=hidden, title="Secret restart", body="restart the workers")
    person = UserFactory(username="eve", is_staff=True)
    from django.contrib.auth.models import Permission

    person.user_permissions.add(*Permission.objects.filter(content_type__app_label="knowledge"))
    Membership.objects.create(project=project, user=person, role=Role.EDITOR)
    client.force_login(person)
    rows = row_titles(client.get(CHANGELIST, {"q": "restart workers"}))
    assert "Deployment checklist" in rows
    assert "Secret restart" not in rows


def test_a_query_search_refuses_is_said_on_the_page(admin_client, notes):
    response = admin_client.get(CHANGELIST, {"q": "word " * 200}, follow=True)
    assert response.status_code == 200
    assert b"the limit is" in response.content
    assert row_titles(response) == []
