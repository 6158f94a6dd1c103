"""The subtopic tree: its counts filter the entry list, the project page shows it, and moving a
subtopic moves its entries as revisions (or nothing, when a title would collide)."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from knowledge.models import Entry
from tests.admin.workbench import CHANGELIST, row_titles
from tests.factories import EntryFactory

pytestmark = pytest.mark.django_db


def test_the_tree_counts_descendants_and_filters_the_list(admin_client, notes):
    page = admin_client.get(CHANGELIST)
    html = page.content.decode()
    ops = re.search(r'data-key="acme/ops">.*?cairn-count[^>]*>(\d+)<', html, re.S)
    assert ops and ops.group(1) == "2"  # ops itself and ops/storage
    acme = re.search(r'data-key="acme">.*?cairn-count[^>]*>(\d+)<', html, re.S)
    assert acme and acme.group(1) == "4"
    filtered = admin_client.get(CHANGELIST, {"tree": "acme/ops"})
    assert sorted(row_titles(filtered)) == ["Database backups", "Deployment checklist"]
    deeper = admin_client.get(CHANGELIST, {"tree": "acme/ops/storage"})
    assert row_titles(deeper) == ["Database backups"]


def test_the_project_page_shows_its_tree(admin_client, notes, project):
    page = admin_client.get(reverse("admin:knowledge_project_change", args=[project.pk]))
    html = page.content.decode()
    assert 'data-key="acme/ops/storage"' in html
    assert "?tree=acme%2Fops" in html  # each node opens the entry list filtered to it
    assert "/admin/knowledge/subtopic/add/?project=" in html  # a subtopic is added from the tree


# --- moving a subtopic with its entries ----------------------------------------------------------


def test_moving_a_subtopic_moves_its_entries_as_revisions(admin_client, notes, project):
    url = reverse("admin:knowledge_subtopic_move")
    form = admin_client.get(url, {"project": project.pk, "path": "ops"})
    assert b'value="ops"' in form.content
    response = admin_client.post(
        url, {"project": project.pk, "path": "ops", "to": "Archive > Ops", "reason": "archived"}
    )
    assert response.status_code == 302
    assert response["Location"].endswith("?tree=acme%2Farchive%2Fops")
    moved = {e.title: e for e in Entry.objects.filter(project=project)}
    assert moved["Deployment checklist"].subtopic.path == "archive/ops"
    assert moved["Database backups"].subtopic.path == "archive/ops/storage"
    assert moved["Holiday plans"].subtopic.path == "people"
    for title in ("Deployment checklist", "Database backups"):
        assert moved[title].version == 2
        assert moved[title].history.first().history_change_reason == "archived"


def test_a_subtopic_move_that_would_collide_moves_nothing(admin_client, notes, project):
    EntryFactory(project=project, subtopic="archive", title="Deployment checklist", body="old")
    url = reverse("admin:knowledge_subtopic_move")
    response = admin_client.post(
        url, {"project": project.pk, "path": "ops", "to": "archive", "reason": "x"}
    )
    assert response.status_code == 200
    assert b"already has an entry titled" in response.content
    assert Entry.objects.get(pk=notes["Database backups"].pk).subtopic.path == "ops/storage"
    into_itself = admin_client.post(
        url, {"project": project.pk, "path": "ops", "to": "ops/inner", "reason": "x"}
    )
    assert b"itself or below itself" in into_itself.content
