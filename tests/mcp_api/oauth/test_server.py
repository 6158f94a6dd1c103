"""The authorization server's machine side against the live server: its metadata documents,
what registration takes and refuses, client secrets, request limits, clients named by their
metadata document, and registrations that expire unused."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import anyio
import httpx
import pytest
from django.utils import timezone

from knowledge.actors import Actor
from knowledge.models import OAuthClient
from knowledge.services import oauth_clients_sweep
from memory_site.oauth import documents
from tests.mcp_api.oauth.conftest import (
    CALLBACK,
    Person,
    authorize_url,
    consent,
    exchange,
    mcp_call,
    oauth_client,
    pkce,
    register,
    session_with,
)


def test_the_server_names_itself_the_authorization_server_of_its_mcp(live_server_url):
    for path in (
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ):
        resource = httpx.get(live_server_url + path).json()
        assert resource["resource"] == f"{live_server_url}/mcp"
        assert resource["authorization_servers"] == [live_server_url]
        assert resource["scopes_supported"] == ["read", "write"]
    server = httpx.get(f"{live_server_url}/.well-known/oauth-authorization-server").json()
    assert httpx.get(f"{live_server_url}/.well-known/openid-configuration").json() == server
    assert server["issuer"] == live_server_url
    assert server["authorization_endpoint"] == f"{live_server_url}/oauth/authorize"
    assert server["token_endpoint"] == f"{live_server_url}/oauth/token"
    assert server["registration_endpoint"] == f"{live_server_url}/oauth/register"
    assert server["code_challenge_methods_supported"] == ["S256"]
    assert server["response_types_supported"] == ["code"]
    assert server["grant_types_supported"] == ["authorization_code", "refresh_token"]
    assert server["client_id_metadata_document_supported"] is True
    assert server["authorization_response_iss_parameter_supported"] is True


def test_on_loopback_each_loopback_name_is_its_own_resource_and_issuer(live_server_url):
    port = live_server_url.rsplit(":", 1)[1]
    aliased = httpx.get(
        f"{live_server_url}/.well-known/oauth-protected-resource/mcp",
        headers={"Host": f"localhost:{port}"},
    ).json()
    assert aliased["resource"] == f"http://localhost:{port}/mcp"
    assert aliased["authorization_servers"] == [f"http://localhost:{port}"]
    stranger = httpx.get(
        f"{live_server_url}/.well-known/oauth-protected-resource/mcp",
        headers={"Host": "evil.example"},
    ).json()
    assert stranger["resource"] == f"{live_server_url}/mcp"  # never an address it was told


REFUSED_REGISTRATIONS = [
    ({"redirect_uris": [f"http://127.0.0.1:{p}/cb" for p in range(11)]}, "at most 10"),
    ({"redirect_uris": ["https://app.example/" + "x" * 1000]}, "at most 1000"),
    ({"redirect_uris": ["http://app.example/cb"]}, "plain http on another host"),
    ({"redirect_uris": ["javascript:alert(1)"]}, "javascript: scheme"),
    ({"redirect_uris": ["https://app.example/cb#frag"]}, "fragment"),
    ({"redirect_uris": []}, "1 or more"),
    ({"redirect_uris": [CALLBACK], "token_endpoint_auth_method": "private_key_jwt"},
     "not supported"),
    ({"redirect_uris": [CALLBACK], "client_name": "n" * 201}, "at most 200"),
]  # fmt: skip


def test_registration_refuses_what_it_does_not_take_and_says_which_part(live_server_url, db):
    for body, said in REFUSED_REGISTRATIONS:
        answer = httpx.post(f"{live_server_url}/oauth/register", json=body)
        assert answer.status_code == 400, body
        assert answer.json()["error"] == "invalid_client_metadata"
        assert said in answer.json()["error_description"], (body, answer.json())
    assert OAuthClient.objects.count() == 0


def test_registration_bounds_the_body_before_reading_it(live_server_url, db):
    big = {"redirect_uris": [CALLBACK], "client_name": "x", "contacts": ["a" * 20_000]}
    answer = httpx.post(f"{live_server_url}/oauth/register", json=big)
    assert answer.status_code == 413
    assert "over 16384 bytes" in answer.json()["error_description"]
    garbage = httpx.post(f"{live_server_url}/oauth/register", content=b"{not json")
    assert garbage.status_code == 400 and "JSON object" in garbage.text
    assert OAuthClient.objects.count() == 0


def test_registration_and_token_requests_are_limited_per_address(live_server_url, db, settings):
    settings.CAIRN_OAUTH_REGISTRATIONS_PER_MINUTE = 2
    settings.CAIRN_OAUTH_TOKEN_REQUESTS_PER_MINUTE = 1
    register(live_server_url)
    register(live_server_url)
    third = httpx.post(f"{live_server_url}/oauth/register", json={"redirect_uris": [CALLBACK]})
    assert third.status_code == 429 and int(third.headers["retry-after"]) > 0
    assert "try again in" in third.json()["error_description"]
    assert OAuthClient.objects.count() == 2
    form = {"grant_type": "refresh_token", "refresh_token": "x", "client_id": "y"}
    assert httpx.post(f"{live_server_url}/oauth/token", data=form).status_code == 401
    assert httpx.post(f"{live_server_url}/oauth/token", data=form).status_code == 429


def test_a_client_with_a_secret_gets_it_once_and_must_send_it(live_server_url, dana, mcp_url):
    client = register(live_server_url, token_endpoint_auth_method="client_secret_post")
    secret = client["client_secret"]
    stored = OAuthClient.objects.get(client_id=client["client_id"])
    assert stored.secret_hash == hashlib.sha256(secret.encode()).hexdigest()
    assert secret not in str(stored.metadata)
    verifier, challenge = pkce()
    code = consent(
        Person(live_server_url), authorize_url(live_server_url, client["client_id"], challenge)
    )["code"]
    for wrong in (None, "not-the-secret"):
        refused = exchange(
            live_server_url, client["client_id"], code, verifier, client_secret=wrong
        )
        assert refused.status_code == 401 and refused.json()["error"] == "invalid_client"
    tokens = exchange(live_server_url, client["client_id"], code, verifier, client_secret=secret)
    assert tokens.status_code == 200
    assert mcp_call(mcp_url, tokens.json()["access_token"]).status_code == 200


def test_a_registration_nobody_used_expires(live_server_url, dana):
    client = register(live_server_url)
    OAuthClient.objects.update(created_at=timezone.now() - timedelta(hours=25))
    _, challenge = pkce()
    page = httpx.get(authorize_url(live_server_url, client["client_id"], challenge))
    assert page.status_code == 400 and "expires after 24 hours" in page.text
    assert oauth_clients_sweep(actor=Actor.system()).clients == 1
    assert OAuthClient.objects.count() == 0


# --- clients named by their metadata document ---------------------------------------------------

DOC_URL = "https://agent.example/oauth/cairn-client.json"


def _document(**fields) -> bytes:
    import json

    doc = {"client_id": DOC_URL, "client_name": "Doc Agent", "redirect_uris": [CALLBACK],
           "grant_types": ["authorization_code", "refresh_token"],
           "token_endpoint_auth_method": "none"} | fields  # fmt: skip
    return json.dumps(doc).encode()


def test_a_client_named_by_its_metadata_document_connects(
    live_server_url, mcp_url, dana, monkeypatch
):
    fetched = []

    def served(url):  # the document's host is on the internet: what leaves the machine is mocked
        fetched.append(url)
        return 200, {"cache-control": "max-age=600"}, _document()

    monkeypatch.setattr(documents, "open_document", served)
    person = Person(live_server_url)
    auth = oauth_client(mcp_url, person, client_metadata_url=DOC_URL)

    async def connect():
        async with session_with(mcp_url, auth) as session:
            return await session.list_tools()

    assert anyio.run(connect).tools
    assert fetched == [DOC_URL]  # once: kept for its max-age
    client = OAuthClient.objects.get()
    assert (client.client_id, client.kind, client.name) == (DOC_URL, "document", "Doc Agent")
    assert "identified by its metadata document" in person.consent_page.text


REFUSED_DOCUMENTS = [
    ((404, {}, b""), "HTTP 404"),
    ((200, {}, b"x" * 20_000), "over 16384 bytes"),
    ((200, {}, b"<html>"), "not JSON"),
    ((200, {}, _document(client_id="https://agent.example/other.json")), "its own URL"),
    ((200, {}, _document(token_endpoint_auth_method="client_secret_basic")), "public"),
    ((200, {}, _document(redirect_uris=["javascript:alert(1)"])), "javascript:"),
]


def test_a_metadata_document_that_does_not_hold_is_refused_on_the_page(
    live_server_url, dana, monkeypatch
):
    _, challenge = pkce()
    for served, said in REFUSED_DOCUMENTS:
        monkeypatch.setattr(documents, "open_document", lambda url, served=served: served)
        page = httpx.get(authorize_url(live_server_url, DOC_URL, challenge))
        assert page.status_code == 400 and said in page.text, said
    assert OAuthClient.objects.count() == 0


@pytest.mark.parametrize(
    "url",
    ["http://agent.example/c.json", "https://127.0.0.1/c.json", "https://localhost/c.json",
     "https://10.1.2.3/c.json", "https://169.254.169.254/latest/meta-data",
     "https://[::ffff:127.0.0.1]/c.json", "https://agent.example/"],
)  # fmt: skip
def test_metadata_documents_are_fetched_over_https_from_public_addresses_only(url):
    with pytest.raises(documents.DocumentRefused) as refused:
        documents.open_document(url)
    assert any(
        words in refused.value.message
        for words in ("https URL", "public addresses only", "must have a path")
    )


def test_metadata_documents_can_be_switched_off(live_server_url, dana, settings, monkeypatch):
    settings.CAIRN_OAUTH_CLIENT_METADATA_DOCUMENTS = False
    monkeypatch.setattr(documents, "open_document", lambda url: pytest.fail("fetched"))
    assert (
        httpx.get(f"{live_server_url}/.well-known/oauth-authorization-server").json()[
            "client_id_metadata_document_supported"
        ]
        is False
    )
    _, challenge = pkce()
    page = httpx.get(authorize_url(live_server_url, DOC_URL, challenge))
    assert page.status_code == 400 and "CAIRN_OAUTH_CLIENT_METADATA_DOCUMENTS" in page.text


def test_personal_tokens_work_as_before(mcp_url, token, live_server_url):
    assert mcp_call(mcp_url, token).status_code == 200
    rest = httpx.get(
        f"{live_server_url}/api/v1/projects", headers={"Authorization": f"Bearer {token}"}
    )
    assert rest.status_code == 200
