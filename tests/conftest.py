"""Shared fixtures. The database is the real embedded PostgreSQL with pgvector (see settings).

Fixtures that need the database request `db`; tests/mcp_api overrides `db` with a committing
one (its server answers from other threads), so the same fixtures serve both.
"""

import pytest

from knowledge.actors import Actor
from knowledge.models import Membership, Role
from knowledge.services.tokens import token_create
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


@pytest.fixture
def owner(db):
    """The owner of the API tokens below, maintainer of `acme`."""
    return UserFactory(username="owner")


@pytest.fixture
def acme(owner):
    """Project "acme", maintained by the token owner (writes need a role: issue 6)."""
    project = ProjectFactory(slug="acme", name="Acme Corp")
    Membership.objects.create(project=project, user=owner, role=Role.MAINTAINER)
    return project


@pytest.fixture
def make_token(owner):
    """make_token(**options of token_create) → the secret of a new token of the owner's."""

    def make(name: str = "test", **options) -> str:
        return token_create(actor=Actor.system(), user=owner, name=name, **options).secret

    return make


@pytest.fixture
def token(make_token):
    """A write token of the owner's, labelled agent:pytest."""
    return make_token(agent_label="agent:pytest")


@pytest.fixture
def read_token(make_token):
    return make_token(scope="read")


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    # Only what makes tests fast: a cheap hasher for the many users fixtures create.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _no_kept_search_answers():
    # A committing test's database is emptied by TRUNCATE, which no write service sees: answers
    # kept by an earlier test must not answer this one's searches.
    from knowledge.search import result_cache

    result_cache.clear()


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    """Timings a test left buffered must not be flushed at exit: by then pytest-django has torn
    the test database down and the connection points at the installation's own database."""
    from ops import timing

    timing.discard()


# Long tests go out first, so no xdist worker starts one while the others are finishing. Only
# tests that use no test database (pytest-django runs those after the others, which put these
# right before the browser tests at the end): each starts its own processes and servers.
FIRST = (
    "tests/test_team_mode.py",
    "tests/test_isolation.py::test_a_test_run_leaves_a_live_installations_queue",
    "tests/test_serve.py::test_serve_on_a_never_migrated_database",
    "tests/test_embedded_start.py::",
)


def pytest_collection_modifyitems(session, config, items):
    def rank(item) -> int:
        return next((i for i, p in enumerate(FIRST) if item.nodeid.startswith(p)), len(FIRST))

    items.sort(key=rank)
