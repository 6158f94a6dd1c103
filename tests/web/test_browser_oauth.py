"""MCP authorization's pages in headless Chromium: the sign-in (password, and single sign-on)
that brings the person back to the consent page, the consent page itself under the site's
policy, and the browser sent on to the client's loopback redirect URI with the code, which the
page's form-action must allow."""

from __future__ import annotations

import http.server
import re
import threading
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from playwright.sync_api import Page, expect

from knowledge.actors import Actor
from knowledge.models import OAuthCode, Project
from knowledge.services import ClientRegistration, oauth_client_register
from tests.access.conftest import oidc_server, sso  # noqa: F401 (fixtures)
from tests.mcp_api.oauth.conftest import pkce
from tests.web.browser import PASSWORD


@pytest.fixture
def callback():
    """The client's own loopback listener: records what the browser brings it."""
    got: list[str] = []

    class Listener(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path.startswith("/callback"):  # not the browser's /favicon.ico
                got.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            self.wfile.write(b"You may close this window.")

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Listener)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/callback", got
    server.shutdown()


@pytest.fixture
def authorize(live_server, settings, callback):
    """The URL a client opens in the browser, for a client that registered `callback`."""
    settings.SITE_URL = live_server.url
    redirect_uri, _ = callback
    oauth_client_register(
        actor=Actor.system(),
        client_id="browser-client",
        secret=None,
        registration=ClientRegistration(name="Browser Agent", redirect_uris=[redirect_uri]),
    )
    _, challenge = pkce()
    query = {"response_type": "code", "client_id": "browser-client", "redirect_uri": redirect_uri,
             "state": "xyz", "code_challenge": challenge, "code_challenge_method": "S256",
             "scope": "read write"}  # fmt: skip
    return f"{live_server.url}/oauth/authorize?{urlencode(query)}"


def _answer(got: list[str]) -> dict:
    return {k: v[0] for k, v in parse_qs(urlsplit(got[-1]).query).items()}


def test_sign_in_and_consent_send_the_code_to_the_clients_loopback_address(
    site, authorize, callback, page: Page
):
    redirect_uri, got = callback
    policies, violations = {}, []
    page.on(
        "response",
        lambda r: policies.update({urlsplit(r.url).path: r.headers}) if r.status == 200 else 0,
    )
    page.on("console", lambda m: violations.append(m.text) if "Content Security" in m.text else 0)
    page.goto(authorize)
    expect(page).to_have_url(re.compile(r"/accounts/login/\?next=/oauth/authorize"))
    page.fill("#id_login", "dana")
    page.fill("#id_password", PASSWORD)
    page.click("#login-form [type=submit]")

    expect(page.locator("h1")).to_have_text("Connect Browser Agent to Cairn?")
    expect(page.locator(".consent")).to_contain_text("registered itself with this Cairn")
    expect(page.locator(".consent")).to_contain_text(f"127.0.0.1:{urlsplit(callback[0]).port}")
    expect(page.locator(".consent .warn")).to_contain_text("A program on this computer")
    expect(page.locator(".consent")).to_contain_text("read and write")
    page.check("input[name=access][value=read]")
    page.check("input[name=reach][value=some]")
    launch = Project.objects.get(slug="launch")
    page.check(f"input[name=projects][value='{launch.pk}']")
    page.click("button[value=allow]")

    expect(page.locator("body")).to_have_text("You may close this window.")
    answer = _answer(got)
    assert answer["state"] == "xyz" and answer["iss"] == site["url"] and answer["code"]
    # The consent page's policy is the site's, with the client's one origin in form-action.
    policy = policies["/oauth/authorize"]["content-security-policy"]
    origin = redirect_uri.removesuffix("/callback")
    assert f"form-action 'self' {origin};" in policy + ";"
    assert "default-src 'self'" in policy and "script-src 'self'" in policy
    assert "unsafe" not in policy
    assert policies["/oauth/authorize"]["x-frame-options"] == "DENY"
    assert not violations, violations
    code = OAuthCode.objects.get()
    assert (code.user, code.scope, code.narrowed, code.project_ids) == (
        site["person"], "read", True, [launch.pk],
    )  # fmt: skip


def test_single_sign_on_comes_back_to_the_consent_and_deny_tells_the_client(
    sso,  # noqa: F811 (the fixture imported above)
    settings,
    authorize,
    callback,
    page: Page,
):
    from memory_site.oidc_config import issuer_origins

    settings.SECURE_CSP = {
        **settings.SECURE_CSP,
        "form-action": ["'self'", *issuer_origins([{"issuer": sso}])],
    }
    _, got = callback
    page.goto(authorize)
    page.click("button:text('Sign in with Corp SSO')")
    expect(page).to_have_url(re.compile("^" + re.escape(sso)))
    page.locator("input[name=sub]").fill("alice-sub")
    page.locator("form [type=submit]").first.click()
    expect(page.locator("h1")).to_have_text("Connect Browser Agent to Cairn?")
    page.click("button[value=deny]")
    expect(page.locator("body")).to_have_text("You may close this window.")
    assert _answer(got)["error"] == "access_denied"
    assert OAuthCode.objects.count() == 0
