"""Rows read by hand become the instances the ORM makes: converters applied, the fields left
out deferred."""

from __future__ import annotations

import pytest
from django.db import connection

from knowledge.db import columns, from_row
from knowledge.models import Entry
from knowledge.services import EntryFields, entry_upsert

pytestmark = pytest.mark.django_db


def test_columns_load_an_entry_as_the_orm_does(actor, project):
    fields = EntryFields(title="Rows", body="x", tags=["a"], metadata={"n": [1, 2]})
    written = entry_upsert(actor=actor, project="acme", subtopic="a/b", fields=fields).entry
    cols = columns(Entry, "e", frozenset({"search_vector"}))
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {cols.sql} FROM knowledge_entry e WHERE e.id = %s", [written.pk])
        got = cols.instance(cursor.fetchone())
    expected = Entry.objects.get(pk=written.pk)
    for field in Entry._meta.concrete_fields:
        if field.attname != "search_vector":
            assert getattr(got, field.attname) == getattr(expected, field.attname), field.name
    assert got.metadata == {"n": [1, 2]} and not got._state.adding
    assert got.get_deferred_fields() == {"search_vector"}


def test_from_row_defers_the_fields_not_named(actor, project):
    got = from_row(Entry, ("id", "title"), (5, "Five"))
    assert (got.pk, got.title) == (5, "Five")
    assert "body" in got.get_deferred_fields() and not got._state.adding
