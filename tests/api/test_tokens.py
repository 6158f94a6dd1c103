"""Personal API tokens: the service, the management command and the admin."""

import re
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from knowledge.actors import Actor
from knowledge.errors import Forbidden, ValidationFailed
from knowledge.models import ApiToken
from knowledge.services.tokens import token_authenticate, token_create, token_revoke
from tests.factories import ProjectFactory, StaffFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_secret_is_returned_once_and_stored_hashed(owner):
    created = token_create(actor=Actor.for_user(owner), user=owner, name="laptop")
    assert created.secret.startswith("cairn_")
    row = ApiToken.objects.get(pk=created.token.pk)
    assert row.secret_hash == ApiToken.hash_secret(created.secret)
    assert created.secret not in (row.prefix, row.secret_hash, row.name)
    assert created.secret.startswith(row.prefix)


def test_authenticate_builds_the_actor(owner, acme):
    secret = token_create(
        actor=Actor.system(),
        user=owner,
        name="ro",
        scope="read",
        projects=["acme"],
        agent_label="agent:cc",
    ).secret
    actor = token_authenticate(secret)
    assert actor.user == owner and actor.agent == "agent:cc"
    assert actor.scopes == frozenset({"read"}) and not actor.can_write
    assert actor.project_ids == frozenset({acme.pk})
    assert ApiToken.objects.get(user=owner).last_used_at is not None


def test_revoked_expired_unknown_and_inactive_tokens_fail(owner):
    live = token_create(actor=Actor.system(), user=owner, name="live").secret
    assert token_authenticate(live) is not None  # each refusal below is beside a live token
    assert token_authenticate("cairn_unknown") is None
    assert token_authenticate(live + "x") is None
    assert token_authenticate("") is None
    a = token_create(actor=Actor.system(), user=owner, name="a")
    token_revoke(actor=Actor.for_user(owner), token_id=a.token.pk)
    assert token_authenticate(a.secret) is None
    b = token_create(
        actor=Actor.system(), user=owner, name="b", expires_at=timezone.now() + timedelta(1)
    )
    ApiToken.objects.filter(pk=b.token.pk).update(expires_at=timezone.now())
    assert token_authenticate(b.secret) is None
    c = token_create(actor=Actor.system(), user=owner, name="c")
    owner.is_active = False
    owner.save()
    assert token_authenticate(c.secret) is None


def test_only_a_secret_shaped_as_cairn_issues_them_is_looked_up(owner, django_assert_num_queries):
    """A bearer secret is looked up only with Cairn's prefix and at most 200 characters (an
    issued one is 49): a row whose hash matched any other text would still not let it in, and
    an overlong one costs no query."""

    def stored(secret: str) -> str:
        created = token_create(actor=Actor.system(), user=owner, name=secret[:20])
        ApiToken.objects.filter(pk=created.token.pk).update(
            secret_hash=ApiToken.hash_secret(secret)
        )
        return secret

    longest = stored("cairn_" + "a" * 194)
    assert len(longest) == 200 and token_authenticate(longest) is not None
    assert token_authenticate(stored("cairn_" + "b" * 195)) is None  # 201 characters
    assert token_authenticate(stored("nocairn_" + "c" * 40)) is None  # not Cairn's prefix
    with django_assert_num_queries(0):
        assert token_authenticate("cairn_" + "d" * 1_000_000) is None


def test_with_no_longest_lifetime_a_token_without_expiry_lives_on(owner, settings):
    settings.CAIRN_TOKEN_MAX_DAYS = 0
    created = token_create(actor=Actor.system(), user=owner, name="forever")
    assert created.token.expires_at is None
    ApiToken.objects.filter(pk=created.token.pk).update(created_at="2000-01-01T00:00:00Z")
    assert token_authenticate(created.secret) is not None
    assert token_authenticate(created.secret) is not None  # and again, from the actor cache


def test_only_the_owner_or_a_superuser_creates_tokens(owner):
    other = UserFactory(username="mallory")
    with pytest.raises(Forbidden):
        token_create(actor=Actor.for_user(other), user=owner, name="x")
    token_create(actor=Actor.for_user(StaffFactory(username="root")), user=owner, name="x")
    with pytest.raises(ValidationFailed, match="scope"):
        token_create(actor=Actor.for_user(owner), user=owner, name="x", scope="admin")
    with pytest.raises(ValidationFailed, match="name"):
        token_create(actor=Actor.for_user(owner), user=owner, name=" ")


def test_a_token_cannot_mint_tokens(owner):
    secret = token_create(actor=Actor.system(), user=owner, name="a").secret
    with pytest.raises(Forbidden):
        token_create(actor=token_authenticate(secret), user=owner, name="b")


