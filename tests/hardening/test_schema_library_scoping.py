"""A public project that takes its schemas from an internal library must not show the
library's slug, fields or enum values to readers who cannot see the library: a guest, or a
token narrowed to the public project (issue 32). They get a message instead; a reader of the
library gets the schema as before."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.test import Client

from knowledge.actors import Actor
from knowledge.models import Membership, Role, Sensitivity
from knowledge.services import EntryFields, ProjectFields, entry_upsert, project_update
from knowledge.services.tokens import token_create
from tests.factories import ProjectFactory, UserFactory

pytestmark = pytest.mark.django_db
V1 = "/api/v1"
SECRET = "zanzibar"  # an enum value only the library's readers may learn
LIBRARY_SCHEMA = f"```yaml\nrole: string\nclearance(enum): [public, {SECRET}]\n```\n"


@pytest.fixture
def world(settings):
    settings.CAIRN_GUEST_GROUPS = ["contractors"]
    keeper = UserFactory(username="keeper")
    library = ProjectFactory(slug="vault", sensitivity=Sensitivity.INTERNAL)
    commons = ProjectFactory(slug="commons", sensitivity=Sensitivity.PUBLIC)
    for project in (library, commons):
        Membership.objects.create(project=project, user=keeper, role=Role.MAINTAINER)
    actor = Actor.for_user(keeper)
    entry_upsert(
        actor=actor,
        project="vault",
        fields=EntryFields(title="person", body=LIBRARY_SCHEMA, kind="schema"),
    )
    project_update(actor=actor, project="vault", fields=ProjectFields(schemas_shared=True))
    project_update(actor=actor, project="commons", fields=ProjectFields(schema_library="vault"))
    ada = entry_upsert(
        actor=actor,
        project="commons",
        fields=EntryFields(title="Ada", body="- [role] Engineer", kind="person"),
    ).entry
    guest = UserFactory(username="guest")
    guest.groups.add(Group.objects.create(name="contractors"))
    tokens = {
        "guest": token_create(actor=Actor.system(), user=guest, name="g", scope="read"),
        "narrowed": token_create(
            actor=Actor.system(), user=keeper, name="n", scope="read", projects=["commons"]
        ),
        "keeper": token_create(actor=Actor.system(), user=keeper, name="k", scope="read"),
    }
    clients = {
        who: Client(headers={"Authorization": f"Bearer {t.secret}"}) for who, t in tokens.items()
    }
    return clients, ada


def _reads(client, ada) -> dict:
    urls = {
        "validate all": f"{V1}/projects/commons/schemas/validate",
        "validate person": f"{V1}/projects/commons/schemas/validate?note_type=person",
        "entry": f"{V1}/entries/{ada.short_id}/schema",
        "infer": f"{V1}/projects/commons/schemas/infer?note_type=person",
        "diff": f"{V1}/projects/commons/schemas/diff?note_type=person",
    }
    answers = {}
    for name, url in urls.items():
        response = client.get(url)
        assert response.status_code == 200, (name, response.content[:300])
        answers[name] = response.content.decode()
    return answers


@pytest.mark.parametrize("who", ["guest", "narrowed"])
def test_a_reader_who_cannot_see_the_library_learns_nothing_of_it(world, who):
    clients, ada = world
    for name, text in _reads(clients[who], ada).items():
        assert "vault" not in text and SECRET not in text and "clearance" not in text, name
    [run] = clients[who].get(f"{V1}/projects/commons/schemas/validate?note_type=person").json()
    assert run["schema"] is None
    assert "lives in a schema library project you cannot see" in run["error"]


def test_a_reader_of_the_library_sees_the_schema_it_lends(world):
    clients, ada = world
    answers = _reads(clients["keeper"], ada)
    assert all(SECRET in answers[name] for name in ("validate all", "validate person", "entry"))
    [run] = clients["keeper"].get(f"{V1}/projects/commons/schemas/validate").json()
    assert run["note_type"] == "person" and run["schema"]["fields"][1]["name"] == "clearance"


def test_the_project_answer_names_the_library_only_to_its_readers(world):
    clients, _ = world
    seen = {
        who: c.get(f"{V1}/projects/commons").json()["schema_library"] for who, c in clients.items()
    }
    assert seen == {"guest": None, "narrowed": None, "keeper": "vault"}
