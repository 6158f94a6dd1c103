"""Project writes take a ProjectFields value and find their project in one query, as entry
writes do."""

import pytest
from django.db import transaction

from knowledge.actors import Actor
from knowledge.errors import Forbidden, NotFound
from knowledge.models import Membership, Role
from knowledge.selectors import project_get
from knowledge.services import ProjectFields, project_create, project_update
from knowledge.services._kernel import lock_project
from tests.factories import UserFactory


@pytest.fixture
def maintainer(db):
    return Actor.for_user(UserFactory(username="mia"))


def test_a_new_project_takes_every_setting_it_is_given(maintainer):
    project = project_create(
        actor=maintainer,
        slug="Handbook",
        fields=ProjectFields(description="How we work", schema_mode="Strict", archived=True),
    )
    assert (project.slug, project.name, project.description) == (
        "handbook",
        "Handbook",
        "How we work",
    )
    assert (project.schema_mode, project.archived, project.sensitivity) == (
        "strict",
        True,
        "internal",
    )


def test_an_update_changes_only_what_it_is_given(maintainer):
    project_create(actor=maintainer, slug="acme", fields=ProjectFields(description="Ours"))
    updated = project_update(actor=maintainer, project="acme", fields=ProjectFields(name="ACME"))
    assert (updated.name, updated.description) == ("ACME", "Ours")


def test_finding_a_project_to_change_is_one_query(maintainer, django_assert_num_queries):
    project = project_create(actor=maintainer, slug="acme")
    with django_assert_num_queries(1):
        assert project_get(maintainer, "acme", for_maintain=True) == project
    with transaction.atomic(), django_assert_num_queries(1):
        assert lock_project(maintainer, "acme") == project


def test_lock_project_refuses_as_project_get_does(maintainer, db):
    project = project_create(actor=maintainer, slug="acme")
    editor = Actor.for_user(UserFactory(username="ed"))
    Membership.objects.create(project=project, user=editor.user, role=Role.EDITOR)
    with transaction.atomic(), pytest.raises(Forbidden, match="needs the maintainer role"):
        lock_project(editor, "acme")
    with transaction.atomic(), pytest.raises(NotFound, match="No project 'acne'"):
        lock_project(maintainer, "acne")
