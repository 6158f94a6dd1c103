"""Fixtures for the access tests: the matrix world and a real OIDC provider on loopback."""

from __future__ import annotations

import json

import pytest
from django.db import transaction
from django.test import override_settings

from tests.access.world import GUEST_GROUP, SENSITIVITIES, build_world

# What the function-scoped settings fixtures give a test, for worlds built outside of one.
WORLD_SETTINGS = {
    "CAIRN_GUEST_GROUPS": [GUEST_GROUP],
    "PASSWORD_HASHERS": ["django.contrib.auth.hashers.MD5PasswordHasher"],
}


@pytest.fixture
def guest_groups(settings):
    settings.CAIRN_GUEST_GROUPS = [GUEST_GROUP]


@pytest.fixture(scope="module")
def sensitivity(request):
    """The target project's sensitivity, a module-scoped parameter (indirect=True) so that
    pytest groups a module's cases by it and each world is built once."""
    return request.param


@pytest.fixture(scope="module")
def shared_world(sensitivity, django_db_setup, django_db_blocker):
    """The matrix world for one sensitivity, built once in a transaction rolled back after the
    last case that uses it. Each case runs in its own savepoint inside (pytest-django's `db`)."""
    outer = transaction.atomic()
    # Like TestCase.setUpTestData's block: the services' durable transactions may run inside it.
    outer._from_testcase = True
    with django_db_blocker.unblock(), outer:
        with override_settings(**WORLD_SETTINGS):
            world = build_world(sensitivity)
        yield world
        transaction.set_rollback(True)


@pytest.fixture
def world(shared_world, role, db):
    """The case's world, seen by `role` (see World.as_role)."""
    return shared_world.as_role(role)


@pytest.fixture(scope="module")
def oidc_server():
    """A real OpenID Connect provider (oidc-provider-mock) on loopback, with a few people."""
    from oidc_provider_mock import User, run_server_in_thread

    people = [
        User(
            sub="alice-sub",
            claims={
                "email": "alice@corp.example",
                "email_verified": True,
                "preferred_username": "alice",
                "groups": ["/cairn-staff", "engineering"],
            },
        ),
        User(
            sub="root-sub",
            claims={
                "email": "root@corp.example",
                "email_verified": True,
                "preferred_username": "rooty",
                "groups": ["cairn-admins"],
            },
        ),
        User(
            sub="mallory-sub",
            claims={"email": "mallory@elsewhere.example", "email_verified": True, "groups": []},
        ),
        User(
            sub="eve-sub",
            claims={"email": "eve@corp.example", "email_verified": False, "groups": []},
        ),
    ]
    with run_server_in_thread(user_claims=people) as server:
        yield f"http://localhost:{server.server_port}"


@pytest.fixture
def sso(settings, oidc_server):
    """Point allauth at the loopback provider, the way CAIRN_OIDC_PROVIDERS would."""
    from memory_site.oidc_config import allauth_apps, providers_from_env

    provider = {
        "id": "corp",
        "name": "Corp SSO",
        "issuer": oidc_server,
        "client_id": "cairn-test",
        "secret": "s3cret",
    }
    providers = providers_from_env({"CAIRN_OIDC_PROVIDERS": json.dumps([provider])})
    settings.SOCIALACCOUNT_PROVIDERS = {
        "openid_connect": {"APPS": allauth_apps(providers), "OAUTH_PKCE_ENABLED": True}
    }
    settings.CAIRN_OIDC_ALLOWED_DOMAINS = ["corp.example"]
    settings.CAIRN_OIDC_GROUPS_CLAIM = "groups"
    settings.CAIRN_OIDC_STAFF_GROUPS = ["cairn-staff"]
    settings.CAIRN_OIDC_SUPERUSER_GROUPS = ["cairn-admins"]
    return oidc_server


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    """The matrix's cases one sensitivity after the other (after pytest's own ordering, which
    interleaves them when a case's parameters are module-scoped), so each world is built once."""
    slots = [i for i, item in enumerate(items) if _matrix_sensitivity(item) is not None]
    ordered = sorted((items[i] for i in slots), key=_matrix_sensitivity)
    for slot, item in zip(slots, ordered, strict=True):
        items[slot] = item


def _matrix_sensitivity(item) -> int | None:
    callspec = getattr(item, "callspec", None)
    module = getattr(item, "module", None)
    if getattr(module, "__name__", "") != "tests.access.test_leak_matrix" or callspec is None:
        return None
    sensitivity = callspec.params.get("sensitivity")
    return None if sensitivity is None else SENSITIVITIES.index(sensitivity)
