"""The /mcp endpoint as a client sees it: auth, Host/Origin checks, tools/list and instructions."""

import json
from datetime import timedelta

import anyio
import httpx
import pytest
from django.utils import timezone

from knowledge.actors import Actor
from knowledge.models import ApiToken
from knowledge.services.tokens import token_revoke
from tests.mcp_api.conftest import mcp_session
from tests.snapshot import assert_matches_snapshot

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw-http", "version": "0"},
    },
}
JSON_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _post(url, token=None, **headers):
    auth = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.post(url, json=INIT, headers={**JSON_HEADERS, **auth, **headers}, timeout=10)


def test_initialize_lists_tools_and_gives_instructions(mcp_url, token):
    async def go():
        async with mcp_session(mcp_url, token) as session:
            tools = await session.list_tools()
            return session.initialize_result, tools

    init, tools = anyio.run(go)
    assert "Search first" in init.instructions
    assert init.server_info.name == "cairn"
    names = {t.name for t in tools.tools}
    assert names == {
        "search",
        "get",
        "upsert",
        "edit",
        "update",
        "list_open",
        "recent",
        "browse",
        "history",
        "diff",
        "delete",
        "check_sources",
        "create_project",
        "correct",
        "build_context",
        "whoami",
        "schema_validate",
        "schema_infer",
        "schema_diff",
    }
    by_name = {t.name: t for t in tools.tools}
    assert by_name["search"].annotations.read_only_hint is True
    assert by_name["delete"].annotations.destructive_hint is True
    assert by_name["upsert"].annotations.idempotent_hint is True
    assert not by_name["upsert"].annotations.read_only_hint  # the protocol's default: left out


def test_tools_list_matches_the_snapshot(mcp_url, token):
    async def go():
        async with mcp_session(mcp_url, token) as session:
            return await session.list_tools()

    tools = anyio.run(go)
    wire = tools.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert_matches_snapshot("mcp_tools_list.json", wire)
    # Every tool schema must fit an agent's context cheaply: the whole list, every tool (the
    # note-type ones too), at most 12,000 characters (counted with json.dumps' spaces; the
    # wire's compact JSON is shorter still). What every tool shares is said once, in the
    # server's instructions.
    assert len(json.dumps(wire)) <= 12_000


def test_missing_token_is_401_with_www_authenticate(mcp_url):
    response = _post(mcp_url)
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")


@pytest.mark.parametrize("secret", ["nope", "cairn_" + "x" * 43])
def test_unknown_token_is_401_beside_a_live_one(mcp_url, secret, token):
    assert _post(mcp_url, token).status_code == 200  # a live token the lookup could fall on
    assert _post(mcp_url, secret).status_code == 401


def test_revoked_and_expired_tokens_are_401(mcp_url, token, make_token):
    assert _post(mcp_url, token).status_code == 200
    token_revoke(
        actor=Actor.system(),
        token_id=ApiToken.objects.get(secret_hash=ApiToken.hash_secret(token)).pk,
    )
    assert _post(mcp_url, token).status_code == 401
    expiring = make_token(expires_at=timezone.now() + timedelta(seconds=60))
    assert _post(mcp_url, expiring).status_code == 200
    ApiToken.objects.filter(secret_hash=ApiToken.hash_secret(expiring)).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert _post(mcp_url, expiring).status_code == 401


def test_inactive_user_is_401(mcp_url, token, owner):
    owner.is_active = False
    owner.save()
    assert _post(mcp_url, token).status_code == 401


def test_bad_origin_is_403(mcp_url, token):
    assert _post(mcp_url, token, Origin="http://evil.example").status_code == 403
    assert _post(mcp_url, token, Origin="http://127.0.0.1:3000").status_code == 200


def test_bad_host_is_rejected(mcp_url, token):
    assert _post(mcp_url, token, Host="evil.example").status_code == 421


def test_last_used_is_recorded(mcp_url, token):
    assert ApiToken.objects.get(secret_hash=ApiToken.hash_secret(token)).last_used_at is None
    _post(mcp_url, token)
    assert ApiToken.objects.get(secret_hash=ApiToken.hash_secret(token)).last_used_at is not None


def test_django_still_serves_everything_else(live_server_url, transactional_db):
    # The login page reads the configured sign-in providers from the database.
    assert httpx.get(f"{live_server_url}/api/docs", timeout=10).status_code == 200
    assert httpx.get(f"{live_server_url}/admin/login/", timeout=10).status_code == 200


def test_a_database_outage_answers_503_with_retry_not_a_bare_500(mcp_url, token, monkeypatch):
    from django.db import OperationalError

    import mcp_api.auth

    def down(secret, **kwargs):
        raise OperationalError("connection refused")

    monkeypatch.setattr(mcp_api.auth, "token_authenticate", down)
    response = _post(mcp_url, token)
    assert response.status_code == 503
    assert response.headers["retry-after"] == "5"
    assert "Retry in a few seconds" in response.json()["error"]["message"]


def test_a_database_outage_inside_a_tool_is_a_tool_error_that_says_retry(call, monkeypatch):
    from django.db import OperationalError

    import mcp_api.tools.search

    def down(*args, **kwargs):
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(mcp_api.tools.search, "search_entries", down)
    result = call("search", query="anything at all")
    assert result.is_error
    assert "not answering right now" in result.content[0].text
    assert result.structured_content["error"]["code"] == "database_unavailable"
