"""A project reference names one project: id, then slug, then name; a name cannot capture a
slug or an id; who may create projects is a setting; "taken" has one answer."""

import pytest

from knowledge.actors import Actor
from knowledge.errors import AlreadyExists, Forbidden, ValidationFailed
from knowledge.models import Entry, Membership, Project, Role, Sensitivity
from knowledge.selectors import project_get
from knowledge.services import (
    EntryFields,
    ProjectFields,
    entry_upsert,
    project_create,
    project_update,
)
from tests.factories import ProjectFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def mallory(db):
    return Actor.for_user(UserFactory(username="mallory"))


def _legacy(slug: str, name: str, member: Actor) -> Project:
    """A project saved before the naming rules (the services refuse these names now)."""
    Project.objects.filter(name__iexact=name).update(name=f"{name} Corp")  # acme is "Acme"
    proj = Project.objects.create(slug=slug, name=name)
    Membership.objects.create(project=proj, user=member.user, role=Role.MAINTAINER)
    return proj


def test_a_name_equal_to_another_projects_slug_is_refused(mallory, project):
    with pytest.raises(AlreadyExists, match="not available"):
        project_create(actor=mallory, slug="evil", fields=ProjectFields(name="acme"))
    with pytest.raises(AlreadyExists, match="not available"):
        project_create(
            actor=mallory, slug="Acme", fields=ProjectFields(name="Other")
        )  # slug equal to a name
    evil = project_create(actor=mallory, slug="evil", fields=ProjectFields(name="Evil"))
    with pytest.raises(AlreadyExists, match="not available"):
        project_update(actor=mallory, project=evil.slug, fields=ProjectFields(name="ACME"))


def test_renaming_onto_a_taken_name_is_a_clear_conflict_not_a_500(actor, project, mallory):
    project_create(actor=mallory, slug="other", fields=ProjectFields(name="Other Name"))
    Membership.objects.filter(project=project, user=actor.user).update(role=Role.MAINTAINER)
    with pytest.raises(AlreadyExists, match="not available"):
        project_update(actor=actor, project="acme", fields=ProjectFields(name="other name"))
    assert Project.objects.get(slug="acme").name == "Acme"


@pytest.mark.parametrize(("slug", "name"), [("team", "7"), ("7", "Seven"), ("team", " 42 ")])
def test_all_digit_slugs_and_names_are_refused(mallory, slug, name):
    with pytest.raises(ValidationFailed, match="only digits"):
        project_create(actor=mallory, slug=slug, fields=ProjectFields(name=name))


def test_taken_answers_the_same_for_a_restricted_project_the_caller_cannot_see(mallory, db):
    hidden = ProjectFactory(slug="secret-plan", name="Secret", sensitivity=Sensitivity.RESTRICTED)
    ProjectFactory(slug="open-plan", name="Open")
    with pytest.raises(AlreadyExists) as restricted:
        project_create(actor=mallory, slug="secret-plan", fields=ProjectFields(name="Mine"))
    with pytest.raises(AlreadyExists) as visible:
        project_create(actor=mallory, slug="open-plan", fields=ProjectFields(name="Mine"))
    assert restricted.value.message.replace("secret", "open") == visible.value.message
    assert hidden.name not in restricted.value.message


def test_slug_beats_a_legacy_name_that_equals_it(actor, project, mallory):
    attacker = _legacy("evil", "acme", mallory)
    Membership.objects.create(project=attacker, user=actor.user, role=Role.EDITOR)
    assert project_get(actor, "acme").pk == project.pk
    assert project_get(actor, "acme", for_write=True).pk == project.pk
    saved = entry_upsert(actor=actor, project="acme", fields=EntryFields(title="T", body="b")).entry
    assert saved.project_id == project.pk


def test_a_superusers_write_by_slug_lands_in_that_project(project, mallory):
    _legacy("evil", "acme", mallory)
    root = Actor.for_user(UserFactory(username="root", is_superuser=True, is_staff=True))
    entry = entry_upsert(actor=root, project="acme", fields=EntryFields(title="T", body="b")).entry
    assert entry.project_id == project.pk


def test_a_readable_project_is_not_captured_by_a_writable_ones_name(project, mallory):
    reader = Actor.for_user(UserFactory(username="reader"))
    Membership.objects.create(project=project, user=reader.user, role=Role.VIEWER)
    attacker = _legacy("evil", "acme", mallory)
    Membership.objects.create(project=attacker, user=reader.user, role=Role.EDITOR)
    with pytest.raises(Forbidden, match="editor role"):
        entry_upsert(actor=reader, project="acme", fields=EntryFields(title="T", body="b"))
    assert not Entry.objects.exists()


def test_digits_that_are_an_id_and_another_name_are_ambiguous(actor, project, mallory):
    other = _legacy("other", str(project.pk), mallory)
    Membership.objects.create(project=other, user=actor.user, role=Role.EDITOR)
    with pytest.raises(ValidationFailed, match="ambiguous") as exc:
        project_get(actor, str(project.pk))
    assert exc.value.data["candidates"] == ["acme", "other"]


def test_id_slug_and_name_each_resolve(actor, project):
    assert project_get(actor, project.pk).pk == project.pk
    assert project_get(actor, "ACME").pk == project.pk
    assert project_get(actor, "acme").pk == project.pk


def test_a_narrowed_token_cannot_create_projects(project, user):
    narrowed = Actor(user=user, project_ids=frozenset({project.pk}))
    with pytest.raises(Forbidden, match="limited to some projects"):
        project_create(actor=narrowed, slug="new-one")


def test_staff_only_project_creation(settings, mallory):
    settings.CAIRN_PROJECT_CREATORS = "staff"
    with pytest.raises(Forbidden, match="Only staff"):
        project_create(actor=mallory, slug="new-one")
    staff = Actor.for_user(UserFactory(username="boss", is_staff=True))
    assert project_create(actor=staff, slug="new-one").slug == "new-one"


def test_rest_rename_onto_a_taken_name_is_409(api, acme, mallory):
    project_create(actor=mallory, slug="other", fields=ProjectFields(name="Other"))
    response = api.patch(
        "/api/v1/projects/acme", {"name": "OTHER"}, content_type="application/json"
    )
    assert response.status_code == 409
    assert "not available" in response.json()["detail"]
