"""MCP authorization against the live server of tests/mcp_api (one per test process): a person
who answers Cairn's sign-in and consent pages the way a browser would (httpx against the
server, cookies kept), and the official MCP Python SDK client (OAuthClientProvider) that
discovers, registers, asks that person, exchanges the code and refreshes.

dana maintains `launch` and `vault` (confidential); `elsewhere` is restricted and not hers.
"""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit

import anyio
import httpx
import httpx2
import pytest
from mcp.client.auth import OAuthClientProvider
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

from knowledge.models import Membership, Role
from tests.factories import ProjectFactory, UserFactory

PASSWORD = "a-long-oauth-password-42"
CALLBACK = "http://127.0.0.1:9/callback"  # never called: the person hands the code over


@pytest.fixture(autouse=True)
def _fresh_request_limits():
    # The per-address request counts (memory_site/oauth/limits.py) are per minute: each test
    # starts with none, as a client would after a quiet minute.
    from django.core.cache import cache

    cache.clear()


@pytest.fixture
def dana(db):
    person = UserFactory(username="dana")
    person.set_password(PASSWORD)
    person.save()
    for slug, sensitivity in (("launch", "internal"), ("vault", "confidential")):
        project = ProjectFactory(slug=slug, sensitivity=sensitivity)
        Membership.objects.create(project=project, user=person, role=Role.MAINTAINER)
    ProjectFactory(slug="elsewhere", sensitivity="restricted")
    return person


@dataclass
class Person:
    """Answers the authorize URL as a person in a browser: signs in on Cairn's own page when
    asked, then submits the consent form with `choice` (access, reach, projects)."""

    base: str
    username: str = "dana"
    password: str = PASSWORD
    choice: dict = field(default_factory=lambda: {"access": "write", "reach": "all"})
    decision: str = "allow"
    pages: list[str] = field(default_factory=list)
    answer: dict = field(default_factory=dict)
    signed_in: httpx2.Cookies | None = None

    async def visit(self, url: str) -> None:
        async with httpx2.AsyncClient(timeout=30, cookies=self.signed_in) as browser:
            page = await browser.get(url)
            if page.status_code == 302 and "/accounts/login/" in page.headers["location"]:
                self.pages.append("sign-in")
                login = urljoin(self.base, page.headers["location"])
                form = await browser.get(login)
                page = await browser.post(
                    login,
                    data={"login": self.username, "password": self.password,
                          "csrfmiddlewaretoken": _csrf(form.text),
                          "next": parse_qs(urlsplit(login).query)["next"][0]},
                    headers={"Referer": login},
                )  # fmt: skip
                assert page.status_code == 302, page.text[:500]
                page = await browser.get(urljoin(self.base, page.headers["location"]))
            self.pages.append(f"consent {page.status_code}")
            if page.status_code == 200:
                self.consent_page = page
                page = await browser.post(
                    url,
                    data={**self.choice, "decision": self.decision,
                          "csrfmiddlewaretoken": _csrf(page.text)},
                    headers={"Referer": url},
                )  # fmt: skip
            self.signed_in, self.last = browser.cookies, page
            assert page.status_code == 302, page.text[:800]
            self.location = page.headers["location"]
            self.answer = {k: v[0] for k, v in parse_qs(urlsplit(self.location).query).items()}

    async def callback(self) -> AuthorizationCodeResult:
        return AuthorizationCodeResult(
            code=self.answer.get("code", ""), state=self.answer.get("state"),
            iss=self.answer.get("iss"),
        )  # fmt: skip


def _csrf(html: str) -> str:
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)


class Memory:
    """The client's token storage, in memory."""

    def __init__(self):
        self.tokens = self.client = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, info):
        self.client = info


def oauth_client(mcp_url: str, person: Person, *, name: str = "pytest agent", **options):
    """The SDK's OAuthClientProvider for `mcp_url`, asking `person` to sign in."""
    metadata = OAuthClientMetadata(
        client_name=name, redirect_uris=[CALLBACK], token_endpoint_auth_method="none",
        grant_types=["authorization_code", "refresh_token"], response_types=["code"],
    )  # fmt: skip
    return OAuthClientProvider(
        mcp_url, metadata, Memory(), redirect_handler=person.visit,
        callback_handler=person.callback, **options,
    )  # fmt: skip


@asynccontextmanager
async def session_with(mcp_url: str, auth):
    async with (
        httpx2.AsyncClient(auth=auth, timeout=30) as http,
        streamable_http_client(mcp_url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


# --- one step at a time, as a client would take them (the refusal tests) -----------------------


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
    return verifier, challenge.decode().rstrip("=")


def register(base: str, **fields) -> dict:
    body = {"client_name": "step client", "redirect_uris": [CALLBACK],
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"]} | fields  # fmt: skip
    answer = httpx.post(f"{base}/oauth/register", json=body, timeout=30)
    assert answer.status_code == 201, answer.text
    return answer.json()


def authorize_url(base: str, client_id: str, challenge: str, **params) -> str:
    query = {"response_type": "code", "client_id": client_id, "redirect_uri": CALLBACK,
             "state": "st4te", "code_challenge": challenge, "code_challenge_method": "S256",
             "scope": "read write", "resource": f"{base}/mcp"} | params  # fmt: skip
    return f"{base}/oauth/authorize?" + urlencode({k: v for k, v in query.items() if v is not None})


def consent(person: Person, url: str) -> dict:
    """What the client's redirect URI receives once `person` answered `url`."""
    anyio.run(person.visit, url)
    return person.answer


def exchange(base: str, client_id: str, code: str, verifier: str | None, **extra) -> httpx.Response:
    form = {"grant_type": "authorization_code", "code": code, "client_id": client_id,
            "redirect_uri": CALLBACK, "code_verifier": verifier} | extra  # fmt: skip
    data = {k: v for k, v in form.items() if v is not None}
    return httpx.post(f"{base}/oauth/token", data=data, timeout=30)


def refresh(base: str, client_id: str, token: str, **extra) -> httpx.Response:
    form = {"grant_type": "refresh_token", "refresh_token": token, "client_id": client_id} | extra
    return httpx.post(f"{base}/oauth/token", data=form, timeout=30)


def connected(base: str, person: Person, **params) -> tuple[dict, dict]:
    """Register, consent and exchange: (the client's registration, its token answer)."""
    client = register(base)
    verifier, challenge = pkce()
    answer = consent(person, authorize_url(base, client["client_id"], challenge, **params))
    tokens = exchange(base, client["client_id"], answer["code"], verifier)
    assert tokens.status_code == 200, tokens.text
    return client, tokens.json()


def mcp_call(mcp_url: str, token: str, method: str = "tools/list", **params) -> httpx.Response:
    return httpx.post(
        mcp_url,
        json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
        headers={"Authorization": f"Bearer {token}",
                 "Accept": "application/json, text/event-stream"},
        timeout=30,
    )  # fmt: skip


def tool(mcp_url: str, token: str, name: str, **arguments) -> dict:
    answer = mcp_call(mcp_url, token, "tools/call", name=name, arguments=arguments)
    assert answer.status_code == 200, answer.text
    return answer.json()["result"]
