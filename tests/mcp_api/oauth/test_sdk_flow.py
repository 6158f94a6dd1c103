"""The whole MCP authorization flow with the official MCP Python SDK client against the live
server: 401 → protected resource metadata → server metadata → registration → the person's
sign-in and consent → code + PKCE → token → tools/list and tools/call → refresh (rotated; the
old secrets refused; a replayed refresh token ends the connection)."""

from __future__ import annotations

import hashlib
import time

import anyio
import httpx

from knowledge.models import ApiToken, Entry, OAuthClient, OAuthGrant
from mcp_api.app import LISTED
from tests.mcp_api.conftest import text
from tests.mcp_api.oauth.conftest import Person, oauth_client, session_with


def mcp_post(url: str, token: str) -> httpx.Response:
    return httpx.post(
        url,
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
        },
        timeout=30,
    )


def test_a_client_connects_by_url_alone_and_works_as_the_person(live_server_url, mcp_url, dana):
    unauthenticated = httpx.post(mcp_url, json={}, timeout=30)
    assert unauthenticated.status_code == 401
    challenge = unauthenticated.headers["www-authenticate"]
    assert (
        f'resource_metadata="{live_server_url}/.well-known/oauth-protected-resource/mcp"'
        in challenge
    )
    assert 'scope="read write"' in challenge

    person = Person(live_server_url)
    auth = oauth_client(mcp_url, person, name="Pytest Agent")

    async def first_session():
        async with session_with(mcp_url, auth) as session:
            tools = await session.list_tools()
            wrote = await session.call_tool(
                "upsert",
                {"project": "launch", "title": "Rollout plan", "body": "Ship on Tuesday.",
                 "subtopic": "plans"},
            )  # fmt: skip
            return tools, wrote

    tools, wrote = anyio.run(first_session)
    assert person.pages == ["sign-in", "consent 200"]
    assert [t.name for t in tools.tools] == [t.name for t in LISTED]
    assert not wrote.is_error, text(wrote)
    entry = Entry.objects.get(title="Rollout plan")
    assert entry.created_by == dana
    assert entry.history.first().generated_by == "agent:pytest-agent"

    client = OAuthClient.objects.get()
    assert (client.name, client.kind) == ("Pytest Agent", "registered")
    grant = OAuthGrant.objects.get()
    assert (grant.user, grant.client, grant.scope, grant.narrowed) == (dana, client, "write", False)
    assert grant.resource == mcp_url
    first = auth.context.current_tokens
    token = ApiToken.objects.get(grant=grant)
    # Stored as digests only: the access token as an ApiToken, bound to /mcp.
    assert token.secret_hash == hashlib.sha256(first.access_token.encode()).hexdigest()
    assert (token.resource, token.user, token.scope) == (mcp_url, dana, "write")
    assert first.scope == "read write" and 0 < first.expires_in <= 3600

    # The access token expires: the SDK refreshes with its refresh token, which rotates.
    auth.context.token_expiry_time = time.time() - 1

    async def second_session():
        async with session_with(mcp_url, auth) as session:
            return await session.call_tool("search", {"query": "rollout"})

    found = anyio.run(second_session)
    assert "Rollout plan" in text(found)
    second = auth.context.current_tokens
    assert second.access_token != first.access_token
    assert second.refresh_token != first.refresh_token
    assert ApiToken.objects.filter(grant=grant).count() == 1  # the same token, a new secret
    assert mcp_post(mcp_url, first.access_token).status_code == 401  # the old secret: refused
    assert mcp_post(mcp_url, second.access_token).status_code == 200

    # The spent refresh token comes back (a stolen copy): refused, and the connection ends.
    replay = httpx.post(
        f"{live_server_url}/oauth/token",
        data={"grant_type": "refresh_token", "refresh_token": first.refresh_token,
              "client_id": client.client_id},
        timeout=30,
    )  # fmt: skip
    assert replay.status_code == 400
    assert replay.json()["error"] == "invalid_grant"
    assert "already used" in replay.json()["error_description"]
    assert mcp_post(mcp_url, second.access_token).status_code == 401
    after = httpx.post(
        f"{live_server_url}/oauth/token",
        data={"grant_type": "refresh_token", "refresh_token": second.refresh_token,
              "client_id": client.client_id},
        timeout=30,
    )  # fmt: skip
    assert after.status_code == 400 and "revoked" in after.json()["error_description"]
    grant.refresh_from_db()
    assert grant.revoked_reason == "a refresh token was used twice"
