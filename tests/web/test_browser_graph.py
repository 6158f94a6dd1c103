"""The graph page end to end in headless Chromium: it draws the relations the entries' [[links]]
made in `site`, filters them by type, finds and focuses a node, opens an entry on a click, and
says where it cut a graph too big to draw; no request leaves the site, no policy is broken."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from playwright.sync_api import Page, expect

from tests.web.browser import shot, sign_in


def test_graph_page_draws_nodes_and_opens_an_entry(site, page: Page, requests, monkeypatch, csp):
    base = site["url"]
    page.set_viewport_size({"width": 1280, "height": 860})
    sign_in(page, base)
    page.goto(f"{base}/graph/")
    page.select_option("select[name=project]", "launch")  # submits the form on change
    expect(page).to_have_url(re.compile(r"/graph/\?project=launch$"))
    expect(page.locator("#graph-status")).to_contain_text("2 entries, 1 links")
    page.goto(f"{base}/graph/")
    expect(page.locator("#graph-status")).to_contain_text("3 entries, 2 links")
    assert page.evaluate("window.cairnGraph.nodes().length") == 3
    labels = page.evaluate("window.cairnGraph.nodes().map(n => n.data('label')).sort()")
    assert labels == ["Checkout v2 rollout plan", "Feature flags", "Rollout risks"]
    expect(page.locator("#graph-cut")).to_be_hidden()

    # Filter by relation type: unticking one hides its edges.
    expect(page.locator("#graph-types label")).to_have_count(2)
    page.locator("#graph-types input[value=relates_to]").uncheck()
    hidden = "window.cairnGraph.edges().filter(e => e.style('display') === 'none').length"
    assert page.evaluate(hidden) == 1
    page.locator("#graph-types input[value=relates_to]").check()

    # Find focuses a node; hovering it fades what is not its neighbour; a click opens it.
    page.fill("#graph-find", "feature")
    page.wait_for_function("window.cairnGraph.nodes(':selected').length === 1")
    page.wait_for_timeout(400)  # the centring animation
    x, y = page.evaluate(
        "(() => { const p = window.cairnGraph.nodes(':selected')[0].renderedPosition();"
        " return [p.x, p.y]; })()"
    )
    box = page.locator("#graph").bounding_box()
    page.mouse.move(box["x"] + x, box["y"] + y)
    # Feature flags → Rollout risks → the plan: the plan and its edge fade.
    page.wait_for_function("window.cairnGraph.elements('.faded').length === 2")
    shot(page, "graph.png")
    page.mouse.click(box["x"] + x, box["y"] + y)
    expect(page).to_have_title("Feature flags · Cairn")

    # More entries than the page draws: it says where it cut.
    from web import views

    monkeypatch.setattr(views, "GRAPH_LIMIT", 2)
    page.goto(f"{base}/graph/")
    expect(page.locator("#graph-status")).to_contain_text("2 entries")
    expect(page.locator("#graph-cut")).to_be_visible()
    expect(page.locator("#graph-cut")).to_contain_text("Cut at 2 entries")
    assert {urlsplit(u).netloc for u in requests if not u.startswith("data:")} == {
        urlsplit(base).netloc
    }
