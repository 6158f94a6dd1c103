"""What MCP authorization refuses, each with a clear error and nothing changed (or, for a
replay, the connection ended on purpose): against the live server, one step at a time."""

from __future__ import annotations

import httpx
import pytest

from knowledge.actors import Actor
from knowledge.models import ApiToken, OAuthClient, OAuthCode, OAuthGrant
from knowledge.services import oauth_client_revoke
from tests.mcp_api.oauth.conftest import (
    CALLBACK,
    Person,
    authorize_url,
    connected,
    consent,
    exchange,
    mcp_call,
    pkce,
    refresh,
    register,
    tool,
)


def test_a_redirect_uri_the_client_did_not_register_is_said_on_a_page_and_sent_nowhere(
    live_server_url, dana
):
    client = register(live_server_url)
    _, challenge = pkce()
    for elsewhere in ("https://attacker.example/callback", "http://127.0.0.1:9/other-path"):
        url = authorize_url(live_server_url, client["client_id"], challenge, redirect_uri=elsewhere)
        page = httpx.get(url, timeout=30)
        assert page.status_code == 400
        assert "location" not in page.headers
        assert "not one this client registered" in page.text
        assert "add it again" in page.text  # what to do next
    assert OAuthCode.objects.count() == 0


def test_a_loopback_redirect_uri_may_come_back_on_another_port(live_server_url, dana):
    client = register(live_server_url, redirect_uris=["http://127.0.0.1:33418/callback"])
    _, challenge = pkce()
    url = authorize_url(
        live_server_url,
        client["client_id"],
        challenge,
        redirect_uri="http://127.0.0.1:51234/callback",
    )
    answer = consent(Person(live_server_url), url)
    assert answer["code"] and answer["state"] == "st4te" and answer["iss"] == live_server_url


def test_a_missing_or_wrong_code_verifier_is_refused_and_leaves_the_code_usable(
    live_server_url, dana, mcp_url
):
    client = register(live_server_url)
    verifier, challenge = pkce()
    url = authorize_url(live_server_url, client["client_id"], challenge)
    code = consent(Person(live_server_url), url)["code"]

    missing = exchange(live_server_url, client["client_id"], code, None)
    assert missing.status_code == 400
    assert missing.json()["error"] == "invalid_request"
    assert "code_verifier is missing" in missing.json()["error_description"]
    wrong = exchange(live_server_url, client["client_id"], code, pkce()[0])
    assert wrong.status_code == 400
    assert wrong.json()["error"] == "invalid_grant"
    assert "does not match the code_challenge" in wrong.json()["error_description"]
    assert OAuthGrant.objects.count() == 0 and ApiToken.objects.count() == 0

    right = exchange(live_server_url, client["client_id"], code, verifier)
    assert right.status_code == 200
    assert mcp_call(mcp_url, right.json()["access_token"]).status_code == 200


def test_plain_pkce_implicit_and_a_missing_challenge_go_back_to_the_client_as_errors(
    live_server_url, dana
):
    client = register(live_server_url)
    verifier, challenge = pkce()
    person = Person(live_server_url)
    for params, error in (
        ({"code_challenge": verifier, "code_challenge_method": "plain"}, "invalid_request"),
        ({"response_type": "token"}, "unsupported_response_type"),
        ({"code_challenge": None}, "invalid_request"),
    ):
        page = httpx.get(
            authorize_url(live_server_url, client["client_id"], challenge, **params), timeout=30
        )
        assert page.status_code == 302, params
        assert page.headers["location"].startswith(f"{CALLBACK}?error={error}&")
        assert "state=st4te" in page.headers["location"]
    assert person.pages == [] and OAuthCode.objects.count() == 0


def test_a_code_used_twice_is_refused_and_ends_what_its_first_use_made(
    live_server_url, dana, mcp_url
):
    client = register(live_server_url)
    verifier, challenge = pkce()
    url = authorize_url(live_server_url, client["client_id"], challenge)
    code = consent(Person(live_server_url), url)["code"]
    first = exchange(live_server_url, client["client_id"], code, verifier)
    assert first.status_code == 200
    token = first.json()["access_token"]
    assert mcp_call(mcp_url, token).status_code == 200

    again = exchange(live_server_url, client["client_id"], code, verifier)
    assert again.status_code == 400
    assert again.json()["error"] == "invalid_grant"
    assert "already used" in again.json()["error_description"]
    assert mcp_call(mcp_url, token).status_code == 401
    assert (
        refresh(live_server_url, client["client_id"], first.json()["refresh_token"]).status_code
        == 400
    )
    assert OAuthGrant.objects.get().revoked_reason == "its authorization code was used twice"


