"""What pages cost: the entry list (plain, filtered by the tree, searched), the change form and its
preview, and the subtopic list make as many queries for many entries as for a few."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from knowledge.models import Entry
from tests.admin.workbench import CHANGELIST, fill, live, queries

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("params", "most"),
    [({}, 14), ({"tree": "acme/area-1"}, 14), ({"q": "launch step"}, 22)],
    ids=["list", "tree", "search"],
)
def test_the_entry_list_costs_the_same_for_more_entries(admin_client, actor, project, params,
                                                        most):  # fmt: skip
    fill(actor, 0, 3)
    small = queries(admin_client, CHANGELIST, **params)
    fill(actor, 3, 30)
    large = queries(admin_client, CHANGELIST, **params)
    assert large == small <= most, f"{params}: {small} queries for 3 entries, {large} for 30"


def test_the_change_form_and_preview_cost_a_constant_number_of_queries(admin_client, actor,
                                                                        project):  # fmt: skip
    fill(actor, 0, 3)
    entry = Entry.objects.get(title="Note 1")
    url = reverse("admin:knowledge_entry_change", args=[entry.pk])
    small = queries(admin_client, url)
    few = "[[Note 0]] [[Note 2]] [[Missing]]"
    with CaptureQueriesContext(connection) as preview_small:
        live(admin_client, text=few, project=str(project.pk), title="x")
    fill(actor, 3, 30)
    many = " ".join(f"[[Note {i}]]" for i in range(25)) + " [[Missing]]"
    with CaptureQueriesContext(connection) as preview_large:
        live(admin_client, text=many, project=str(project.pk), title="x")
    assert queries(admin_client, url) == small
    assert len(preview_large) == len(preview_small)


def test_the_subtopic_list_costs_the_same_for_a_bigger_tree(admin_client, actor, project):
    url = reverse("admin:knowledge_subtopic_changelist")
    fill(actor, 0, 3)
    small = queries(admin_client, url)
    fill(actor, 3, 30)  # more subtopics, more entries in each
    assert queries(admin_client, url) == small
