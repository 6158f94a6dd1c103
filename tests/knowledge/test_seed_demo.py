"""`manage.py seed_demo`: the demo a newcomer's `make run` shows has a connected graph, a note
type with a schema and one entry that does not fit it, and an open task; running it again
changes nothing."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from knowledge.actors import Actor
from knowledge.models import Entry, Observation, Project, Relation
from knowledge.note_types.reads import project_note_types, schema_validate

pytestmark = pytest.mark.django_db


def seed(*args) -> str:
    out = StringIO()
    call_command("seed_demo", *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def demo(db):
    seed("--if-empty")
    return Actor.for_user(Entry.objects.first().created_by)


def test_the_demo_entries_carry_observations_and_links_that_resolve(demo):
    assert Observation.objects.filter(valid_to__isnull=True).count() >= 20
    links = Relation.objects.filter(valid_to__isnull=True)
    assert links.count() >= 12
    assert not links.filter(target__isnull=True).exists(), "every demo link names a demo entry"
    linked = set(links.values_list("source_id", flat=True)) | set(
        links.values_list("target_id", flat=True)
    )
    unlinked = Entry.objects.exclude(pk__in=linked).exclude(kind="schema")
    assert list(unlinked.values_list("title", flat=True)) == ["Candidate: J. Doe"]


def test_the_demo_has_a_person_schema_that_one_entry_does_not_fit(demo):
    (run,) = schema_validate(demo, project="platform", note_type="person")
    assert run.schema is not None and run.total == 2
    assert [(fit.entry.title, fit.report.summary()) for fit in run.misfits] == [
        ("Tom Becker", "team is missing (expected a '- [team] …' observation)")
    ]
    types = {t.kind: t for t in project_note_types(demo, "platform")}
    assert (types["person"].entries, types["person"].fitting) == (2, 1)
    assert Project.objects.get(slug="platform").schema_mode == "warn"


def test_the_demo_has_one_open_task(demo):
    open_tasks = Entry.objects.filter(kind="task", status="open")
    assert list(open_tasks.values_list("title", flat=True)) == ["Follow-up: add migration checks"]


def test_seeding_again_changes_nothing(demo):
    revisions = Entry.history.count()
    assert seed("--if-empty") == ""
    assert "11 unchanged" in seed()
    assert Entry.history.count() == revisions


def test_the_demo_has_an_agents_run_to_see_and_undo(demo):
    from knowledge.models import Membership
    from knowledge.selectors.runs import runs_list

    owner = Actor.for_user(Membership.objects.filter(role="maintainer").first().user)
    (run,) = runs_list(owner)
    assert (run.agent, run.created, run.changed, run.deleted) == ("agent:claude-code", 1, 2, 0)
    assert run.token.startswith("demo agent (cairn_")
