"""One lookup per read: get, history and diff cost a fixed, small number of queries.

The tools answer in the test's thread (as they do in their worker thread over MCP) so the
queries counted are the tool's own, not the transport's or the token check's.
"""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from knowledge.services import EntryFields, entry_update, entry_upsert
from mcp_api import tools


@pytest.fixture
def noted(actor, project):
    entry = entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="Plan", body="one")
    ).entry
    return entry_update(actor=actor, ref=entry.pk, fields=EntryFields(body="two")).entry


def _queries(tool, actor, **kwargs) -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        result = tools.answer(tool, actor, kwargs)
    assert not result.is_error, result.content[0].text
    return [q["sql"] for q in captured]


def _entry_lookups(sql: list[str]) -> int:
    """Queries that find the entry itself (the FROM of the knowledge_entry table)."""
    return sum('FROM "knowledge_entry"' in q for q in sql)


@pytest.mark.parametrize(
    ("tool", "kwargs", "queries"),
    [
        # the entry, what it links to, what links to it, its sources
        ("get", {"offset": 0, "max_chars": 1000}, 4),
        # the entry, its revisions (with their users)
        ("history", {"limit": 10}, 2),
        # the entry, and per version the revision with its project and subtopic
        ("diff", {"from_version": 1, "to_version": None}, 3),
    ],
    ids=["get", "history", "diff"],
)
def test_a_read_looks_the_entry_up_once(actor, noted, tool, kwargs, queries):
    ref = {"id": noted.short_id}
    sql = _queries(tool, actor, **ref, **kwargs)
    assert _entry_lookups(sql) == 1, "\n".join(sql)
    assert len(sql) == queries, f"{len(sql)} queries:\n" + "\n".join(sql)


@pytest.mark.parametrize(
    ("fields", "outcome"),
    [({"status": "resolved"}, "updated"), ({"status": "active"}, "unchanged")],
    ids=["changed", "unchanged"],
)
def test_an_update_reads_the_entry_only_under_its_lock(actor, noted, fields, outcome):
    """update says what it did from the entry as it found it locked: no read before the lock,
    which a concurrent write could make stale."""
    with CaptureQueriesContext(connection) as captured:
        result = tools.answer("update", actor, {"id": noted.short_id, **fields})
    assert not result.is_error, result.content[0].text
    assert result.structured_content["outcome"] == outcome
    first = next(q["sql"] for q in captured if 'FROM "knowledge_entry"' in q["sql"])
    assert "FOR UPDATE" in first, f"the entry is read before it is locked:\n{first}"
