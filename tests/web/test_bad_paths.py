"""Addresses the path rules refuse answer a page that says why, never a 500 (issue 32).

Every web URL that takes a project, a subtopic path or an entry reference (in the path or in
the query string), with the shapes people and scanners send: punctuation only, dot segments,
too long, too deep, unicode controls and a NUL byte. The core refuses them with its own errors
(ValidationFailed for the path rules and length limits, a DataError from PostgreSQL for NUL):
each must become a 400 or 404 page in the site's style, with the core's message.
"""

from __future__ import annotations

from urllib.parse import quote, urlencode

import pytest
from django.contrib.auth.models import Permission
from django.test import Client

from knowledge.services import EntryFields, entry_upsert

pytestmark = pytest.mark.django_db

SHAPES = {
    "punctuation": "!!!",
    "dot-dot": "..",
    "dot": ".",
    "long": "x" * 1_500,  # over every limit: project 200, path 500, reference 1,000
    "deep": "/".join("abcdefghij"),  # ten levels; eight is the limit
    "rtl-override": "\u202e",
    "zero-width": "\u200b",
    "next-line": "\x85",
    "escape": "a\x1bb",
    "nul": "a\x00b",
}


@pytest.fixture
def alice(user, actor, project):
    entry_upsert(actor=actor, project="acme", subtopic="ops", fields=EntryFields(title="Runbook"))
    client = Client(raise_request_exception=False)  # a 500 is an answer here, not a crash
    client.force_login(user)
    return client


def addresses(shape: str) -> list[str]:
    """Every page address with `shape` where it takes a project, subtopic or entry."""
    segment = quote(shape, safe="/")  # the subtopic path may hold slashes
    one = quote(shape, safe="")  # a project or entry reference is one segment
    return [
        f"/p/acme/t/{segment}/",
        f"/p/acme/t/ops/{segment}/",
        f"/p/{one}/",
        f"/p/{one}/t/ops/",
        f"/e/{one}/",
        f"/e/{one}/diff/",
        "/p/acme/?" + urlencode({"kind": shape}),
        "/search/?" + urlencode({"q": "runbook", "project": shape}),
        "/search/?" + urlencode({"q": "runbook", "subtopic": shape}),
        "/graph/?" + urlencode({"project": shape, "around": shape}),
    ]


def said(response) -> str:
    return response.content.decode()


@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
def test_pages_refuse_bad_addresses_with_a_clear_page(alice, shape):
    for url in addresses(shape):
        response = alice.get(url)
        assert response.status_code in (200, 400, 404), (url[:80], response.status_code)
        if response.status_code != 200:  # search and graph say it above the form instead
            assert "<h1>" in said(response), url[:80]


@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
def test_graph_data_refuses_bad_references_as_json(alice, shape):
    for name in ("project", "around"):
        response = alice.get("/graph/data.json?" + urlencode({name: shape}))
        if not shape.strip():  # blank (NEL is white space): no filter, the whole graph
            assert response.status_code == 200 and "nodes" in response.json()
            continue
        assert response.status_code in (400, 404), (name, response.status_code)
        assert response.json()["error"], name


@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
def test_the_page_actions_refuse_bad_references(alice, shape):
    for action in ("verify", "status"):
        url = f"/e/{quote(shape, safe='')}/{action}/"
        response = alice.post(url, {"status": "open"}, follow=True)
        assert response.status_code in (400, 404), (action, response.status_code)
        assert "<h1>" in said(response), action


def test_a_subtopic_the_path_rules_refuse_says_why(alice):
    response = alice.get("/p/acme/t/!!!/")
    assert response.status_code == 400
    assert "has no letters or digits" in said(response)
    assert "customer-x/2026-08/incident" in said(response)  # what a good path looks like
    assert alice.get("/p/acme/t/abcdefghi/").status_code == 404  # well formed, absent
    deep = alice.get("/p/acme/t/a/b/c/d/e/f/g/h/i/")
    assert deep.status_code == 400 and "the limit is 8" in said(deep)


def test_a_reference_over_its_limit_says_the_limit(alice):
    response = alice.get(f"/e/{'x' * 1_500}/")
    assert response.status_code == 400
    assert "the limit is 1,000" in said(response)
    project = alice.get(f"/p/{'x' * 300}/")
    assert project.status_code == 400 and "the limit is 200" in said(project)


def test_a_nul_byte_is_named_and_nothing_is_asked_of_the_database(alice):
    for url in ("/e/a%00b/", "/p/acme/t/a%00b/", "/p/acme/?kind=%00"):
        response = alice.get(url)
        assert response.status_code == 400, url
        assert "NUL" in said(response), url


def test_well_formed_addresses_still_work(alice):
    assert alice.get("/p/acme/t/ops/").status_code == 200
    assert alice.get("/p/acme/t/OPS/").status_code == 200  # the path rules normalize it


@pytest.fixture
def staff_alice(alice, user):
    """Alice, also staff with the knowledge app's permissions (the admin's own checks)."""
    user.is_staff = True
    user.save(update_fields=["is_staff"])
    user.user_permissions.set(Permission.objects.filter(content_type__app_label="knowledge"))
    return alice


@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
def test_the_admin_refuses_bad_addresses_without_a_500(staff_alice, shape):
    one = quote(shape, safe="")
    for url in (
        f"/admin/knowledge/entry/{one}/history/",
        f"/admin/knowledge/entry/{one}/history/diff/",
        f"/admin/knowledge/entry/{one}/change/",
        "/admin/knowledge/entry/?" + urlencode({"tree": f"acme/{shape}"}),
        "/admin/knowledge/entry/?" + urlencode({"tree": shape}),
    ):
        response = staff_alice.get(url)
        assert response.status_code in (200, 302, 404), (url[:80], response.status_code)


def test_the_admin_tree_filter_says_why_it_lists_everything(staff_alice):
    response = staff_alice.get("/admin/knowledge/entry/?tree=acme/!!!", follow=True)
    assert response.status_code == 200
    text = said(response)
    assert "has no letters or digits" in text and "shows every entry instead" in text
    assert "Runbook" in text
