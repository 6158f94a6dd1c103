"""The Content-Security-Policy beyond the site's own pages, in headless Chromium: the admin's
Markdown editor and its server-rendered preview work under the admin's policy, and the sign-in
form's redirect to an SSO provider is allowed (form-action names the provider)."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.access.conftest import oidc_server, sso  # noqa: F401 (fixtures)
from tests.web.browser import sign_in

# --- the admin under the same policy: the Markdown editor and its server-rendered preview -----


def test_admin_entry_form_edits_and_previews_markdown_under_the_policy(site, page: Page, csp):
    base = site["url"]
    person = site["person"]
    person.is_staff = person.is_superuser = True
    person.save()
    sign_in(page, base)
    page.goto(f"{base}/admin/knowledge/entry/{site['plan'].pk}/change/")
    expect(page.locator(".EasyMDEContainer")).to_be_visible()
    page.locator(".CodeMirror").click()
    page.keyboard.press("Control+End")
    page.keyboard.type("\n\nA **previewed** line")
    page.locator(".editor-toolbar button.preview").click()
    expect(page.locator(".editor-preview strong", has_text="previewed")).to_be_visible()
    expect(page.locator(".editor-preview table td").first).to_have_text("freeze")
    page.goto(f"{base}/admin/knowledge/subtopic/")
    expect(page.locator(".cairn-depth-1", has_text="rollout")).to_be_visible()
    page.goto(f"{base}/admin/knowledge/entry/{site['plan'].pk}/history/")
    expect(page.locator("#revisions")).to_be_visible()


# --- SSO under the policy: the sign-in form's redirect to the provider is allowed -----------


def test_sso_sign_in_reaches_the_provider_and_comes_back(
    sso,  # noqa: F811 (the fixture imported above)
    settings,
    live_server,
    page: Page,
):
    from memory_site.oidc_config import issuer_origins

    # What settings.py computes from CAIRN_OIDC_PROVIDERS, for the test's loopback provider.
    settings.SECURE_CSP = {
        **settings.SECURE_CSP,
        "form-action": ["'self'", *issuer_origins([{"issuer": sso}])],
    }
    violations: list[str] = []
    page.on("console", lambda m: violations.append(m.text) if "Content Security" in m.text else 0)
    page.goto(f"{live_server.url}/accounts/login/")
    page.click("button:text('Sign in with Corp SSO')")
    expect(page).to_have_url(re.compile("^" + re.escape(sso)))
    page.locator("input[name=sub]").fill("alice-sub")
    page.locator("form [type=submit]").first.click()
    expect(page).to_have_url(f"{live_server.url}/")
    expect(page.locator("footer")).to_contain_text("signed in as alice")
    assert not violations, violations
