"""A restore's record (knowledge/records.py) is read into typed values before anything trusts it:
an entry's fields at one revision come from the mirror file's record, a wrong shape is refused by
name, and the restore's checks hand back the state with its sources as a write stores them."""

from __future__ import annotations

import datetime as dt

import pytest

from history.file_format import RevisionFile
from knowledge.errors import ValidationFailed
from knowledge.records import EntryRecord, RecordRefused
from knowledge.services._kernel.mirror_restore import check_state

WHEN = dt.datetime(2026, 3, 4, 5, 6, 7, tzinfo=dt.UTC)


def a_file(**changes) -> RevisionFile:
    values = dict(id="ab12cd", project="", subtopic="", slug="", title="Deploy", kind="runbook",
                  body="# Steps\n", tags=("ops", "deploy"), version=3, created=WHEN,
                  updated=WHEN, verified_by="alice", verified_at=WHEN, supersedes="zz99",
                  sources=({"kind": "URL", "external_id": " x1 ", "url": "https://e.org/x"},),
                  searchable=False, metadata={"owner": "ops"})  # fmt: skip
    return RevisionFile(**(values | changes))


def test_an_entry_record_holds_what_its_file_says():
    record = EntryRecord.parse(a_file().record())
    assert record == EntryRecord(
        title="Deploy", body="# Steps\n", kind="runbook", version=3, id="ab12cd",
        tags=("ops", "deploy"), searchable=False, metadata={"owner": "ops"},
        verified_by="alice", verified_at=WHEN, supersedes="zz99", created=WHEN, updated=WHEN,
        sources=({"kind": "URL", "external_id": " x1 ", "url": "https://e.org/x"},),
    )  # fmt: skip


def test_what_a_file_leaves_unset_is_empty_in_the_record():
    record = EntryRecord.parse(a_file(verified_by="", verified_at=None, supersedes="",
                                      sources=(), metadata={}, tags=()).record())  # fmt: skip
    assert (record.verified_by, record.supersedes, record.superseded_by) == ("", "", "")
    assert record.verified_at is None and record.sources == () and record.metadata == {}
    assert record.searchable is False and record.status == "active"


VALID = a_file().record()


@pytest.mark.parametrize(
    "changes, said",
    [
        ({"title": None}, "an entry has no title"),
        ({"version": None}, "an entry has no version"),
        ({"version": "3"}, "version is not a whole number"),
        ({"version": True}, "version is not a whole number"),
        ({"title": ["a"]}, "title is not text"),
        ({"tags": "ops"}, "tags is not a list"),
        ({"tags": ["ops", 3]}, "a tag is not text"),
        ({"metadata": ["a"]}, "metadata is not a mapping"),
        ({"sources": {"kind": "url"}}, "sources is not a list"),
        ({"searchable": "no"}, "searchable is not true or false"),
        ({"created": "2026-03-04"}, "created is not a time"),
        ({"verified_by": 7}, "verified_by is not text"),
    ],
)
def test_an_entry_of_a_shape_cairn_does_not_write_is_refused_by_name(changes, said):
    with pytest.raises(RecordRefused, match=said):
        EntryRecord.parse(VALID | changes)
    assert issubclass(RecordRefused, ValueError)  # the restore reports it as an unreadable file


def test_the_checked_state_carries_its_sources_as_a_write_stores_them():
    checked = check_state(EntryRecord.parse(VALID))
    assert isinstance(checked, EntryRecord)
    assert checked.sources == ({"kind": "url", "external_id": "x1", "url": "https://e.org/x",
                                "title": ""},)  # fmt: skip
    assert checked.title == "Deploy" and checked.metadata == {"owner": "ops"}


@pytest.mark.parametrize(
    "changes, field",
    [
        ({"title": "a\x00b"}, "title"),
        ({"metadata": {"k": "\x00"}}, "metadata.k"),
        ({"title": "t" * 1000}, "title"),
        ({"sources": [{"kind": "url", "external_id": "x", "url": "javascript:alert(1)"}]},
         "sources.url"),
    ],
)  # fmt: skip
def test_a_state_a_write_would_refuse_is_refused_naming_the_field(changes, field):
    with pytest.raises(ValidationFailed) as caught:
        check_state(EntryRecord.parse(VALID | changes))
    assert caught.value.data["field"] == field
