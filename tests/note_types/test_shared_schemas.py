"""Schemas kept in one shared project apply to every project that opts in: a project's own
schema wins, and a library lends its schemas only while it shares them with everyone."""

from __future__ import annotations

import pytest

from knowledge.actors import Actor
from knowledge.errors import NotFound, SchemaMisfit, ValidationFailed
from knowledge.models import Membership, Role, Sensitivity
from knowledge.note_types.reads import entry_schema_fit, schema_validate
from knowledge.services import EntryFields, ProjectFields, entry_upsert, project_update
from tests.factories import ProjectFactory, UserFactory
from tests.web.pages.responses import html

PERSON = "```yaml\nrole: string, job title\n```\n"


def write(actor, project, title, body, kind="person"):
    return entry_upsert(
        actor=actor, project=project, fields=EntryFields(title=title, body=body, kind=kind)
    ).entry


@pytest.fixture
def library(user):
    lib = ProjectFactory(slug="handbook", name="Handbook", sensitivity=Sensitivity.INTERNAL)
    Membership.objects.create(project=lib, user=user, role=Role.MAINTAINER)
    write(Actor.for_user(user), "handbook", "person", PERSON, kind="schema")
    return lib


@pytest.fixture
def maintainer(user, project):
    Membership.objects.filter(project=project, user=user).update(role=Role.MAINTAINER)
    return Actor.for_user(user)


def test_a_project_takes_a_schema_from_a_shared_library(maintainer, project, library):
    project_update(actor=maintainer, project="handbook", fields=ProjectFields(schemas_shared=True))
    project_update(
        actor=maintainer,
        project="acme",
        fields=ProjectFields(schema_library="handbook", schema_mode="strict"),
    )
    with pytest.raises(SchemaMisfit) as caught:
        write(maintainer, "acme", "Ada", "No role here.")
    assert caught.value.data["misfits"][0]["field"] == "role"
    ada = write(maintainer, "acme", "Ada", "- [role] Engineer")
    assert entry_schema_fit(maintainer, ada).fits
    runs = schema_validate(maintainer, project="acme")  # every type with a schema, library's too
    assert [(r.note_type, r.fitting) for r in runs] == [("person", 1)]


def test_the_projects_own_schema_wins(maintainer, project, library):
    project_update(actor=maintainer, project="handbook", fields=ProjectFields(schemas_shared=True))
    project_update(
        actor=maintainer, project="acme", fields=ProjectFields(schema_library="handbook")
    )
    write(maintainer, "acme", "person", "```yaml\nteam: string\n```\n", kind="schema")
    ada = write(maintainer, "acme", "Ada", "- [team] Platform")
    assert entry_schema_fit(maintainer, ada).fits  # acme's schema: no role needed


def test_a_library_that_stops_sharing_no_longer_applies(maintainer, project, library):
    project_update(actor=maintainer, project="handbook", fields=ProjectFields(schemas_shared=True))
    project_update(
        actor=maintainer, project="acme", fields=ProjectFields(schema_library="handbook")
    )
    ada = write(maintainer, "acme", "Ada", "nothing")
    assert entry_schema_fit(maintainer, ada) is not None
    project_update(actor=maintainer, project="handbook", fields=ProjectFields(schemas_shared=False))
    assert entry_schema_fit(maintainer, ada) is None
    project_update(actor=maintainer, project="acme", fields=ProjectFields(schema_library=""))
    assert project.__class__.objects.get(pk=project.pk).schema_library_id is None


def test_only_a_shared_readable_other_project_can_be_a_library(maintainer, project, library):
    with pytest.raises(ValidationFailed, match="does not share its schemas"):
        project_update(
            actor=maintainer, project="acme", fields=ProjectFields(schema_library="handbook")
        )
    project_update(actor=maintainer, project="acme", fields=ProjectFields(schemas_shared=True))
    with pytest.raises(ValidationFailed, match="from itself"):
        project_update(
            actor=maintainer, project="acme", fields=ProjectFields(schema_library="acme")
        )
    hidden = ProjectFactory(slug="vault", sensitivity=Sensitivity.RESTRICTED)
    hidden.schemas_shared = True
    hidden.save()
    with pytest.raises(NotFound):
        project_update(
            actor=maintainer, project="acme", fields=ProjectFields(schema_library="vault")
        )


def test_a_confidential_project_cannot_share_its_schemas(maintainer, library):
    project_update(
        actor=maintainer, project="handbook", fields=ProjectFields(sensitivity="confidential")
    )
    with pytest.raises(ValidationFailed, match="public or internal"):
        project_update(
            actor=maintainer, project="handbook", fields=ProjectFields(schemas_shared=True)
        )
    project_update(
        actor=maintainer, project="handbook", fields=ProjectFields(sensitivity="internal")
    )
    project_update(actor=maintainer, project="handbook", fields=ProjectFields(schemas_shared=True))
    with pytest.raises(ValidationFailed, match="public or internal"):
        project_update(
            actor=maintainer, project="handbook", fields=ProjectFields(sensitivity="restricted")
        )


def test_rest_sets_and_shows_the_library(maintainer, project, library, client):
    import json

    from knowledge.services import token_create

    secret = token_create(actor=maintainer, user=maintainer.user, name="t").secret
    headers = {"HTTP_AUTHORIZATION": f"Bearer {secret}"}

    def patch(slug, **data):
        return client.patch(
            f"/api/v1/projects/{slug}", json.dumps(data), content_type="application/json",
            **headers,
        )  # fmt: skip

    assert patch("acme", schema_library="handbook").status_code == 422
    assert patch("handbook", schemas_shared=True).json()["schemas_shared"] is True
    assert patch("acme", schema_library="handbook").json()["schema_library"] == "handbook"
    other = UserFactory(username="bob")
    Membership.objects.create(project=project, user=other, role=Role.VIEWER)
    seen = client.get("/api/v1/projects/acme", **headers).json()
    assert seen["schema_library"] == "handbook"


def test_the_admin_offers_only_shared_libraries(maintainer, project, library, admin_client):
    from django.urls import reverse

    client = admin_client
    ProjectFactory(slug="notes", sensitivity=Sensitivity.INTERNAL)  # readable, not shared
    url = reverse("admin:knowledge_project_change", args=[project.pk])
    assert ">handbook<" not in html(client.get(url))
    project_update(actor=maintainer, project="handbook", fields=ProjectFields(schemas_shared=True))
    page = client.get(url).content.decode()
    assert 'name="schema_library"' in page and ">handbook<" in page and ">notes<" not in page
