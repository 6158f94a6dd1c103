"""What the admin's browser tests share: the admin's Content-Security-Policy as a fixture, and
screenshots of a page at 1440 and 390 px, light and dark, each checked for words broken across
lines."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page

from tests.web.test_browser import CSP_DIRECTIVES, SHOTS

# The admin's theme (unfold) runs Alpine.js, which needs 'unsafe-eval': the admin's pages, and
# only those, add it to script-src (settings/admin.py). Nothing else is loosened.
ADMIN_SCRIPT_SRC = "script-src 'self' 'unsafe-eval'"


@pytest.fixture
def csp(page: Page):
    """Every page the test opens sends the policy (the admin's on /admin/, the site's elsewhere),
    and the browser reports no violation (an inline script, handler or style it refused) and no
    script error."""
    seen: dict[str, dict] = {}
    violations: list[str] = []
    page.on(
        "response",
        lambda r: seen.setdefault(r.url, r.headers) if r.request.resource_type == "document" else 0,
    )
    page.on(
        "console",
        lambda m: (
            violations.append(f"{page.url}: {m.text}")
            if "Content Security Policy" in m.text
            else None
        ),
    )
    page.on("pageerror", lambda error: violations.append(f"{page.url}: script error: {error}"))
    page.on(
        "response",
        lambda r: (
            violations.append(f"{r.url}: {r.status}")
            if "/static/" in r.url and r.status >= 400
            else 0
        ),
    )
    yield seen
    assert not violations, violations
    assert seen, "no page was opened"
    for url, headers in seen.items():
        policy = headers.get("content-security-policy", "")
        admin = urlsplit(url).path.startswith("/admin/")
        wanted = [ADMIN_SCRIPT_SRC if d.startswith("script-src") and admin else d
                  for d in CSP_DIRECTIVES]  # fmt: skip
        assert all(d in policy for d in wanted), (url, policy)
        assert (
            policy.replace("'unsafe-eval'", "" if admin else "'unsafe-eval'").count("unsafe") == 0
        ), (url, policy)
        assert headers.get("x-content-type-options") == "nosniff", url
        assert headers.get("x-frame-options") == "DENY", url


SIZES = {"wide": (1440, 900), "phone": (390, 844)}


def shot(page: Page, name: str, *, every: bool = True) -> None:
    """`name` at 1440 px (light), and with `every` also at 390 px and in dark: admin-NAME.png,
    admin-NAME-phone.png, admin-NAME-dark.png, admin-NAME-phone-dark.png. No word on the page
    may be broken across lines (the page is checked at each size)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    stem = name.removesuffix(".png")
    kept = page.viewport_size
    schemes = ("light", "dark") if every else ("light",)
    for size, (width, height) in SIZES.items() if every else [("wide", (1440, 900))]:
        page.set_viewport_size({"width": width, "height": height})
        for scheme in schemes:
            page.emulate_media(color_scheme=scheme)
            # The theme's own switch (what a person picks in its menu), not only the media query.
            page.evaluate(f"Alpine.$data(document.documentElement).adminTheme = '{scheme}'")
            page.wait_for_timeout(80)
            assert_no_broken_words(page, f"{stem} at {width} px")
            suffix = ("-phone" if size == "phone" else "") + ("-dark" if scheme == "dark" else "")
            page.screenshot(path=str(SHOTS / f"{stem}{suffix}.png"), full_page=True)
    page.emulate_media(color_scheme="light")
    page.evaluate("Alpine.$data(document.documentElement).adminTheme = 'auto'")
    page.set_viewport_size(kept)


# A word broken mid-way shows as a text node whose one word spans two lines.
BROKEN_WORDS = """() => {
  const broken = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode;
    const parent = node.parentElement;
    if (!parent || parent.closest("pre, code, .CodeMirror, svg, script, style, textarea")) continue;
    const text = node.textContent;
    for (const match of text.matchAll(/[A-Za-z]{4,}/g)) {
      const range = document.createRange();
      range.setStart(node, match.index);
      range.setEnd(node, match.index + match[0].length);
      const rects = Array.from(range.getClientRects()).filter(r => r.width > 0);
      const tops = new Set(rects.map(r => Math.round(r.top)));
      if (tops.size > 1) broken.push(match[0]);
    }
  }
  return broken;
}"""


def assert_no_broken_words(page: Page, where: str) -> None:
    broken = page.evaluate(BROKEN_WORDS)
    assert not broken, f"{where}: words broken across lines: {broken[:10]}"
