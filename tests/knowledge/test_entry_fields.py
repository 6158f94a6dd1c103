"""EntryFields: what a writer sends about an entry, the same for every write service."""

import dataclasses

import pytest

from knowledge.errors import AlreadyExists, ValidationFailed
from knowledge.models import Entry
from knowledge.services import (
    EntryFields,
    entry_correct,
    entry_revert,
    entry_update,
    entry_upsert,
    entry_verify,
)

pytestmark = pytest.mark.django_db

FIRST = EntryFields(
    title="Backups",
    body="Nightly at two.",
    kind="decision",
    tags=["ops", "db"],
    status="open",
    searchable=False,
    metadata={"owner": "ops"},
)
SECOND = EntryFields(
    title="Backups and restores",
    body="Hourly, tested weekly.",
    kind="fact",
    tags=["ops"],
    status="resolved",
    searchable=True,
    metadata={"owner": "dba"},
)


def test_a_revision_read_as_fields_gives_every_field():
    row = Entry(**FIRST.given())
    assert EntryFields.from_revision(row) == FIRST
    assert set(EntryFields.from_revision(row).given()) == set(EntryFields.names())


def test_a_revert_restores_exactly_the_fields_of_the_revision(actor, project):
    entry = entry_upsert(actor=actor, project="acme", fields=FIRST).entry
    entry_update(actor=actor, ref=entry.pk, fields=SECOND)
    first_revision = entry.history.get(version=1)

    reverted = entry_revert(actor=actor, ref=entry.short_id, to_version=1).entry

    assert EntryFields.from_revision(first_revision) == FIRST
    assert EntryFields.from_revision(reverted) == FIRST
    assert reverted.version == 3


def test_an_update_with_no_fields_changes_nothing_and_writes_no_revision(actor, project):
    entry = entry_upsert(actor=actor, project="acme", fields=FIRST).entry

    same = entry_update(actor=actor, ref=entry.pk, fields=EntryFields())

    assert same.outcome == "unchanged" and same.before is None
    assert same.entry.version == 1
    assert entry.history.count() == 1
    assert EntryFields.from_revision(Entry.objects.get(pk=entry.pk)) == FIRST


def test_an_update_keeps_the_fields_not_given(actor, project):
    entry = entry_upsert(actor=actor, project="acme", fields=FIRST).entry

    result = entry_update(actor=actor, ref=entry.pk, fields=EntryFields(status="resolved"))
    changed = result.entry

    assert result.outcome == "updated" and result.before.status == FIRST.status

    assert EntryFields.from_revision(changed) == dataclasses.replace(FIRST, status="resolved")
    assert changed.history.latest().history_change_reason == "update status"


def test_a_create_takes_cairns_defaults_for_the_fields_not_given(actor, project):
    entry = entry_upsert(actor=actor, project="acme", fields=EntryFields(title="Bare")).entry
    transcript = entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="Call", kind="Transcript")
    ).entry

    assert EntryFields.from_revision(entry) == EntryFields(
        title="Bare", body="", kind="note", tags=[], status="active", searchable=True, metadata={}
    )
    assert (transcript.kind, transcript.searchable) == ("transcript", False)


def test_an_upsert_without_a_title_is_refused(actor, project):
    with pytest.raises(ValidationFailed, match="needs a title"):
        entry_upsert(actor=actor, project="acme", fields=EntryFields(body="text"))
    assert not Entry.objects.exists()


def test_a_correction_keeps_the_old_fields_but_the_text(actor, project):
    old = entry_upsert(actor=actor, project="acme", fields=FIRST).entry

    new = entry_correct(actor=actor, ref=old.short_id, body="Hourly.", reason="it changed").entry

    assert EntryFields.from_revision(new) == dataclasses.replace(FIRST, body="Hourly.")


def test_pick_takes_the_entry_fields_of_a_request_and_leaves_the_rest():
    request = {"project": "acme", "subtopic": "ops", "title": "T", "tags": None, "reason": "r"}
    assert EntryFields.pick(request) == EntryFields(title="T")
    assert EntryFields.pick(request).given() == {"title": "T"}


def test_fields_cannot_be_changed_in_place():
    with pytest.raises(dataclasses.FrozenInstanceError):
        FIRST.title = "Other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        EntryFields("positional")  # type: ignore[misc]


def test_an_update_normalizes_the_title_kind_and_tags_it_is_given(actor, project):
    entry = entry_upsert(actor=actor, project="acme", fields=FIRST).entry
    fields = EntryFields(title="  Backups   nightly ", kind=" Runbook ", tags="Ops, ops ,db")
    changed = entry_update(actor=actor, ref=entry.pk, fields=fields).entry
    stored = Entry.objects.get(pk=entry.pk)
    assert (changed.title, changed.kind, changed.tags) == (
        "Backups nightly",
        "runbook",
        ["ops", "db"],
    )
    assert (stored.title, stored.kind, stored.tags) == ("Backups nightly", "runbook", ["ops", "db"])


def test_an_update_refuses_an_unknown_status_and_writes_nothing(actor, project):
    entry = entry_upsert(actor=actor, project="acme", fields=FIRST).entry
    with pytest.raises(ValidationFailed) as refused:
        entry_update(actor=actor, ref=entry.pk, fields=EntryFields(status="bogus"))
    assert refused.value.data["field"] == "status"
    assert Entry.objects.get(pk=entry.pk).status == FIRST.status


def test_a_rename_onto_a_title_taken_in_the_same_place_is_refused(actor, project):
    entry_upsert(actor=actor, project="acme", subtopic="ops", fields=FIRST)
    other = entry_upsert(
        actor=actor, project="acme", subtopic="ops", fields=EntryFields(title="Restores")
    ).entry
    with pytest.raises(AlreadyExists):
        entry_update(actor=actor, ref=other.pk, fields=EntryFields(title="BACKUPS"))
    assert Entry.objects.get(pk=other.pk).title == "Restores"
    # A change of case alone keeps the identity, and the same title elsewhere is another entry.
    assert entry_update(actor=actor, ref=other.pk, fields=EntryFields(title="RESTORES")).entry
    elsewhere = entry_upsert(actor=actor, project="acme", fields=EntryFields(title="Other")).entry
    assert entry_update(actor=actor, ref=elsewhere.pk, fields=EntryFields(title="Backups")).entry


def test_a_body_differing_only_in_whitespace_is_no_change_even_beside_a_new_kind(actor, project):
    entry = entry_upsert(actor=actor, project="acme", fields=FIRST).entry
    fields = EntryFields(kind="fact", body=FIRST.body + "  \r\n")
    result = entry_update(actor=actor, ref=entry.pk, fields=fields)
    assert result.entry.kind == "fact" and result.entry.body == FIRST.body


def test_only_a_change_of_text_clears_the_verification(actor, user, project):
    entry = entry_upsert(actor=actor, project="acme", fields=FIRST).entry
    entry_verify(actor=actor, ref=entry.pk)
    entry_update(actor=actor, ref=entry.pk, fields=EntryFields(status="resolved", tags=["x"]))
    assert Entry.objects.get(pk=entry.pk).verified_by == user
    entry_update(actor=actor, ref=entry.pk, fields=EntryFields(kind="fact"))
    assert Entry.objects.get(pk=entry.pk).verified_by is None
