"""When the embedding server fails, callers hear that search by meaning is unavailable and what
to do, never where the server is or what it answered; the log keeps both for the operator."""

from __future__ import annotations

import logging

import pytest
from django.test import Client

from knowledge.actors import Actor
from knowledge.services import EntryFields, entry_upsert
from mcp_api import tools

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(make_token, acme):
    return Client(headers={"Authorization": f"Bearer {make_token(name='rest')}"})


@pytest.fixture
def failing(settings, fake_server, owner, acme):
    """The provider points at a server that answers 503 with an internal detail."""
    fake_server.fail_after = 0
    settings.CAIRN_EMBEDDING_PROVIDER = "http"
    settings.CAIRN_EMBEDDING_URL = fake_server.url.replace("127.0.0.1", "localhost")
    settings.CAIRN_EMBEDDING_MODEL = "fake-embed"
    entry_upsert(
        actor=Actor.for_user(owner),
        project="acme",
        fields=EntryFields(title="Apples", body="red apples"),
    )
    return settings.CAIRN_EMBEDDING_URL


def _hides(text: str, url: str) -> None:
    assert url not in text and "localhost" not in text, f"the answer names the server: {text}"
    assert "overloaded" not in text, "the answer quotes the server's reply"


def test_rest_semantic_search_says_it_is_unavailable_without_the_url(failing, api, caplog):
    with caplog.at_level(logging.WARNING, logger="knowledge.search.providers"):
        response = api.get("/api/v1/search", {"q": "apples", "mode": "semantic"})
    assert response.status_code == 503
    detail = response.json()["detail"]
    _hides(response.content.decode(), failing)
    assert "Search by meaning is unavailable" in detail and "Search by words" in detail
    assert failing in caplog.text and "overloaded" in caplog.text  # for the operator


def test_mcp_and_web_searches_fall_back_to_words_without_the_url(failing, owner, client):
    result = tools.answer("search", Actor.for_user(owner), {"query": "apples"})
    text = " ".join(c.text for c in result.content)
    assert not result.is_error and "Apples" in text
    _hides(text, failing)
    client.force_login(owner)
    page = client.get("/search/", {"q": "apples"}).content.decode()
    assert "Apples" in page
    _hides(page, failing)
