"""The whole authorization-code flow: Django → a real OIDC provider on loopback → callback."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from allauth.socialaccount.models import SocialAccount
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client

from knowledge.actors import Actor
from knowledge.models import Entry, Membership, Role
from knowledge.selectors import visible_projects
from tests.factories import EntryFactory, ProjectFactory, UserFactory

pytestmark = pytest.mark.django_db
User = get_user_model()
LOGIN = "/accounts/oidc/corp/login/"


def sign_in(client: Client, sub: str, next_url: str = "/admin/"):
    """Press "Sign in with Corp SSO", pick `sub` at the provider, follow the callback."""
    start = client.post(LOGIN, {"process": "login", "next": next_url})
    assert start.status_code == 302, start.content[:500]
    authorize = start["Location"]
    query = parse_qs(urlsplit(authorize).query)
    assert query["response_type"] == ["code"] and query["client_id"] == ["cairn-test"]
    assert "code_challenge" in query  # PKCE
    # The provider's consent form takes only the subject; its answer redirects to Django.
    answer = httpx.post(authorize, data={"sub": sub}, follow_redirects=False)
    assert answer.status_code == 302, answer.text[:500]
    callback = urlsplit(answer.headers["location"])
    assert callback.path == "/accounts/oidc/corp/login/callback/"
    assert "code" in parse_qs(callback.query)
    return client.get(f"{callback.path}?{callback.query}")


def test_login_pages_offer_the_provider(sso, client):
    for url in ("/admin/login/", "/accounts/login/"):
        html = client.get(url).content.decode()
        assert "Sign in with Corp SSO" in html, url
        assert f'action="{LOGIN}"' in html and 'method="post"' in html
        assert 'name="password"' in html  # passwords stay on by default


def test_a_get_does_not_start_a_login(sso, client):
    # Starting with GET would let any page sign a visitor in (login CSRF): allauth wants POST.
    response = client.get(LOGIN)
    assert response.status_code == 200
    assert "localhost" not in response.get("Location", "")


def test_first_sign_in_provisions_the_user_and_maps_groups(sso, client):
    response = sign_in(client, "alice-sub")
    assert response.status_code == 302 and response["Location"] == "/admin/"
    user = User.objects.get(email="alice@corp.example")
    assert client.session["_auth_user_id"] == str(user.pk)
    assert user.username == "alice"
    assert not user.has_usable_password()
    assert SocialAccount.objects.get(user=user).uid == "alice-sub"
    assert set(user.groups.values_list("name", flat=True)) == {"cairn-staff", "engineering"}
    assert user.is_staff and not user.is_superuser
    # The session works: the admin index opens for this staff member.
    assert client.get("/admin/").status_code == 200


def test_sso_staff_see_and_edit_only_their_projects_in_the_admin(sso, client):
    mine = ProjectFactory(slug="mine", name="Mine", sensitivity="confidential")
    theirs = ProjectFactory(slug="theirs", name="Theirs", sensitivity="restricted")
    root = Actor.for_user(UserFactory(username="root", is_superuser=True))
    EntryFactory(project=mine, title="Our runbook", actor=root)
    EntryFactory(project=theirs, title="Their secret", actor=root)
    sign_in(client, "alice-sub")
    engineering = Group.objects.get(name="engineering")
    Membership.objects.create(project=mine, group=engineering, role=Role.EDITOR)
    html = client.get("/admin/knowledge/entry/").content.decode()
    assert "Our runbook" in html and "Their secret" not in html
    html = client.get("/admin/knowledge/project/").content.decode()
    assert "mine" in html and "theirs" not in html
    hidden = Entry.objects.get(title="Their secret")
    assert client.get(f"/admin/knowledge/entry/{hidden.pk}/change/").status_code == 302


def test_group_membership_grants_project_access(sso, client):
    secret = ProjectFactory(slug="secret", name="Secret", sensitivity="restricted")
    sign_in(client, "alice-sub")
    user = User.objects.get(email="alice@corp.example")
    assert not visible_projects(Actor.for_user(user)).filter(pk=secret.pk).exists()
    engineering = user.groups.get(name="engineering")
    Membership.objects.create(project=secret, group=engineering, role=Role.VIEWER)
    assert visible_projects(Actor.for_user(user)).filter(pk=secret.pk).exists()


def test_a_second_sign_in_follows_the_claim(sso, client, oidc_server):
    sign_in(client, "alice-sub")
    client.logout()
    httpx.put(
        f"{oidc_server}/users/alice-sub",
        json={"email": "alice@corp.example", "email_verified": True, "groups": ["support"]},
    ).raise_for_status()
    try:
        sign_in(client, "alice-sub")
        user = User.objects.get(email="alice@corp.example")
        assert User.objects.filter(email="alice@corp.example").count() == 1
        assert set(user.groups.values_list("name", flat=True)) == {"support"}
        assert not user.is_staff  # left the staff group at the provider
    finally:
        httpx.put(
            f"{oidc_server}/users/alice-sub",
            json={
                "email": "alice@corp.example",
                "email_verified": True,
                "preferred_username": "alice",
                "groups": ["/cairn-staff", "engineering"],
            },
        ).raise_for_status()


def test_the_superuser_group_makes_superusers(sso, client):
    sign_in(client, "root-sub")
    user = User.objects.get(email="root@corp.example")
    assert user.is_superuser and user.is_staff


def test_a_denied_domain_is_refused_clearly_and_leaves_no_user(sso, client):
    before = User.objects.count()
    response = sign_in(client, "mallory-sub")
    assert response.status_code == 403
    html = response.content.decode()
    assert "Sign-in refused" in html
    assert "not in a domain allowed" in html and "corp.example" in html
    assert "mallory@elsewhere.example" in html
    assert User.objects.count() == before
    assert not SocialAccount.objects.exists()
    assert "_auth_user_id" not in client.session


def test_an_unverified_email_is_refused(sso, client):
    response = sign_in(client, "eve-sub")
    assert response.status_code == 403
    assert "not verified" in response.content.decode()
    assert not User.objects.filter(email="eve@corp.example").exists()


def test_a_provider_that_omits_email_verified_is_trusted(sso, client, oidc_server):
    # Entra ID sends no email_verified claim; only an explicit false is refused.
    httpx.put(
        f"{oidc_server}/users/zed-sub", json={"email": "zed@corp.example", "groups": []}
    ).raise_for_status()
    assert sign_in(client, "zed-sub").status_code == 302
    assert User.objects.filter(email="zed@corp.example").exists()


def test_without_domain_rules_any_verified_address_may_enter(sso, client, settings):
    settings.CAIRN_OIDC_ALLOWED_DOMAINS = []
    assert sign_in(client, "mallory-sub").status_code == 302
    assert User.objects.filter(email="mallory@elsewhere.example").exists()


def test_password_login_can_be_switched_off(sso, client, settings):
    UserFactory(username="local", is_staff=True, password="pw-for-local-1")
    ok = client.post("/admin/login/", {"username": "local", "password": "pw-for-local-1"})
    assert ok.status_code == 302
    client.logout()
    ok = client.post("/accounts/login/", {"login": "local", "password": "pw-for-local-1"})
    assert ok.status_code == 302 and client.session["_auth_user_id"]
    client.logout()
    settings.CAIRN_PASSWORD_LOGIN = False
    refused = client.post("/admin/login/", {"username": "local", "password": "pw-for-local-1"})
    assert refused.status_code == 200 and "_auth_user_id" not in client.session
    refused = client.post("/accounts/login/", {"login": "local", "password": "pw-for-local-1"})
    assert "_auth_user_id" not in client.session
    html = client.get("/admin/login/").content.decode()
    assert 'name="password"' not in html and "Sign in with Corp SSO" in html
    # Single sign-on still works.
    assert sign_in(client, "alice-sub").status_code == 302
    assert client.session["_auth_user_id"]


def test_nobody_can_sign_up_locally(client, db):
    response = client.post(
        "/accounts/signup/",
        {
            "username": "walkin",
            "email": "walkin@corp.example",
            "password1": "x9!kLm2#qq",
            "password2": "x9!kLm2#qq",
        },
    )
    assert not User.objects.filter(username="walkin").exists()
    assert response.status_code == 200 and "closed" in response.content.decode().lower()


def test_sso_only_the_first_superuser_comes_from_the_command(sso, client, settings):
    settings.CAIRN_PASSWORD_LOGIN = False
    settings.SOCIALACCOUNT_EMAIL_AUTHENTICATION = True
    settings.SOCIALACCOUNT_EMAIL_AUTHENTICATION_AUTO_CONNECT = True
    settings.CAIRN_OIDC_SUPERUSER_GROUPS = ["cairn-admins"]
    from django.core.management import call_command

    call_command("createsuperuser", username="boss", email="root@corp.example", interactive=False)
    boss = User.objects.get(username="boss")
    assert sign_in(client, "root-sub").status_code == 302
    assert client.session["_auth_user_id"] == str(boss.pk)
    assert User.objects.filter(email="root@corp.example").count() == 1
    boss.refresh_from_db()
    assert boss.is_superuser and SocialAccount.objects.filter(user=boss).exists()


def test_a_first_sign_in_without_a_groups_claim_makes_a_guest_when_guests_exist(
    sso, client, oidc_server, settings
):
    # Fail closed: with no claim Cairn cannot tell a member from a contractor.
    settings.CAIRN_GUEST_GROUPS = ["contractors"]
    httpx.put(
        f"{oidc_server}/users/nog-sub", json={"email": "nog@corp.example", "email_verified": True}
    ).raise_for_status()
    assert sign_in(client, "nog-sub").status_code == 302
    user = User.objects.get(email="nog@corp.example")
    assert set(user.groups.values_list("name", flat=True)) == {"contractors"}
    assert not user.is_staff and not user.is_superuser


def test_revoked_access_keeps_single_sign_on_out(sso, client, capsys):
    from django.core.management import call_command

    from knowledge.services import token_authenticate, token_create

    assert sign_in(client, "root-sub").status_code == 302  # a superuser by the provider's groups
    root = User.objects.get(email="root@corp.example")
    assert root.is_superuser and root.is_staff
    secret = token_create(actor=Actor.system(), user=root, name="laptop").secret

    call_command("revoke_access", root.username)
    assert "The account is deactivated and no longer staff or a superuser" in (
        capsys.readouterr().out
    )
    root.refresh_from_db()
    assert not (root.is_active or root.is_staff or root.is_superuser)
    assert token_authenticate(secret) is None
    assert client.get("/admin/").status_code == 302  # the session ended

    # The provider still vouches for them, groups and all: Cairn says no, and keeps the flags.
    response = sign_in(client, "root-sub")
    assert response.status_code == 403
    html = response.content.decode()
    assert "account is deactivated" in html and "No account was created" not in html
    assert "_auth_user_id" not in client.session
    root.refresh_from_db()
    assert not (root.is_active or root.is_staff or root.is_superuser)
    assert User.objects.filter(email="root@corp.example").count() == 1
