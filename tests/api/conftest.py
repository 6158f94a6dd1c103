import pytest
from django.test import Client

from knowledge.actors import Actor
from knowledge.models import Membership, Role
from knowledge.services.tokens import token_create
from tests.factories import ProjectFactory, UserFactory


@pytest.fixture
def owner(db):
    return UserFactory(username="rest-owner")


@pytest.fixture
def acme(db, owner):
    """Project "acme", maintained by the token owner (writes need a role: issue 6)."""
    project = ProjectFactory(slug="acme", name="Acme Corp")
    Membership.objects.create(project=project, user=owner, role=Role.MAINTAINER)
    return project


def _client(secret: str) -> Client:
    return Client(headers={"Authorization": f"Bearer {secret}"})


@pytest.fixture
def api(owner, acme):
    secret = token_create(actor=Actor.system(), user=owner, name="rest").secret
    return _client(secret)


@pytest.fixture
def read_api(owner, acme):
    secret = token_create(actor=Actor.system(), user=owner, name="ro", scope="read").secret
    return _client(secret)
