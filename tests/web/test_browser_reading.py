"""End to end in headless Chromium (Playwright): a person signs in, browses to an entry, reads it,
compares versions, verifies it, searches as they type and opens a result; the same entry at
phone width in dark mode. No request leaves the site, and every page keeps to its
Content-Security-Policy (the `csp` fixture, in conftest.py)."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from playwright.sync_api import Page, expect

from knowledge.models import Entry
from tests.web.browser import shot, sign_in


def test_a_person_reads_compares_verifies_and_searches(site, page: Page, requests, csp):
    base = site["url"]
    page.set_viewport_size({"width": 1280, "height": 860})
    sign_in(page, base)
    expect(page).to_have_title("Home · Cairn")
    expect(page.locator(".card", has_text="Launch")).to_contain_text("2 entries")
    expect(page.locator("section", has_text="Open items")).to_contain_text("Rollout risks")

    # Browse: project → subtopic tree → entry.
    page.click(".card a:text('Launch')")
    expect(page).to_have_title("Launch · Cairn")
    page.click(".tree a:text('rollout')")
    expect(page.locator(".crumbs")).to_contain_text("checkout")
    page.click("a.title:text('Checkout v2 rollout plan')")
    expect(page).to_have_title("Checkout v2 rollout plan · Cairn")

    # The Markdown, rendered: table, highlighted code, task list.
    body = page.locator(".markdown")
    expect(body.locator("strong")).to_have_text("three steps")
    expect(body.locator("table td").first).to_have_text("freeze")
    expect(body.locator(".highlight .k").first).to_have_text("def")
    expect(body.locator("input[type=checkbox][checked]")).to_have_count(1)
    expect(page.locator("#memory-url")).to_have_text(
        "memory://launch/checkout/rollout/checkout-v2-rollout-plan"
    )
    shot(page, "entry.png")
    source = page.locator(".facts a", has_text="url:t1")
    expect(source).to_have_attribute("href", "https://tickets.example/T-1")
    page.click("button.copy")
    expect(page.locator("button.copy")).to_have_text("Copied")

    # The graph on the entry page: facts by category, links (a waiting one as its text), backlinks.
    expect(page.locator("#observations dt")).to_have_text(["decision", "risk"])
    expect(page.locator("#observations")).to_contain_text("Ship behind the checkout-v2 flag")
    expect(page.locator("#relations li")).to_have_count(2)
    expect(page.locator("#relations li", has_text="depends_on").locator("a")).to_have_text(
        "Rollout risks"
    )
    expect(page.locator("#relations .waiting")).to_have_text("Launch retro")
    page.click("#relations a:text('Rollout risks')")
    expect(page).to_have_title("Rollout risks · Cairn")
    expect(page.locator("#backlinks a")).to_have_text("Checkout v2 rollout plan")
    expect(page.locator("#relations a")).to_have_text("Feature flags")
    page.click("#backlinks a")
    expect(page).to_have_title("Checkout v2 rollout plan · Cairn")

    # History: compare version 1 with version 2.
    page.click("button:text('Compare versions')")
    expect(page).to_have_title(re.compile(r"Changes v1→v2"))
    expect(page.locator(".diff .add", has_text="three steps")).to_be_visible()
    expect(page.locator(".diff .del", has_text="two steps")).to_be_visible()
    page.click("text=Back to the entry")

    # Verify: only a person can, and the page says who.
    page.click("button:text('Verify')")
    expect(page.locator(".messages")).to_contain_text("Verified version 2")
    expect(page.locator("h1 .verified")).to_be_visible()
    assert Entry.objects.get(pk=site["plan"].pk).verified_by == site["person"]

    # Search as you type: results arrive without submitting, the URL carries the query.
    page.keyboard.press("Escape")
    page.locator("body").click(position={"x": 5, "y": 400})
    page.keyboard.press("/")
    expect(page.locator("header input[type=search]")).to_be_focused()
    page.goto(f"{base}/search/")
    page.locator("#q").press_sequentially("rollout", delay=30)
    expect(page.locator(".results li")).to_have_count(2)
    expect(page.locator(".count")).to_contain_text("2 results")
    expect(page).to_have_url(re.compile(r"/search/\?q=rollout"))
    expect(page.locator(".results mark").first).to_be_visible()
    shot(page, "search.png")
    # Let the debounced search-as-you-type settle: a late swap would replace the focused link.
    page.wait_for_load_state("networkidle")
    expect(page.locator(".results li")).to_have_count(2)
    page.locator("#q").press("ArrowDown")
    expect(page.locator(".results a.title").first).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("h1")).to_contain_text(re.compile("rollout", re.I))

    # A shared search URL shows the same results.
    page.goto(f"{base}/search/?q=flags&kind=fact")
    expect(page.locator(".results li")).to_have_count(1)
    # Changing a filter searches again (htmx, with no evaluated trigger filter).
    page.select_option("select[name=kind]", "")
    expect(page).to_have_url(re.compile(r"kind=(&|$)"))
    expect(page.locator(".results li")).to_have_count(3)
    # Ticking "explain the ranking" searches again and shows each top hit's signals.
    expect(page.locator(".results p.why")).to_have_count(0)
    page.check("#explain")
    expect(page).to_have_url(re.compile(r"explain=on"))
    expect(page.locator(".results p.why").first).to_contain_text("fused")

    page.goto(f"{base}/graph/")
    expect(page).to_have_title("Graph · Cairn")

    hosts = {urlsplit(url).netloc for url in requests if not url.startswith("data:")}
    assert hosts == {urlsplit(base).netloc}, f"requests left the site: {hosts}"


def test_phone_width_and_dark_mode(site, page: Page, requests, csp):
    base = site["url"]
    page.set_viewport_size({"width": 390, "height": 844})
    page.emulate_media(color_scheme="dark")
    sign_in(page, base)
    page.goto(f"{base}/e/{site['plan'].short_id}/")
    expect(page.locator(".markdown table")).to_be_visible()
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"the entry page scrolls sideways on a phone by {overflow}px"
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(21, 23, 26)", background
    shot(page, "entry-phone-dark.png")
    assert {urlsplit(u).netloc for u in requests if not u.startswith("data:")} == {
        urlsplit(base).netloc
    }
