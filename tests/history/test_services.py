"""Revert (a new revision through the services), history and diff selectors."""

import pytest

from history import mirror
from history.selectors import entry_diff, entry_history
from knowledge.actors import Actor
from knowledge.errors import EntryConflict, Forbidden, NotFound, ValidationFailed
from knowledge.models import Entry
from knowledge.selectors import entry_get
from knowledge.services import EntryFields, entry_move, entry_revert, entry_update, entry_upsert

pytestmark = pytest.mark.django_db


@pytest.fixture
def entry(actor, project):
    e = entry_upsert(
        actor=actor,
        project="acme",
        subtopic="plans",
        fields=EntryFields(title="Plan", body="alpha\nbeta\ngamma\n", tags=["q3"]),
    ).entry
    entry_update(
        actor=actor,
        ref=e.pk,
        fields=EntryFields(body="alpha\nBETA\ngamma\ndelta\n", tags=["q4"]),
        reason="new numbers",
    )
    return Entry.objects.get(pk=e.pk)


def test_revert_is_a_new_revision_through_the_services(actor, entry):
    reverted = entry_revert(actor=actor, ref=entry.short_id, to_version=1, reason="undo").entry
    assert reverted.version == 3
    assert reverted.body == "alpha\nbeta\ngamma\n"
    assert reverted.tags == ["q3"]
    rows = list(entry.history.order_by("history_id"))
    assert len(rows) == 3  # nothing rewritten
    assert rows[-1].history_change_reason == "undo"
    assert rows[-1].history_user.username == "alice"
    assert mirror.pending().count() == 3  # and the mirror will commit it like any write


def test_revert_moves_the_entry_back(actor, entry):
    entry_move(actor=actor, ref=entry.pk, subtopic="archive")
    reverted = entry_revert(actor=actor, ref=entry.pk, to_version=2).entry
    assert reverted.subtopic.path == "plans"
    assert reverted.version == 4


def test_revert_checks_the_version_the_caller_saw(actor, entry):
    with pytest.raises(EntryConflict):
        entry_revert(actor=actor, ref=entry.pk, to_version=1, expected_version=1)


def test_revert_to_the_current_text_says_so(actor, entry):
    with pytest.raises(ValidationFailed, match="already reads as version 2"):
        entry_revert(actor=actor, ref=entry.pk, to_version=2)


def test_revert_to_an_unknown_version_names_the_range(actor, entry):
    with pytest.raises(NotFound, match="versions run from 1 to 2"):
        entry_revert(actor=actor, ref=entry.pk, to_version=9)


def test_a_read_only_token_cannot_revert(read_only_actor, entry):
    with pytest.raises(Forbidden):
        entry_revert(actor=read_only_actor, ref=entry.pk, to_version=1)


def test_history_lists_who_when_why_and_commit(actor, entry):
    items = entry_history(actor, entry)
    assert [i["version"] for i in items] == [2, 1]
    assert items[0]["reason"] == "new numbers"
    assert items[0]["user"] == "alice"
    assert items[0]["generated_by"] == "human:alice"
    assert items[0]["git_commit"] is None  # pending
    mirror.drain()
    items = entry_history(actor, entry, limit=1)
    assert len(items) == 1 and len(items[0]["git_commit"]) == 40


def test_history_is_scoped_by_what_the_actor_can_see(entry, user):
    stranger = Actor(user=user, project_ids=frozenset())
    with pytest.raises(NotFound):
        entry_get(stranger, entry.pk)
    # Handed the entry anyway, the selectors still show none of its revisions.
    assert entry_history(stranger, entry) == []
    with pytest.raises(NotFound):
        entry_diff(stranger, entry, from_version=1)


def test_diff_is_a_compact_unified_diff(actor, entry):
    diff = entry_diff(actor, entry, from_version=1, to_version=2, context=0)
    lines = diff.splitlines()
    assert lines[0] == f"--- {entry.short_id}@v1"
    assert lines[1] == f"+++ {entry.short_id}@v2"
    assert "-beta" in lines and "+BETA" in lines and "+delta" in lines
    assert lines[-1] == "Metadata: tags [q3] → [q4]"
    assert not any(line.startswith(("-version", "+version", "+updated")) for line in lines)
    assert "alpha" not in diff  # no context asked for
    assert entry_diff(actor, entry, from_version=2) == ""


def test_revert_looks_the_entry_up_once_and_locks_it(actor, entry):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        entry_revert(actor=actor, ref=entry.short_id, to_version=1)
    lookups = [q["sql"] for q in captured if q["sql"].startswith('SELECT "knowledge_entry"."id"')]
    assert len(lookups) == 1 and lookups[0].endswith('FOR UPDATE OF "knowledge_entry"'), lookups
