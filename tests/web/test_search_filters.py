"""The search page's form names (kind, tag, history) reach the search as SearchFilters."""

import pytest

from knowledge.services import EntryFields, entry_correct, entry_upsert
from tests.web.pages.responses import html

pytestmark = pytest.mark.django_db


@pytest.fixture
def signed_in(client, user, project):
    client.force_login(user)
    return client


@pytest.fixture
def notes(actor, project):
    def note(title, **fields):
        return entry_upsert(
            actor=actor, project="acme", fields=EntryFields(title=title, **fields)
        ).entry

    note("Kettle decision", body="descale the kettle", kind="decision", tags=["kitchen"])
    note("Kettle note", body="the kettle hums", tags=["noise"])
    old = note("Kettle fact", body="the kettle is blue")
    entry_correct(actor=actor, ref=old.pk, body="the kettle is red", reason="wrong colour")


def _found(client, **params) -> set[str]:
    page = html(client.get("/search/", {"q": "kettle", **params}))
    titles = {"Kettle decision", "Kettle note", "Kettle fact"}
    return {t for t in titles if t in page} | ({"superseded"} if "(superseded" in page else set())


def test_the_form_names_filter_the_search(signed_in, notes):
    assert _found(signed_in, kind="decision") == {"Kettle decision"}
    assert _found(signed_in, tag="noise") == {"Kettle note"}
    assert "superseded" not in _found(signed_in)
    assert "superseded" in _found(signed_in, history="on")
