"""What ranks first (issue 35): the demo's questions, searched as a newcomer would."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from knowledge.actors import Actor
from knowledge.models import Entry
from knowledge.search import search_entries
from knowledge.services.embeddings import lexeme_stats_refresh

pytestmark = pytest.mark.django_db

RESTORE = "how long does it take to get the database back from a dump?"


@pytest.fixture
def demo(db):
    call_command("seed_demo", "--if-empty", stdout=None)
    return Actor.for_user(Entry.objects.first().created_by)


def titles(actor, query, mode="hybrid"):
    return [hit.title for hit in search_entries(actor, query, mode=mode)]


def test_how_long_a_restore_takes_finds_the_runbook_first(demo, index):
    index(*Entry.objects.all())
    assert titles(demo, RESTORE)[0] == "Restore from backup"


def test_the_runbook_comes_first_by_its_words_alone(demo):
    # Before the worker has embedded anything (a fresh demo), words alone must get it right;
    # the outage note shares "database" with the question and trails by a small margin.
    lexeme_stats_refresh()
    assert titles(demo, RESTORE, mode="text")[:2] == [
        "Restore from backup",
        "Checkout outage 2026-08-14",
    ]
