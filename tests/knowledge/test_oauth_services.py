"""The OAuth services in process: who may consent, what a code and a refresh token are good
for, and that revoking a person's access ends their connected clients too."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from knowledge.actors import Actor
from knowledge.errors import Forbidden, NotFound, ValidationFailed
from knowledge.models import ApiToken, OAuthCode, OAuthGrant, OAuthRefreshToken
from knowledge.services import (
    ClientRegistration,
    IssuedTokens,
    TokenRefusal,
    oauth_client_register,
    oauth_clients_sweep,
    oauth_code_exchange,
    oauth_consent,
    oauth_token_refresh,
    token_authenticate,
    user_access_revoke,
)
from tests.factories import ProjectFactory, UserFactory

pytestmark = pytest.mark.django_db
MCP = "http://127.0.0.1:8000/mcp"
CALLBACK = "http://127.0.0.1:9/callback"


@pytest.fixture
def client_id():
    oauth_client_register(
        actor=Actor.system(), client_id="c1", secret=None,
        registration=ClientRegistration(name="Agent", redirect_uris=[CALLBACK]),
    )  # fmt: skip
    return "c1"


def consent(person, client_id, **choice):
    fields = {"redirect_uri": CALLBACK, "code_challenge": "x" * 43, "resource": MCP,
              "scope": "write", "projects": None} | choice  # fmt: skip
    return oauth_consent(actor=Actor.for_user(person), client_id=client_id, **fields)


def test_only_a_signed_in_person_consents_and_only_to_what_they_see(client_id):
    dana = UserFactory(username="dana")
    hidden = ProjectFactory(slug="hidden", sensitivity="restricted")
    with pytest.raises(Forbidden):  # an agent's token cannot consent for its person
        oauth_consent(
            actor=Actor(user=dana, agent="agent:x", token_id=7), client_id=client_id,
            redirect_uri=CALLBACK, code_challenge="x" * 43, resource=MCP, scope="write",
            projects=None,
        )  # fmt: skip
    with pytest.raises(NotFound):
        consent(dana, client_id, projects=[hidden.pk])
    with pytest.raises(ValidationFailed):
        consent(dana, client_id, projects=[])
    with pytest.raises(ValidationFailed):
        consent(dana, client_id, scope="admin")
    with pytest.raises(NotFound):
        consent(dana, "nobody")
    assert OAuthCode.objects.count() == 0


def test_a_code_past_its_minutes_gives_nothing(client_id):
    dana = UserFactory(username="dana")
    code = consent(dana, client_id)
    OAuthCode.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    outcome = oauth_code_exchange(actor=Actor.system(), client_id=client_id, code=code)
    assert isinstance(outcome, TokenRefusal) and "expired" in outcome.description
    assert OAuthGrant.objects.count() == 0


def test_another_client_cannot_use_a_code_or_refresh_token(client_id):
    dana = UserFactory(username="dana")
    oauth_client_register(
        actor=Actor.system(), client_id="c2", secret=None,
        registration=ClientRegistration(name="Other", redirect_uris=[CALLBACK]),
    )  # fmt: skip
    code = consent(dana, client_id)
    assert isinstance(
        oauth_code_exchange(actor=Actor.system(), client_id="c2", code=code), TokenRefusal
    )
    issued = oauth_code_exchange(actor=Actor.system(), client_id=client_id, code=code)
    assert isinstance(issued, IssuedTokens)
    stolen = oauth_token_refresh(
        actor=Actor.system(), client_id="c2", refresh_token=issued.refresh_token
    )
    assert isinstance(stolen, TokenRefusal) and "unknown" in stolen.description
    assert OAuthRefreshToken.objects.get().used_at is None  # nothing spent


def test_revoking_a_persons_access_ends_their_connected_clients(client_id):
    dana = UserFactory(username="dana")
    issued = oauth_code_exchange(
        actor=Actor.system(), client_id=client_id, code=consent(dana, client_id)
    )
    assert token_authenticate(issued.access_token, resources=[MCP]) is not None
    user_access_revoke(actor=Actor.system(), user=dana)
    assert token_authenticate(issued.access_token, resources=[MCP]) is None
    assert OAuthGrant.objects.get().revoked_reason == "the person's access was revoked"
    refused = oauth_token_refresh(
        actor=Actor.system(), client_id=client_id, refresh_token=issued.refresh_token
    )
    assert isinstance(refused, TokenRefusal) and "revoked" in refused.description


def test_the_sweep_forgets_unused_registrations_and_old_codes_only(client_id):
    dana = UserFactory(username="dana")
    used = oauth_code_exchange(
        actor=Actor.system(), client_id=client_id, code=consent(dana, client_id)
    )
    oauth_client_register(
        actor=Actor.system(), client_id="idle", secret=None,
        registration=ClientRegistration(name="Idle", redirect_uris=[CALLBACK]),
    )  # fmt: skip
    from knowledge.models import OAuthClient

    OAuthClient.objects.update(created_at=timezone.now() - timedelta(days=2))
    OAuthCode.objects.update(expires_at=timezone.now() - timedelta(days=1))
    report = oauth_clients_sweep(actor=Actor.system())
    assert (report.clients, report.codes) == (1, 1)
    assert list(OAuthClient.objects.values_list("client_id", flat=True)) == [client_id]
    assert token_authenticate(used.access_token, resources=[MCP]) is not None
    assert ApiToken.objects.count() == 1
