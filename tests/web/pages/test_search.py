"""The search page: results filtered and highlighted, only the results for search as you type, a
clear word on a bad filter, and a bounded query."""

from __future__ import annotations

import pytest

from knowledge.services import EntryFields, entry_upsert
from tests.web.pages.responses import html

pytestmark = pytest.mark.django_db


def test_search_page_finds_filters_and_highlights(alice, actor, plan, hidden):
    entry_upsert(
        actor=actor,
        project="acme",
        fields=EntryFields(title="Budget", body="The launch budget is 5k."),
    )
    page = html(alice.get("/search/?q=launch"))
    assert "<title>launch · Search · Cairn</title>" in page
    assert "2 results" in page and "<mark>" in page
    assert f'href="/e/{plan.short_id}/"' in page
    narrowed = html(alice.get("/search/?q=launch&kind=decision"))
    assert "1 result " in narrowed and "Budget" not in narrowed
    none = html(alice.get("/search/?q=zebracorn"))
    assert "0 results" in none and "Hidden" not in none


def test_search_as_you_type_returns_only_the_results(alice, plan):
    response = alice.get("/search/?q=launch", headers={"HX-Request": "true"})
    page = html(response)
    assert "<html" not in page and "result" in page and "Launch plan" in page
    assert "HX-Request" in response["Vary"]


def test_search_says_what_is_wrong_with_a_filter(alice, plan):
    page = html(alice.get("/search/?q=launch&after=notadate"))
    assert 'role="alert"' in page and "after" in page
    unknown = html(alice.get("/search/?q=launch&project=nosuch"))
    assert "No project &#x27;nosuch&#x27;" in unknown and "0 results" not in unknown


def test_search_input_is_bounded(alice, plan):
    response = alice.get("/search/", {"q": "launch " * 400})
    assert response.status_code == 200
