"""Signing in and browsing: the sign-in page for visitors, the home page, a project's tree, the
404 of what is not there, and assets that are all served from the site itself."""

from __future__ import annotations

import pytest

from knowledge.services import EntryFields, entry_upsert
from tests.web.pages.responses import html

pytestmark = pytest.mark.django_db


def test_anonymous_visitors_go_to_the_sign_in_page(client):
    for url in ("/", "/search/?q=x", "/p/acme/", "/e/abc/", "/graph/"):
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/?next=")


def test_sign_in_lands_on_the_home_page(client, user, project):
    user.set_password("pw-long-enough-42")
    user.save()
    response = client.post("/accounts/login/", {"login": "alice", "password": "pw-long-enough-42"})
    assert response.status_code == 302 and response["Location"] == "/"
    assert "Your memory" in html(client.get("/"))


def test_home_lists_visible_projects_recent_changes_and_open_items(alice, actor, plan, hidden):
    entry_upsert(
        actor=actor,
        project="acme",
        fields=EntryFields(title="Call the vendor", body="x", status="open"),
    )
    page = html(alice.get("/"))
    assert "<title>Home · Cairn</title>" in page
    assert 'href="/p/acme/"' in page and "sens-internal" in page
    assert "2 entries" in page
    assert "Launch plan" in page and "Call the vendor" in page
    assert "vault" not in page.lower() and "zebracorn" not in page


def test_project_page_shows_the_tree_counts_and_the_entries_here(alice, actor, plan):
    entry_upsert(actor=actor, project="acme", fields=EntryFields(title="Top note", body="x"))
    page = html(alice.get("/p/acme/"))
    assert 'data-path="ops"' in page and 'data-path="ops/2026"' in page
    assert "Top note" in page and "Launch plan" not in page  # only entries directly here
    sub = html(alice.get("/p/acme/t/ops/2026/"))
    assert "Launch plan" in sub and "Top note" not in sub
    assert 'href="/p/acme/t/ops/"' in sub  # breadcrumbs
    assert "#launch" in sub and "decision" in sub


def test_unknown_pages_answer_404_in_the_site_style(alice, plan):
    for url in ("/p/acme/t/nope/", "/p/nope/", "/e/zzzzzzzz/", "/no/such/page/"):
        page = html(alice.get(url), 404)
        assert "Not found" in page and "Cairn" in page


def test_pages_load_no_asset_from_another_host(alice, plan):
    page = html(alice.get(f"/e/{plan.short_id}/"))
    for attr in ('src="http', 'src="//', 'href="//'):
        assert attr not in page
    assert "/static/web/vendor/htmx-2.0.11.min.js" in page


def test_static_assets_are_served(alice):
    from django.contrib.staticfiles import finders

    for name in ("web/cairn.css", "web/cairn.js", "web/vendor/htmx-2.0.11.min.js",
                 "web/vendor/cytoscape-3.34.4.min.js"):  # fmt: skip
        assert finders.find(name), name
