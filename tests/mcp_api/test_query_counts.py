"""One lookup per read: get, history and diff cost a fixed, small number of queries.

The handlers are called directly (as the MCP tools call them, in their worker thread) so the
queries counted are the tool's own, not the transport's or the token check's.
"""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from knowledge.services import EntryFields, entry_update, entry_upsert
from mcp_api import handlers


@pytest.fixture
def noted(actor, project):
    entry = entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="Plan", body="one")
    ).entry
    return entry_update(actor=actor, ref=entry.pk, fields=EntryFields(body="two"))


def _queries(fn, actor, **kwargs) -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        result = handlers.guarded(fn, actor, **kwargs)
    assert not result.is_error, result.content[0].text
    return [q["sql"] for q in captured]


def _entry_lookups(sql: list[str]) -> int:
    """Queries that find the entry itself (the FROM of the knowledge_entry table)."""
    return sum('FROM "knowledge_entry"' in q for q in sql)


@pytest.mark.parametrize(
    ("tool", "kwargs", "queries"),
    [
        # the entry, what it links to, what links to it, its sources
        (handlers.get, {"offset": 0, "max_chars": 1000}, 4),
        # the entry, its revisions (with their users)
        (handlers.history, {"limit": 10}, 2),
        # the entry, and per version the revision with its project and subtopic
        (handlers.diff, {"from_version": 1, "to_version": None}, 3),
    ],
    ids=["get", "history", "diff"],
)
def test_a_read_looks_the_entry_up_once(actor, noted, tool, kwargs, queries):
    ref = {"id": noted.short_id}
    sql = _queries(tool, actor, **ref, **kwargs)
    assert _entry_lookups(sql) == 1, "\n".join(sql)
    assert len(sql) == queries, f"{len(sql)} queries:\n" + "\n".join(sql)
