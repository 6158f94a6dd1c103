"""No N+1: a page costs the same number of queries for 3 entries as for 15, and the entry page
and its actions look the entry up once."""

from __future__ import annotations

import pytest

from knowledge.services import EntryFields, entry_update, entry_upsert
from tests.web.pages.responses import queries

pytestmark = pytest.mark.django_db


def _fill(actor, start: int, stop: int) -> None:
    for i in range(start, stop):
        entry_upsert(
            actor=actor,
            project="acme",
            subtopic=f"area-{i % 3}/deep",
            fields=EntryFields(
                title=f"Note {i}",
                body=f"launch step {i}",
                tags=["t"],
                status="open" if i % 2 else "active",
            ),
            sources=[{"kind": "url", "external_id": f"u{i}", "url": f"https://example.org/{i}"}],
        )
        entry_upsert(
            actor=actor, project="acme", fields=EntryFields(title=f"Top {i}", body="launch")
        )


@pytest.mark.parametrize(
    ("url", "most"),
    [
        ("/", 8),
        ("/p/acme/", 8),
        ("/p/acme/t/area-1/deep/", 8),
        ("/search/?q=launch&history=on", 14),
    ],
)
def test_list_pages_cost_a_constant_number_of_queries(alice, actor, url, most):
    _fill(actor, 0, 3)
    # A search's first asking waits for its query's vector, and whether the vector is ready
    # before the text SQL (one round trip for both) or after (two) is a race with the model's
    # thread; asked once first, the vector is remembered and both counts take the same path.
    queries(alice, url)
    small = queries(alice, url)
    _fill(actor, 3, 15)
    large = queries(alice, url)
    assert large == small <= most, f"{url}: {small} queries for few entries, {large} for more"


def test_entry_page_costs_a_constant_number_of_queries(alice, actor, plan):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as before:
        alice.get(f"/e/{plan.short_id}/")
    for i in range(6):
        entry_update(actor=actor, ref=plan.pk, fields=EntryFields(body=f"v{i}"))
    with CaptureQueriesContext(connection) as after:
        alice.get(f"/e/{plan.short_id}/")
    assert len(after) == len(before) <= 12


def test_entry_page_looks_the_entry_up_once(alice, plan):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        assert alice.get(f"/e/{plan.short_id}/").status_code == 200
    sql = [q["sql"] for q in captured]
    lookups = [q for q in sql if q.startswith('SELECT "knowledge_entry"."id"') and "LIMIT 1" in q]
    assert len(lookups) == 1, "\n".join(lookups)
    # 10: the entry once (it was twice), and its note type's schema once
    assert len(sql) == 10, "\n".join(sql)


@pytest.mark.parametrize(
    ("action", "data"), [("verify", {}), ("status", {"status": "open"})], ids=["verify", "status"]
)
def test_an_entry_action_looks_the_entry_up_once(alice, plan, action, data):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        response = alice.post(f"/e/{plan.short_id}/{action}/", {"version": plan.version, **data})
    assert response.status_code == 302 and response.url == f"/e/{plan.short_id}/"
    sql = [q["sql"] for q in captured]
    lookups = [q for q in sql if q.startswith('SELECT "knowledge_entry"."id"') and "LIMIT 1" in q]
    assert len(lookups) == 1 and "FOR UPDATE" in lookups[0], "\n".join(lookups)
