"""A save's revision row is written by plain SQL (knowledge/db/revisions.py): it
must be the row django-simple-history writes for the same save."""

from __future__ import annotations

import pytest

from knowledge.errors import ValidationFailed
from knowledge.models import Entry, HistoricalEntry
from knowledge.services import EntryFields, entry_update, entry_upsert
from knowledge.services._kernel import record

pytestmark = pytest.mark.django_db

SKIP = {"history_id", "history_date", "updated_at"}  # when each was written
# The run a row belongs to (knowledge/services/_kernel/runs.py): simple-history knows none.
RUN = {"history_token_id", "history_agent", "history_run"}


def _row(revision: HistoricalEntry) -> dict:
    return {
        f.attname: getattr(revision, f.attname)
        for f in HistoricalEntry._meta.concrete_fields
        if f.attname not in SKIP | RUN
    }


def test_the_revision_row_is_the_one_simple_history_writes(actor, project):
    fields = EntryFields(
        title="Deploy", body="Roll back.\n", tags=["ops"], metadata={"ticket": 7}, kind="runbook"
    )
    entry = entry_upsert(actor=actor, project="acme", subtopic="infra", fields=fields).entry
    entry_update(actor=actor, ref=entry.pk, fields=EntryFields(body="Restart.\n"), reason="why")
    ours = list(HistoricalEntry.objects.filter(id=entry.pk).order_by("history_id"))
    assert [r.history_type for r in ours] == ["+", "~"]
    assert ours[1].history_change_reason == "why" and ours[1].history_user_id == actor.user.pk
    # The same save once more, through simple-history's own post_save.
    again = Entry.objects.get(pk=entry.pk)
    assert ours[1].updated_at == again.updated_at
    record(again, actor, "why")
    again.save()
    theirs = HistoricalEntry.objects.filter(id=entry.pk).latest("history_id")
    assert _row(theirs) == _row(ours[1])
    assert (ours[1].metadata, ours[1].tags, ours[1].git_commit, ours[1].sources) == (
        {"ticket": 7}, ["ops"], "", None,
    )  # fmt: skip
    assert (ours[1].history_agent, ours[1].history_token_id, ours[1].history_run) == (
        "human:alice", None, "",
    )  # fmt: skip


def test_who_and_why_are_handed_to_the_insert_not_carried_on_the_entry(actor, project):
    entry = entry_upsert(actor=actor, project="acme", fields=EntryFields(title="A", body="")).entry
    written = entry_update(actor=actor, ref=entry.pk, fields=EntryFields(body="B\n"),
                           reason="  why  ").entry  # fmt: skip
    assert not hasattr(entry, "_history_user") and not hasattr(entry, "_change_reason")
    assert not hasattr(written, "_history_user") and not hasattr(written, "_change_reason")
    row = HistoricalEntry.objects.filter(id=entry.pk).latest("history_id")
    assert (row.history_user_id, row.history_change_reason) == (actor.user.pk, "why")
    with pytest.raises(ValidationFailed) as refused:
        entry_update(actor=actor, ref=entry.pk, fields=EntryFields(body="C\n"), reason="r" * 1001)
    assert refused.value.data["field"] == "reason"
