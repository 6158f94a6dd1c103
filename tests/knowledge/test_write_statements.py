"""A write costs a fixed, small number of statements, its report included (issue 33): the
tools answer in the test's thread, so what is counted is the write and its report, not the
transport or the token check."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from knowledge.models import Entry
from knowledge.services import EntryFields, entry_update, entry_upsert
from knowledge.services._kernel import index_text
from mcp_api import tools

pytestmark = pytest.mark.django_db

BODY = "# {title}\n\nText.\n\n- [fact] it ran #bench\n- relates_to [[Target]]\n"


def _statements(actor, tool: str, args: dict) -> list[str]:
    with CaptureQueriesContext(connection) as captured:
        result = tools.answer(tool, actor, args)
    assert not result.is_error, result.content[0].text
    return [" ".join(q["sql"].split()) for q in captured]


@pytest.fixture
def written(actor, project):
    entry_upsert(actor=actor, project="acme", fields=EntryFields(title="Target", body="x"))
    # A body with a fact and a resolved link, so an update closes one, keeps the other and
    # removes a line whose revision the report names.
    return entry_upsert(
        actor=actor,
        project="acme",
        fields=EntryFields(title="Log", body=BODY.format(title="Log").replace("it ran", "it rose")),
    ).entry


@pytest.mark.parametrize(
    ("tool", "args", "count"),
    [
        # SAVEPOINT, project, identity lock, INSERT + revision, link targets, observations and
        # relations (one statement), waiting links, RELEASE; report: link names, similar titles
        # and same body (one statement)
        ("upsert", {"project": "acme", "title": "New", "body": BODY.format(title="New")}, 10),
        # SAVEPOINT, project, identity lock, UPDATE + revision, current facts, close and add
        # (one statement), RELEASE; report: the removed line's revisions, link names
        ("upsert", {"project": "acme", "title": "Log", "body": BODY.format(title="Log")}, 10),
        # SAVEPOINT, lock, UPDATE + revision, current facts, add observation, RELEASE; report:
        # the name of the link's target
        ("edit", {"operation": "append", "content": "- [note] more"}, 8),
    ],
    ids=["upsert-new", "upsert-update", "append"],
)
def test_a_write_and_its_report_cost_a_fixed_number_of_statements(
    actor, written, tool, args, count
):
    """Pinned, not a ceiling: a statement more fails here, and one fewer is recorded here."""
    if tool == "edit":
        args = {**args, "id": written.short_id}
    sql = _statements(actor, tool, args)
    assert len(sql) == count, f"{len(sql)} statements:\n" + "\n".join(sql)
    # The service's own transaction only (a savepoint inside the test's): the save has none.
    assert sum(q.startswith("SAVEPOINT") for q in sql) == 1, "\n".join(sql)
    # The full-text vector is computed by the save's own statement, not a second UPDATE.
    assert not any('SET "search_vector"' in q for q in sql), "\n".join(sql)


def test_the_vector_a_save_computes_is_the_one_a_reindex_makes(actor, project):
    fields = EntryFields(title="Deploy notes", body="Roll back the cache.\n", tags=["ops", "db"])
    entry = entry_upsert(actor=actor, project="acme", subtopic="infra/prod", fields=fields).entry
    entry_update(actor=actor, ref=entry.pk, fields=EntryFields(body="Restart the queue.\n"))
    saved = Entry.objects.values_list("search_vector", flat=True).get(pk=entry.pk)
    index_text(Entry.objects.select_related("subtopic").get(pk=entry.pk))
    assert Entry.objects.values_list("search_vector", flat=True).get(pk=entry.pk) == saved
    assert "restart" in saved and "cach" not in saved and "infra" in saved
    # The hand-written template weighs as django.contrib.postgres's SearchVector does.
    from django.conf import settings
    from django.contrib.postgres.search import SearchVector
    from django.db.models import Value

    config = settings.CAIRN_SEARCH_CONFIG
    Entry.objects.filter(pk=entry.pk).update(
        search_vector=SearchVector("title", weight="A", config=config)
        + SearchVector(Value("ops db infra prod"), weight="B", config=config)
        + SearchVector("body", weight="C", config=config)
    )
    assert Entry.objects.values_list("search_vector", flat=True).get(pk=entry.pk) == saved


def test_an_observations_vector_is_the_one_search_expects(actor, project):
    """The save computes each new observation's vector in its own INSERT: the same vector as
    django.contrib.postgres's SearchVector makes (content A, category B, context C)."""
    from django.conf import settings
    from django.contrib.postgres.search import SearchVector

    from knowledge.models import Observation

    body = "- [decision] Roll back the cache #ops (after the outage)\n- relates_to [[Nowhere]]\n"
    entry_upsert(actor=actor, project="acme", fields=EntryFields(title="Facts", body=body))
    config = settings.CAIRN_SEARCH_CONFIG
    row = Observation.objects.annotate(
        expected=SearchVector("content", weight="A", config=config)
        + SearchVector("category", weight="B", config=config)
        + SearchVector("context", weight="C", config=config)
    ).get(entry__title="Facts")
    assert (row.category, row.tags, row.context) == ("decision", ["ops"], "after the outage")
    assert row.search_vector == row.expected and "cach" in row.search_vector
