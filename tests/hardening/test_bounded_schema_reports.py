"""Schema reports (validate, infer, diff, a project's note types) read the observations and
relations the write path stored, never the entries' bodies: 40 entries of 900 KB took 8 s a
report when each body was parsed again (issue 32)."""

from __future__ import annotations

import pytest

from knowledge.models import Entry
from knowledge.note_types.reads import (
    note_types_of,
    schema_diff,
    schema_infer,
    schema_validate,
)
from knowledge.services import EntryFields, entry_upsert

pytestmark = pytest.mark.django_db


@pytest.fixture
def people(actor, project):
    def write(title, body, kind="person"):
        fields = EntryFields(title=title, body=body, kind=kind)
        return entry_upsert(actor=actor, project="acme", fields=fields).entry

    write("person", "```yaml\nrole: string\nteam?: string\n```\n", kind="schema")
    written = [write(f"P{i}", f"- [role] R{i}\n- [desk] D{i}\n- knows [[P0]]") for i in range(3)]
    # A body rewritten behind the write path's back: what a report would find if it parsed
    # bodies again. The stored rows still say what the body meant when it was saved.
    Entry.objects.filter(pk__in=[e.pk for e in written]).update(body="- [team] nobody")
    return written


def test_validate_reads_the_stored_observations(actor, project, people):
    [run] = schema_validate(actor, project="acme", note_type="person")
    assert (run.total, run.fitting) == (3, 3)
    report = run.results[0].report
    assert report.unmatched_observations == {"desk": 1}
    assert report.unmatched_relations == {"knows": 1}
    [one] = schema_validate(actor, ref=people[0].pk)
    assert one.results[0].report.fits


def test_infer_and_diff_read_the_stored_observations(actor, project, people):
    usage = {u.name: u.share for u in schema_infer(actor, project="acme", note_type="person")
             .inference.usages}  # fmt: skip
    assert usage.get("role") == 1.0 and usage.get("desk") == 1.0 and "team" not in usage
    drift = schema_diff(actor, project="acme", note_type="person").drift
    assert [u.name for u in drift.new_fields] == ["desk", "knows"]


def test_the_note_type_list_reads_the_stored_observations(actor, project, people):
    person = next(t for t in note_types_of(actor, project) if t.kind == "person")
    assert (person.checked, person.fitting) == (3, 3)
