"""People see and end what they connected: the tokens page lists connected clients (projects,
access, last use) and personal tokens, each with one button that ends it; the admin lists the
connections (staff their own, superusers everyone's) and revokes clients for everyone."""

from __future__ import annotations

import pytest
from django.urls import reverse

from knowledge.actors import Actor
from knowledge.models import Membership, OAuthClient, OAuthGrant, Role
from knowledge.services import (
    ClientRegistration,
    oauth_client_register,
    oauth_code_exchange,
    oauth_consent,
    token_authenticate,
    token_create,
)
from mcp_api.protected_resource import mcp_resources
from tests.factories import ProjectFactory, StaffFactory, UserFactory
from tests.mcp_api.oauth.conftest import CALLBACK, pkce

pytestmark = pytest.mark.django_db


def connect(person, name: str = "Claude Code", projects=None):
    """A client connected by `person` (the services the flow calls), and its access token."""
    client_id = f"client-{name}-{person.pk}"
    oauth_client_register(
        actor=Actor.system(), client_id=client_id, secret=None,
        registration=ClientRegistration(name=name, redirect_uris=[CALLBACK]),
    )  # fmt: skip
    code = oauth_consent(
        actor=Actor.for_user(person), client_id=client_id, redirect_uri=CALLBACK,
        code_challenge=pkce()[1], resource=sorted(mcp_resources())[0], scope="read",
        projects=projects,
    )  # fmt: skip
    return oauth_code_exchange(actor=Actor.system(), client_id=client_id, code=code)


@pytest.fixture
def dana():
    person = UserFactory(username="dana")
    project = ProjectFactory(slug="launch")
    Membership.objects.create(project=project, user=person, role=Role.EDITOR)
    return person


def test_the_tokens_page_lists_connected_clients_and_disconnects_one(client, dana):
    issued = connect(dana, projects=[dana.memberships.get().project_id])
    token_authenticate(issued.access_token, resources=mcp_resources())  # used once
    token_create(actor=Actor.for_user(dana), user=dana, name="laptop script", scope="read")
    client.force_login(dana)
    page = client.get(reverse("web:tokens"))
    html = page.content.decode()
    assert page.status_code == 200
    row = html[html.index('data-client="Claude Code"') :][:900]
    assert "registered itself" in row and "127.0.0.1:9" in row
    assert "launch" in row and ">read<" in row and "never" not in row
    assert "laptop script" in html

    grant_client = OAuthClient.objects.get(name="Claude Code")
    answer = client.post(reverse("web:disconnect", args=[grant_client.pk]), follow=True)
    assert "Disconnected" in answer.content.decode()
    assert OAuthGrant.objects.get().revoked_reason == "disconnected by its person"
    assert token_authenticate(issued.access_token, resources=mcp_resources()) is None
    assert "Claude Code" not in client.get(reverse("web:tokens")).content.decode()


def test_nobody_disconnects_another_persons_client(client, dana):
    issued = connect(dana)
    mallory = UserFactory(username="mallory")
    client.force_login(mallory)
    assert "Claude Code" not in client.get(reverse("web:tokens")).content.decode()
    pk = OAuthClient.objects.get().pk
    answer = client.post(reverse("web:disconnect", args=[pk]), follow=True)
    assert "no live connection of yours" in answer.content.decode()
    assert OAuthGrant.objects.get().revoked_at is None
    assert token_authenticate(issued.access_token, resources=mcp_resources()) is not None


def test_the_admin_lists_connections_and_revokes_a_client_for_everyone(client, dana):
    issued = connect(dana)
    other = connect(UserFactory(username="sam"))
    admin = StaffFactory(username="root")
    client.force_login(admin)
    listing = client.get(reverse("admin:knowledge_oauthgrant_changelist")).content.decode()
    assert listing.count("Claude Code") >= 2 and "every project of its user" in listing
    pk = OAuthClient.objects.get(name="Claude Code", client_id__endswith=f"-{dana.pk}").pk
    client.post(
        reverse("admin:knowledge_oauthclient_changelist"),
        {"action": "revoke", "_selected_action": [pk]},
    )
    assert token_authenticate(issued.access_token, resources=mcp_resources()) is None
    assert token_authenticate(other.access_token, resources=mcp_resources()) is not None
    assert OAuthClient.objects.get(pk=pk).revoked_at is not None


def test_staff_see_only_their_own_connections_in_the_admin(client, dana):
    connect(dana, name="Dana's agent")
    staff = UserFactory(username="sam", is_staff=True)
    connect(staff, name="Sam's agent")
    client.force_login(staff)
    listing = client.get(reverse("admin:knowledge_oauthgrant_changelist")).content.decode()
    assert "Sam&#x27;s agent" in listing and "Dana" not in listing
    assert client.get(reverse("admin:knowledge_oauthclient_changelist")).status_code == 403