def test_a_token_is_for_this_servers_mcp_and_refused_for_any_other_resource(
    live_server_url, dana, mcp_url
):
    client = register(live_server_url)
    verifier, challenge = pkce()
    elsewhere = "https://other.example/mcp"
    # At the authorization endpoint: back to the client, nothing asked of the person.
    page = httpx.get(
        authorize_url(live_server_url, client["client_id"], challenge, resource=elsewhere),
        timeout=30,
    )
    assert page.headers["location"].startswith(f"{CALLBACK}?error=invalid_target&")
    # At the token endpoint.
    url = authorize_url(live_server_url, client["client_id"], challenge)
    code = consent(Person(live_server_url), url)["code"]
    refused = exchange(live_server_url, client["client_id"], code, verifier, resource=elsewhere)
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_target"
    assert f"{live_server_url}/mcp only" in refused.json()["error_description"]
    tokens = exchange(live_server_url, client["client_id"], code, verifier).json()
    token = tokens["access_token"]
    # The REST API is another resource: the client's token is no good there.
    rest = httpx.get(
        f"{live_server_url}/api/v1/projects", headers={"Authorization": f"Bearer {token}"}
    )
    assert rest.status_code == 401
    assert mcp_call(mcp_url, token).status_code == 200
    # A token bound to another server's /mcp is refused here (as this one is there).
    ApiToken.objects.filter(grant__isnull=False).update(resource=elsewhere)
    assert mcp_call(mcp_url, token).status_code == 401


def test_the_client_reaches_only_the_projects_and_the_access_the_person_chose(
    live_server_url, dana, mcp_url
):
    from knowledge.models import Project

    launch = Project.objects.get(slug="launch")
    # "every project" left on, one project ticked: the narrower reading wins (the browser test
    # takes the other button).
    person = Person(
        live_server_url,
        choice={"access": "read", "reach": "all", "projects": [str(launch.pk)]},
    )
    client, tokens = connected(live_server_url, person)
    token = tokens["access_token"]
    assert tokens["scope"] == "read"
    written = tool(mcp_url, token, "upsert", project="launch", title="Plan", body="x")
    assert written["isError"] and "read-only" in written["content"][0]["text"]
    seen = tool(mcp_url, token, "browse")
    assert "launch" in seen["content"][0]["text"] and "vault" not in seen["content"][0]["text"]
    other = tool(mcp_url, token, "browse", project="vault")
    assert other["isError"]
    # A refresh cannot widen what the person gave.
    wider = refresh(live_server_url, client["client_id"], tokens["refresh_token"], scope="write")
    assert wider.status_code == 400 and wider.json()["error"] == "invalid_scope"


def test_a_person_cannot_give_a_client_a_project_they_cannot_see(live_server_url, dana):
    from knowledge.models import Project

    hidden = Project.objects.get(slug="elsewhere")
    client = register(live_server_url)
    _, challenge = pkce()
    person = Person(
        live_server_url, choice={"access": "write", "reach": "some", "projects": [str(hidden.pk)]}
    )
    with pytest.raises(AssertionError):  # the page comes back with the refusal, not a redirect
        consent(person, authorize_url(live_server_url, client["client_id"], challenge))
    assert person.last.status_code == 400
    assert "not one you can see; choose again" in person.last.text
    assert OAuthCode.objects.count() == 0


def test_a_revoked_client_stops_at_its_next_request_and_may_not_ask_again(
    live_server_url, dana, mcp_url
):
    client, tokens = connected(live_server_url, Person(live_server_url))
    assert mcp_call(mcp_url, tokens["access_token"]).status_code == 200
    ended = oauth_client_revoke(
        actor=Actor.system(), client_pk=OAuthClient.objects.get(client_id=client["client_id"]).pk
    )
    assert ended == 1
    assert mcp_call(mcp_url, tokens["access_token"]).status_code == 401
    again = refresh(live_server_url, client["client_id"], tokens["refresh_token"])
    assert again.status_code == 401 and again.json()["error"] == "invalid_client"
    assert "revoked by a Cairn administrator" in again.json()["error_description"]
    _, challenge = pkce()
    page = httpx.get(authorize_url(live_server_url, client["client_id"], challenge), timeout=30)
    assert page.status_code == 400 and "revoked" in page.text


def test_a_deactivated_person_stops_at_the_next_request_refresh_included(
    live_server_url, dana, mcp_url
):
    client, tokens = connected(live_server_url, Person(live_server_url))
    assert mcp_call(mcp_url, tokens["access_token"]).status_code == 200
    dana.is_active = False
    dana.save(update_fields=["is_active"])  # unticked in the admin: no service ran
    assert mcp_call(mcp_url, tokens["access_token"]).status_code == 401
    again = refresh(live_server_url, client["client_id"], tokens["refresh_token"])
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
    assert "lost its access" in again.json()["error_description"]
    assert OAuthGrant.objects.get().revoked_at is not None