def test_create_token_command_prints_the_secret_and_revokes(owner, capsys):
    ProjectFactory(slug="ops")
    call_command("create_token", "owner", "--name", "cli", "--scope", "read", "--project", "ops")
    out = capsys.readouterr()
    secret = out.out.strip()
    assert re.fullmatch(r"cairn_\S+", secret)
    assert "not shown again" in out.err
    actor = token_authenticate(secret)
    assert actor.scopes == frozenset({"read"}) and len(actor.project_ids) == 1
    call_command("create_token", "owner", "--revoke", str(actor.token_id))
    assert token_authenticate(secret) is None
    with pytest.raises(CommandError, match="--name"):
        call_command("create_token", "owner")
    with pytest.raises(CommandError, match="No user"):
        call_command("create_token", "nobody", "--name", "x")


def _cookie_text(cookies) -> str:
    """Every cookie's value, the messages cookie decoded as Django reads it."""
    from django.contrib.messages.storage.cookie import CookieStorage
    from django.http import HttpRequest

    text = [str(cookies)]
    if "messages" in cookies and cookies["messages"].value:
        decoded = CookieStorage(HttpRequest())._decode(cookies["messages"].value) or []
        text += [str(m) for m in decoded]
    return " ".join(text)


def test_admin_shows_the_secret_once_in_the_saves_own_page_and_no_cookie(client, owner):
    staff = StaffFactory(username="root")
    client.force_login(staff)
    response = client.post(
        "/admin/knowledge/apitoken/add/",
        {"user": owner.pk, "name": "from admin", "scope": "write", "agent_label": ""},
    )
    # The save's own answer shows it: no redirect that would carry it in a message.
    assert response.status_code == 200
    page = response.content.decode()
    secret = re.search(r"cairn_[\w-]+", page).group(0)
    assert token_authenticate(secret).user == owner
    assert "not be shown again" in page
    assert "no-store" in response["Cache-Control"]
    # Django's default message storage is a signed (readable) cookie: the secret is in none.
    assert secret not in _cookie_text(response.cookies)
    assert secret not in _cookie_text(client.cookies)
    listing = client.get("/admin/knowledge/apitoken/")
    assert listing.status_code == 200
    assert secret not in listing.content.decode() + _cookie_text(listing.cookies)
    assert ApiToken.objects.get(name="from admin").prefix in listing.content.decode()


def test_staff_see_only_their_own_tokens_in_the_admin(client, owner):
    from django.contrib.auth.models import Permission

    token_create(actor=Actor.system(), user=owner, name="owner's secret token")
    staff = UserFactory(username="clerk", is_staff=True)
    staff.user_permissions.add(*Permission.objects.filter(codename__endswith="apitoken"))
    token_create(actor=Actor.system(), user=staff, name="clerk's token")
    client.force_login(staff)
    listing = client.get("/admin/knowledge/apitoken/").content.decode()
    assert "clerk&#x27;s token" in listing or "clerk's token" in listing
    assert "owner" not in listing


def test_a_narrowed_token_whose_projects_are_gone_says_it_sees_nothing(client, owner, capsys):
    """An empty project list means "all the owner's projects" only for a token made without
    any: one narrowed to projects since deleted must not read as all projects."""
    from knowledge.models import Project
    from mcp_api.profile_text import whoami_text

    ProjectFactory(slug="gone")
    orphan = token_create(actor=Actor.system(), user=owner, name="orphan", projects=["gone"])
    token_create(actor=Actor.system(), user=owner, name="wide")
    Project.objects.filter(slug="gone").delete()  # as the admin's delete does

    client.force_login(StaffFactory(username="root", is_superuser=True))
    listing = client.get("/admin/knowledge/apitoken/").content.decode()
    rows = {name: row for row in listing.split("<tr")[1:] for name in ("orphan", "wide")
            if f">{name}<" in row}  # fmt: skip
    assert "no projects left" in rows["orphan"] and "every project" not in rows["orphan"]
    assert "every project of its user" in rows["wide"]
    page = client.get(f"/admin/knowledge/apitoken/{orphan.token.pk}/change/").content.decode()
    assert "no projects left: it sees nothing; revoke it or create another" in page
    assert "Leave empty for all" not in page

    call_command("create_token", "owner", "--list")
    orphan_line = next(line for line in capsys.readouterr().out.splitlines() if "orphan" in line)
    assert orphan_line.endswith(ApiToken.NO_PROJECTS_LEFT)

    me = selectors_whoami(token_authenticate(orphan.secret))
    assert "no projects left" in whoami_text(me)


def selectors_whoami(actor):
    from knowledge.reads.whoami import actor_profile

    return actor_profile(actor)
