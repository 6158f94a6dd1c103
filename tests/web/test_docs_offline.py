"""The documentation site opened from disk in Chromium with every request off the disk refused:
search finds a page, and a diagram is drawn. (tests/test_docs_site.py checks what the pages
load; this proves the site works with it.)"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.docs_site import build


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    return build(tmp_path_factory.mktemp("site"))


@pytest.fixture
def offline(page: Page) -> list[str]:
    """Refuse every request that is not for a file: what a machine with no network would do."""
    refused: list[str] = []

    def route(r):
        if r.request.url.startswith("file:"):
            r.continue_()
        else:
            refused.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    return refused


def test_search_works_from_disk_with_no_network(site, page: Page, offline):
    page.goto((site / "index.html").as_uri())
    page.keyboard.press("/")
    page.locator("input.md-search__input").press_sequentially("parked revisions", delay=20)
    results = page.locator(".md-search-result__item")
    expect(results.first).to_be_visible(timeout=15_000)
    expect(page.locator(".md-search-result")).to_contain_text("The git mirror")
    assert not offline, f"the site asked the network for {offline}"


def test_a_diagram_is_drawn_from_disk_with_no_network(site, page: Page, offline):
    page.goto((site / "developers/write-path.html").as_uri())
    # Material swaps the <pre> for a <div> once mermaid has drawn it (into a closed shadow root).
    drawn = page.locator("div.mermaid").first
    expect(drawn).to_be_visible(timeout=15_000)
    expect(page.locator("pre.mermaid")).to_have_count(0)
    assert drawn.bounding_box()["height"] > 200
    assert not offline, f"the site asked the network for {offline}"
