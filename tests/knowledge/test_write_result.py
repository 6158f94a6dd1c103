"""Every entry service returns one WriteResult, and nothing rides on the model instances it
hands back: what a write found out (its schema report, whether it moved the entry, whether the
actor may write) is on the result or passed along, never an attribute a surface must getattr."""

import pytest

from knowledge.models import Entry
from knowledge.services import (
    EntryFields,
    WriteResult,
    entry_correct,
    entry_create,
    entry_delete,
    entry_edit,
    entry_move,
    entry_retag,
    entry_revert,
    entry_set_status,
    entry_undelete,
    entry_update,
    entry_upsert,
    entry_verify,
)

pytestmark = pytest.mark.django_db

SCHEMA = "```yaml\nrole: string, job title\n```\n"
# django-simple-history's own API for the saves it still records (record() sets them).
HISTORY_API = {"_history_user", "_change_reason"}


def riders(entry: Entry) -> set[str]:
    """What is on the instance besides its fields, Django's own state and simple-history's."""
    fields = {f.attname for f in Entry._meta.concrete_fields}
    return set(vars(entry)) - fields - {"_state", "_prefetched_objects_cache"} - HISTORY_API


def test_no_entry_write_leaves_anything_on_the_instance(actor, project):
    project.schema_mode = "warn"  # every authored save checks its text: a report to carry
    project.save(update_fields=["schema_mode"])
    entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="person", body=SCHEMA, kind="schema")
    )
    made = entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="Ada", body="x", kind="person")
    )
    ada = made.entry.pk
    other = entry_create(actor=actor, project="acme", fields=EntryFields(title="B", body="[[Ada]]"))
    results = {
        "upsert": made,
        "create": other,
        "update (moves)": entry_update(
            actor=actor, ref=ada, fields=EntryFields(title="Ada L"), subtopic="people"
        ),
        "edit": entry_edit(actor=actor, ref=ada, operation="append", content="- [role] CTO"),
        "move": entry_move(actor=actor, ref=ada, subtopic="team"),
        "set_status": entry_set_status(actor=actor, ref=ada, status="archived"),
        "verify": entry_verify(actor=actor, ref=ada),
        "retag": entry_retag(actor=actor, ref=ada, add=["x"]),
        "revert (moves)": entry_revert(actor=actor, ref=ada, to_version=1),
        "correct": entry_correct(actor=actor, ref=ada, body="- [role] CEO", reason="wrong"),
        "delete": entry_delete(actor=actor, ref=other.entry.pk, reason="gone"),
        "undelete": entry_undelete(actor=actor, ref=other.entry.pk, reason="back"),
    }
    assert {name: type(r) for name, r in results.items()} == dict.fromkeys(results, WriteResult)
    assert {name: r.outcome for name, r in results.items()} == {
        "upsert": "created",
        "create": "created",
        "update (moves)": "updated",
        "edit": "updated",
        "move": "updated",
        "set_status": "updated",
        "verify": "updated",
        "retag": "updated",
        "revert (moves)": "updated",
        "correct": "corrected",
        "delete": "deleted",
        "undelete": "undeleted",
    }
    assert made.schema is not None and not made.schema.fits  # the report is on the result
    ridden = {
        name: riders(entry)
        for name, r in results.items()
        for entry in (r.entry, r.superseded)
        if entry is not None and riders(entry)
    }
    assert ridden == {}
