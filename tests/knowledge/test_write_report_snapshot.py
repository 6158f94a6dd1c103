"""A write's report compares against the entry as the write found it (WriteResult.before),
with the same answer as reading the previous revision back."""

from dataclasses import replace

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from knowledge.reads.write_reports import write_report
from knowledge.services import EntryFields, entry_correct, entry_edit, entry_upsert
from knowledge.write_result import EntryBeforeWrite

pytestmark = pytest.mark.django_db


def test_an_edits_report_from_its_snapshot_equals_the_one_read_back(actor, project):
    made = entry_upsert(
        actor=actor,
        project="acme",
        subtopic="ops",
        fields=EntryFields(title="Runbook", body="# Runbook\n\n- restart cache\n- page Sam\n"),
    )
    assert made.before is None  # a new entry has no before
    edited = entry_edit(
        actor=actor, ref=made.entry.pk, operation="find_replace", find="- page Sam", content=""
    )
    assert edited.before.version == made.entry.version == edited.entry.version - 1
    assert edited.before.path == "acme/ops"
    from_snapshot = write_report(actor, replace(edited, facts=None))
    read_back = write_report(actor, replace(edited, before=None, facts=None))
    assert from_snapshot == read_back
    assert [r["text"] for r in from_snapshot["change"]["removed_lines"]] == ["- page Sam"]


def test_an_upserts_report_names_changed_fields_without_reading_the_revision(actor, project):
    fields = EntryFields(title="Plan", body="one\n", tags=["a"], status="open")
    entry_upsert(actor=actor, project="acme", fields=fields)
    updated = entry_upsert(
        actor=actor,
        project="acme",
        fields=EntryFields(title="Plan", body="one\ntwo\n", tags=["a", "b"], status="resolved"),
    )
    with CaptureQueriesContext(connection) as with_snapshot:
        report = write_report(actor, replace(updated, facts=None))
    with CaptureQueriesContext(connection) as read_back:
        assert write_report(actor, replace(updated, before=None, facts=None)) == report
    assert report["change"]["fields"] == {
        "tags": {"from": ["a"], "to": ["a", "b"]},
        "status": {"from": "open", "to": "resolved"},
    }
    assert len(with_snapshot) == len(read_back) - 1  # the revision is not read back


def test_a_reports_facts_come_from_the_save_and_equal_the_ones_read_back(actor, project):
    """The observations and relations the save parsed and resolved (WriteResult.facts) make
    the same report as reading the rows back, without reading them: no statement for the
    facts of a write without links, one for the names of the entries its links reach."""
    entry_upsert(actor=actor, project="acme", fields=EntryFields(title="Cache", body="x"))
    body = "- [decision] Roll back #ops\n- relates_to [[Cache]]\n- depends_on [[Vendor]]\n"
    made = entry_upsert(actor=actor, project="acme", fields=EntryFields(title="Plan", body=body))
    assert made.facts is not None
    body += "- [fact] Took 5 minutes\n- links_to [[Nowhere]]\n"
    updated = entry_upsert(actor=actor, project="acme", fields=EntryFields(title="Plan", body=body))
    for result in (made, updated):
        with CaptureQueriesContext(connection) as from_save:
            report = write_report(actor, replace(result, before=None))
        with CaptureQueriesContext(connection) as read_back:
            again = write_report(actor, replace(result, before=None, facts=None))
        if result is made:  # the revision as it was then: read back now, the facts moved on
            assert report["relations"][0]["entry"]["title"] == "Cache"
            continue
        assert report == again
        assert len(from_save) == len(read_back) - 1
    assert [(o["content"], o["new"]) for o in report["observations"]] == [
        ("Roll back", False),
        ("Took 5 minutes", True),
    ]
    assert [(r["target"], r["resolved"]) for r in report["relations"]] == [
        ("Cache", True),
        ("Vendor", False),
        ("Nowhere", False),
    ]
    plain = entry_upsert(actor=actor, project="acme", fields=EntryFields(title="P", body="- [a] b"))
    with CaptureQueriesContext(connection) as no_links:
        write_report(actor, plain)
    with CaptureQueriesContext(connection) as no_links_read_back:
        write_report(actor, replace(plain, facts=None))
    assert len(no_links) == len(no_links_read_back) - 2  # neither observations nor relations


def test_a_corrections_report_compares_with_the_corrected_entry_as_it_was_found(actor, project):
    """entry_correct hands over the corrected entry as it found it (before its title was marked
    superseded) and the new entry's facts: the report is the one a surface used to rebuild from
    the new entry, the old body and the old title, facts read back."""
    body = "# Budget\n\n- [fact] Costs 10 EUR #money\n- relates_to [[Vendor]]\n- ask Sam\n"
    old = entry_upsert(
        actor=actor,
        project="acme",
        subtopic="ops",
        fields=EntryFields(title="Budget", body=body, tags=["money"]),
    ).entry
    entry_upsert(actor=actor, project="acme", fields=EntryFields(title="Vendor", body="x"))
    fixed = "# Budget\n\n- [fact] Costs 12 EUR #money\n- relates_to [[Vendor]]\n"
    result = entry_correct(actor=actor, ref=old.pk, body=fixed, reason="wrong sum")
    new, superseded = result.entry, result.superseded
    assert (result.outcome, superseded.pk, new.supersedes_id) == ("corrected", old.pk, old.pk)
    assert result.before == EntryBeforeWrite.of(old)  # found under the lock, title unmarked
    assert result.facts is not None

    report = write_report(actor, result)
    # What the MCP correct tool built before the result carried it.
    was = replace(
        EntryBeforeWrite.of(new),
        version=superseded.version - 1,
        body=superseded.body,
        title=superseded.title.removesuffix(f" (superseded {superseded.short_id})"),
    )
    rebuilt = write_report(actor, replace(result, before=was, facts=None, superseded=None))
    rebuilt["change"]["from_entry"] = superseded.short_id
    assert report == rebuilt
    assert report["change"]["from_entry"] == old.short_id
    assert [r["text"] for r in report["change"]["removed_lines"]] == [
        "- [fact] Costs 10 EUR #money",
        "- ask Sam",
    ]
    assert [(o["content"], o["new"]) for o in report["observations"]] == [("Costs 12 EUR", True)]
    assert [(r["target"], r["resolved"]) for r in report["relations"]] == [("Vendor", True)]
