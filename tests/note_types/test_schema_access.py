"""The note-type schema lookup answers only about projects its caller may see (issue 44): a
staff member who is not a member of a restricted project learns nothing of its schemas by
posting its id to the admin's entry form or live preview, and a guest's live preview of a public
project does not show the fields of the internal library that project takes its schemas from.
The rule lives in the lookup itself (knowledge.note_types.lookup), so every caller gets
it; the surfaces are checked here and in the leak matrix (tests/access/surfaces_note_types.py)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, Permission
from django.test import Client
from django.urls import reverse

from knowledge.actors import Actor
from knowledge.models import Membership, Role, Sensitivity
from knowledge.note_types.lookup import project_schema, readable_schema_entry
from knowledge.services import EntryFields, ProjectFields, entry_upsert, project_update
from tests.factories import ProjectFactory, UserFactory

pytestmark = pytest.mark.django_db

SECRET = "zanzibar"  # an enum value only the schema's readers may learn
SCHEMA = f"```yaml\nrole: string\nclearance(enum): [public, {SECRET}]\n```\n"


def _staff(username: str, *groups: Group):
    """Staff with every knowledge permission: only project access tells them apart."""
    user = UserFactory(username=username, is_staff=True)
    user.user_permissions.set(Permission.objects.filter(content_type__app_label="knowledge"))
    user.groups.add(*groups)
    client = Client()
    client.force_login(user)
    return user, client


@pytest.fixture
def vault(settings):
    """A restricted project `vault` with a `person` schema, kept by its one maintainer; a
    public project `commons` that takes its schemas from an internal library `library`."""
    settings.CAIRN_GUEST_GROUPS = ["contractors"]
    keeper, keeper_client = _staff("keeper")
    vault = ProjectFactory(slug="vault", sensitivity=Sensitivity.RESTRICTED)
    library = ProjectFactory(slug="library", sensitivity=Sensitivity.INTERNAL)
    commons = ProjectFactory(slug="commons", sensitivity=Sensitivity.PUBLIC)
    for project in (vault, library, commons):
        Membership.objects.create(project=project, user=keeper, role=Role.MAINTAINER)
    actor = Actor.for_user(keeper)
    for slug in ("vault", "library"):
        entry_upsert(
            actor=actor,
            project=slug,
            fields=EntryFields(title="person", body=SCHEMA, kind="schema"),
        )
    project_update(actor=actor, project="library", fields=ProjectFields(schemas_shared=True))
    project_update(actor=actor, project="commons", fields=ProjectFields(schema_library="library"))
    commons.refresh_from_db()
    outsider, outsider_client = _staff("outsider")
    guest, guest_client = _staff("guest", Group.objects.create(name="contractors"))
    return {
        "projects": {"vault": vault, "library": library, "commons": commons},
        "users": {"keeper": keeper, "outsider": outsider, "guest": guest},
        "clients": {"keeper": keeper_client, "outsider": outsider_client, "guest": guest_client},
    }


def _schema_shown(html: str) -> bool:
    """Whether a page shows the schema's fields; a page that does not must not show its enum."""
    shown = "clearance" in html
    assert shown or SECRET not in html
    return shown


# --- the lookup ---------------------------------------------------------------------------------


def test_the_lookup_gives_no_schema_of_a_project_the_actor_cannot_see(vault):
    users, vault_project = vault["users"], vault["projects"]["vault"]
    found = project_schema(Actor.for_user(users["keeper"]), vault_project, "person")
    assert found is not None and [f.name for f in found.fields] == ["role", "clearance"]
    assert project_schema(Actor.for_user(users["outsider"]), vault_project, "person") is None
    # Not even why: that the project has such a schema is itself what it hides.
    assert readable_schema_entry(Actor.for_user(users["outsider"]), vault_project, "person") == (
        None,
        "",
    )
    assert project_schema(Actor.system(), vault_project, "person") is None  # signed in: nobody


def test_the_lookup_gives_no_library_schema_to_a_reader_who_cannot_see_the_library(vault):
    users, commons = vault["users"], vault["projects"]["commons"]
    assert project_schema(Actor.for_user(users["keeper"]), commons, "person") is not None
    assert project_schema(Actor.for_user(users["outsider"]), commons, "person") is not None
    assert project_schema(Actor.for_user(users["guest"]), commons, "person") is None
    narrowed = Actor(user=users["keeper"], project_ids=frozenset({commons.pk}))
    assert project_schema(narrowed, commons, "person") is None


# --- the admin ----------------------------------------------------------------------------------


def _form_post(client: Client, project) -> str:
    """The entry form posted for `project` with kind person and no title: refused, and shown
    again with the metadata inputs the project's person schema gives."""
    data = {
        "project": project.pk, "subtopic_path": "", "title": "", "body": "x", "kind": "person",
        "tags_text": "", "status": "active", "searchable": "on", "metadata": "{}",
    }  # fmt: skip
    response = client.post(reverse("admin:knowledge_entry_add"), data)
    assert response.status_code == 200
    return response.content.decode()


def _preview(client: Client, project) -> str:
    data = {"text": "- [role] Engineer", "project": str(project.pk), "kind": "person",
            "title": "Ada", "metadata": '{"clearance": "nope"}'}  # fmt: skip
    response = client.post(reverse("admin:knowledge_entry_live_preview"), data)
    assert response.status_code == 200
    return response.content.decode()


@pytest.mark.parametrize(("who", "shown"), [("keeper", True), ("outsider", False)])
def test_the_entry_form_shows_a_hidden_projects_schema_to_no_one_but_its_readers(vault, who, shown):
    html = _form_post(vault["clients"][who], vault["projects"]["vault"])
    assert _schema_shown(html) is shown


@pytest.mark.parametrize(("who", "shown"), [("keeper", True), ("outsider", False)])
def test_the_live_preview_checks_a_draft_against_a_hidden_project_for_its_readers_only(
    vault, who, shown
):
    html = _preview(vault["clients"][who], vault["projects"]["vault"])
    assert _schema_shown(html) is shown


@pytest.mark.parametrize(("who", "shown"), [("keeper", True), ("outsider", True), ("guest", False)])
def test_the_admin_shows_a_library_schema_only_to_readers_of_the_library(vault, who, shown):
    commons = vault["projects"]["commons"]
    assert _schema_shown(_preview(vault["clients"][who], commons)) is shown
    assert _schema_shown(_form_post(vault["clients"][who], commons)) is shown
