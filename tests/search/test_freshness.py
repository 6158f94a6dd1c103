"""Freshness you can see: a search says, in one short note, when entries of the searched set
wait for their vectors (found by words only meanwhile); REST and MCP pass it on."""

import datetime as dt

import pytest
from django.db.models import F

from knowledge.models import Entry, Sensitivity
from knowledge.search import SearchFilters, search_entries
from knowledge.services.embeddings import entries_embed
from tests.factories import EntryFactory, ProjectFactory

pytestmark = pytest.mark.django_db


def backdate(entry, seconds: int) -> None:
    Entry.objects.filter(pk=entry.pk).update(
        embed_pending_since=F("embed_pending_since") - dt.timedelta(seconds=seconds)
    )


def test_a_search_says_how_many_entries_of_its_scope_wait_for_vectors(
    actor, project, http_provider_settings
):
    done = EntryFactory(project=project, title="Kettle", body="Descale the kettle monthly.")
    entries_embed(entry_ids=[done.pk])
    assert search_entries(actor, "kettle").note == ""  # nothing waits

    new = EntryFactory(project=project, title="Boiler", body="Bleed the radiators in autumn.")
    found = search_entries(actor, "kettle")
    assert [h.title for h in found] == ["Kettle"]
    assert found.note == (
        "1 entry written in the last minute is found by words only until its vectors are ready."
    )
    assert search_entries(actor, "kettle", mode="semantic").note == (
        "1 entry written in the last minute is left out of a search by meaning until its "
        "vectors are ready."
    )
    assert search_entries(actor, "kettle", mode="text").note == ""  # words are all it uses

    EntryFactory(project=project, title="Heater", body="Service the heater yearly.")
    backdate(new, 150)
    assert search_entries(actor, "kettle").note == (
        "2 entries written in the last 3 minutes are found by words only until their vectors "
        "are ready."
    )
    # The search's filters hold: entries of other kinds that wait are not this search's.
    recipes = SearchFilters.parse(kinds=["recipe"])
    assert search_entries(actor, "kettle", filters=recipes).note == ""
    entries_embed(entry_ids=list(Entry.objects.values_list("pk", flat=True)))
    assert search_entries(actor, "kettle").note == ""


def test_entries_the_reader_cannot_see_are_never_counted(actor, project, http_provider_settings):
    vault = ProjectFactory(slug="vault", sensitivity=Sensitivity.CONFIDENTIAL)
    EntryFactory(project=vault, title="Secret plan", body="Only vault members read this.")
    assert search_entries(actor, "plan").note == ""
    EntryFactory(project=project, title="Open plan", body="Everyone in acme reads this.")
    assert search_entries(actor, "plan").note.startswith("1 entry written")
