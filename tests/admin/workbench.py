"""What the workbench tests share: the entry list's address and its rows' titles, someone else
who edits meanwhile, the live preview, entries to fill a page with, and what a page costs."""

from __future__ import annotations

import re

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from knowledge.actors import Actor
from knowledge.services import EntryFields, entry_upsert
from tests.factories import UserFactory

CHANGELIST = "/admin/knowledge/entry/"


def sam() -> Actor:
    """Someone else who edits acme meanwhile (its maintainer, from the factories)."""
    return Actor.for_user(UserFactory(username="factory"))


def row_titles(response) -> list[str]:
    """The titles of the changelist's rows, in order."""
    html = response.content.decode()
    return re.findall(r'<th class="field-title[^"]*"[^>]*><a href="[^"]+"[^>]*>([^<]+)</a>', html)


def live(client, **fields):
    return client.post(reverse("admin:knowledge_entry_live_preview"), fields).content.decode()


def fill(actor, start: int, stop: int) -> None:
    for i in range(start, stop):
        entry_upsert(
            actor=actor,
            project="acme",
            subtopic=f"area-{i % 3}/deep-{i % 2}",
            fields=EntryFields(title=f"Note {i}", body=f"launch step {i}", tags=["t"]),
        )


def queries(client, url: str, **params) -> int:
    # Asked once first: a new query's round trips depend on whether its vector is ready before
    # the text SQL runs (a race with the embedding thread); a repeated one's vector is cached.
    assert client.get(url, params).status_code == 200
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url, params).status_code == 200
    return len(captured)
