"""Identity stays true after sign-in: token lifetime, groups claim semantics, revoking access."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import Group
from django.contrib.sessions.models import Session
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from knowledge.actors import Actor
from knowledge.errors import Forbidden, ValidationFailed
from knowledge.models import ApiToken
from knowledge.services import token_authenticate, token_create, user_access_revoke
from memory_site.sso.adapters import claimed_groups, sync_groups
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_a_token_without_expiry_gets_the_maximum_lifetime(owner):
    made = token_create(actor=Actor.system(), user=owner, name="laptop")
    left = made.token.expires_at - timezone.now()
    assert timedelta(days=89, hours=23) < left <= timedelta(days=90)


def test_a_longer_expiry_is_refused(owner):
    with pytest.raises(ValidationFailed, match="at most 90 days"):
        token_create(
            actor=Actor.system(),
            user=owner,
            name="forever",
            expires_at=timezone.now() + timedelta(days=400),
        )


def test_an_old_token_without_expiry_stops_at_the_maximum_age(owner, settings):
    made = token_create(actor=Actor.system(), user=owner, name="old")
    assert token_authenticate(made.secret) is not None
    # A token from before the setting: no expiry, made 91 days ago.
    ApiToken.objects.filter(pk=made.token.pk).update(
        expires_at=None, created_at=timezone.now() - timedelta(days=91)
    )
    assert token_authenticate(made.secret) is None
    settings.CAIRN_TOKEN_MAX_DAYS = 0  # no limit configured: it works again
    assert token_authenticate(made.secret) is not None


def test_a_missing_groups_claim_leaves_groups_alone_and_an_empty_one_clears(settings):
    settings.CAIRN_OIDC_GROUPS_CLAIM = "groups"
    settings.CAIRN_OIDC_SUPERUSER_GROUPS = ["admins"]
    user = UserFactory()
    sync_groups(user, claimed_groups({"groups": ["admins", "contractors"]}))
    assert set(user.groups.values_list("name", flat=True)) == {"admins", "contractors"}
    assert user.is_superuser

    assert claimed_groups({"email": "a@b"}) is None
    sync_groups(user, claimed_groups({"email": "a@b"}))
    assert set(user.groups.values_list("name", flat=True)) == {"admins", "contractors"}

    sync_groups(user, claimed_groups({"groups": []}))
    user.refresh_from_db()
    assert not user.groups.exists()
    assert not user.is_superuser  # removed from the admin group in the IdP: no longer superuser


def test_full_group_paths_are_compared_when_configured(settings):
    settings.CAIRN_OIDC_GROUPS_CLAIM = "groups"
    claims = {"groups": ["/org-a/admins", "/org-b/admins/"]}
    assert claimed_groups(claims) == {"admins"}
    settings.CAIRN_OIDC_GROUP_FULL_PATH = True
    assert claimed_groups(claims) == {"org-a/admins", "org-b/admins"}
    settings.CAIRN_OIDC_SUPERUSER_GROUPS = ["org-a/admins"]
    user = UserFactory()
    sync_groups(user, {"org-b/admins"})
    assert not user.is_superuser


def test_revoke_access_revokes_tokens_ends_sessions_and_password_login(client, owner, capsys):
    made = token_create(actor=Actor.system(), user=owner, name="t")
    owner.set_password("hunter2-long-enough")
    owner.save()
    client.force_login(owner)
    other = UserFactory()
    other.set_password("other-pass-long-enough")
    other.save()
    other_token = token_create(actor=Actor.system(), user=other, name="t")
    assert Session.objects.count() == 1

    call_command("revoke_access", owner.username)

    out = capsys.readouterr().out
    assert "Revoked 1 token(s) and ended 1 session(s)" in out
    assert "their password sign-in is disabled" in out
    assert token_authenticate(made.secret) is None
    assert token_authenticate(other_token.secret) is not None
    assert not Session.objects.exists()
    # Nor can they sign in again with the password they had, nor at all: the account is off.
    owner.refresh_from_db()
    assert not owner.has_usable_password() and not owner.is_active
    assert not Client().login(username=owner.username, password="hunter2-long-enough")
    assert Client().login(username=other.username, password="other-pass-long-enough")


def test_only_superusers_revoke_access(owner):
    with pytest.raises(Forbidden, match="superuser"):
        user_access_revoke(actor=Actor.for_user(UserFactory()), user=owner)
    assert Group.objects.count() == 0
