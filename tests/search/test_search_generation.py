"""The search generation (knowledge/search/result_cache.py) never stands still on a write and
never goes back (issue 44): the first write after the migration made the sequence moves it (a
fresh sequence reads as 0, not as the 1 its first advance gives), so an answer kept before that
write is not given after it. A restore moving it past every value the old database used is
tested with the restore (tests/history/test_backup_while_serving.py)."""

from __future__ import annotations

import pytest
from django.db import connection

from knowledge.db.generation import SEQUENCE
from knowledge.search import result_cache, search_entries
from knowledge.services import EntryFields, entry_upsert

pytestmark = pytest.mark.django_db(transaction=True)


def generation(actor) -> int:
    with connection.cursor() as cursor:
        cursor.execute(*result_cache.generation_statement(actor))
        return result_cache.stamp(cursor.fetchall())[0]


def titles(actor, query: str) -> list[str]:
    return [hit.title for hit in search_entries(actor, query, mode="text")]


def test_the_first_write_after_the_migration_moves_the_generation(actor, project):
    entry_upsert(actor=actor, project="acme", fields=EntryFields(title="Gate plan", body="x"))
    with connection.cursor() as cursor:  # as `migrate` leaves it: never advanced
        cursor.execute("SELECT setval(%s, 1, false)", [SEQUENCE])
    fresh = generation(actor)
    assert titles(actor, "gate") == ["Gate plan"]  # kept under the fresh generation

    entry_upsert(actor=actor, project="acme", fields=EntryFields(title="Gate drill", body="y"))

    assert generation(actor) > fresh
    assert sorted(titles(actor, "gate")) == ["Gate drill", "Gate plan"]
