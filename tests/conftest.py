"""Shared fixtures. The database is the real embedded PostgreSQL with pgvector (see settings)."""

import pytest

from knowledge.actors import Actor
from knowledge.models import Membership, Role
from tests.factories import ProjectFactory, StaffFactory, UserFactory


@pytest.fixture
def user(db):
    return UserFactory(username="alice")


@pytest.fixture
def actor(user):
    return Actor.for_user(user)


@pytest.fixture
def agent(user):
    return Actor(user=user, agent="agent:test")


@pytest.fixture
def read_only_actor(user):
    return Actor(user=user, agent="agent:reader", scopes=frozenset({"read"}))


@pytest.fixture
def staff(db):
    return StaffFactory(username="admin")


@pytest.fixture
def project(db, user):
    """Project "acme", where the default user (alice) has the editor role."""
    project = ProjectFactory(slug="acme", name="Acme")
    Membership.objects.create(project=project, user=user, role=Role.EDITOR)
    return project


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    # Only what makes tests fast: a cheap hasher for the many users fixtures create.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
