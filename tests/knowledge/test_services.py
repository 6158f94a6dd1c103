import pytest

from knowledge.errors import AlreadyExists, EntryConflict, Forbidden, NotFound, ValidationFailed
from knowledge.models import Entry, EntryStatus, Membership, Role, Subtopic
from knowledge.paths import normalize_path
from knowledge.search import search_entries
from knowledge.selectors import entry_get
from knowledge.services import (
    EntryFields,
    ProjectFields,
    entry_create,
    entry_delete,
    entry_move,
    entry_set_status,
    entry_update,
    entry_upsert,
    project_create,
    subtopic_ensure,
)
from tests.factories import ProjectFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "raw",
    [
        "customer-x/2026-08/incident",
        " Customer X / 2026-08 / Incident ",
        "customer-x > 2026-08 > incident",
        "/customer-x/2026-08/incident/",
        "Customer   X\\2026-08\\INCIDENT",
    ],
)
def test_path_forms_normalize_to_one(raw):
    assert normalize_path(raw) == "customer-x/2026-08/incident"


def test_path_without_letters_is_rejected_with_a_hint():
    with pytest.raises(ValidationFailed, match="customer-x/2026-08/incident"):
        normalize_path("a/???/b")


def test_subtopic_ensure_creates_every_level_once(actor, project):
    leaf = subtopic_ensure(actor=actor, project="acme", path="Customer X > 2026-08 > Incident")
    again = subtopic_ensure(actor=actor, project="ACME", path="customer-x/2026-08/incident")
    assert leaf.pk == again.pk
    assert leaf.path == "customer-x/2026-08/incident"
    assert leaf.name == "Incident"
    assert leaf.parent.path == "customer-x/2026-08"
    assert leaf.parent.parent.parent is None
    assert Subtopic.objects.filter(project=project).count() == 3


def test_upsert_creates_then_updates_by_case_insensitive_identity(actor, project):
    first = entry_upsert(
        actor=actor, project="acme", subtopic="a/b", fields=EntryFields(title="Pricing", body="v1")
    )
    assert first.outcome == "created"
    assert first.entry.version == 1
    second = entry_upsert(
        actor=actor,
        project="Acme",
        subtopic="A > B",
        fields=EntryFields(title="PRICING", body="v2"),
    )
    assert second.outcome == "updated"
    assert second.entry.pk == first.entry.pk
    assert second.entry.version == 2
    assert Entry.objects.get(pk=first.entry.pk).body == "v2"


def test_create_refuses_an_existing_identity_and_leaves_it_alone(actor, project):
    first = entry_create(
        actor=actor, project="acme", subtopic="a/b", fields=EntryFields(title="Pricing", body="v1")
    ).entry
    with pytest.raises(AlreadyExists, match="already exists in acme/a/b") as refused:
        entry_create(
            actor=actor,
            project="acme",
            subtopic="A > B",
            fields=EntryFields(title="PRICING", body="v2"),
        )
    assert refused.value.data == {"field": "title", "entry": first.short_id}
    first.refresh_from_db()
    assert (first.body, first.version) == ("v1", 1)


def test_upsert_with_identical_content_changes_nothing(actor, project):
    entry = entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="Fact", body="Water is wet.\n")
    ).entry
    again = entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="fact", body="Water is wet.  \r\n")
    )
    assert again.outcome == "unchanged"
    assert again.entry.version == 1
    assert entry.history.count() == 1


def test_same_title_in_another_subtopic_is_another_entry(actor, project):
    a = entry_upsert(actor=actor, project="acme", fields=EntryFields(title="Notes", body="x")).entry
    b = entry_upsert(
        actor=actor, project="acme", subtopic="ops", fields=EntryFields(title="Notes", body="y")
    ).entry
    assert a.pk != b.pk


def test_a_title_is_taken_only_in_its_own_project_and_subtopic(actor, user, project):
    beta = ProjectFactory(slug="beta")
    Membership.objects.create(project=beta, user=user, role=Role.EDITOR)

    def note(project, subtopic, title):
        fields = EntryFields(title=title, body=title)
        return entry_upsert(actor=actor, project=project, subtopic=subtopic, fields=fields).entry

    note("beta", None, "Plan")
    note("acme", "ops", "Runbook")
    memo, draft = note("acme", None, "Memo"), note("acme", "dev", "Draft")
    other, third = note("acme", "dev", "Other"), note("acme", "dev", "Third")
    entry_update(actor=actor, ref=memo.pk, fields=EntryFields(title="Plan"))  # beta's only
    entry_update(actor=actor, ref=draft.pk, fields=EntryFields(title="Runbook"))  # ops' only
    entry_update(actor=actor, ref=other.pk, fields=EntryFields(title="Plan"))  # acme root's only
    with pytest.raises(AlreadyExists):
        entry_update(actor=actor, ref=third.pk, fields=EntryFields(title="runbook"))  # here
    assert Entry.objects.get(pk=third.pk).title == "Third"


def test_update_with_a_stale_version_names_the_current_one(actor, project):
    entry = entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="Plan", body="one")
    ).entry
    entry_update(actor=actor, ref=entry.pk, expected_version=1, fields=EntryFields(body="two"))
    with pytest.raises(EntryConflict) as excinfo:
        entry_update(
            actor=actor, ref=entry.pk, expected_version=1, fields=EntryFields(body="three")
        )
    assert excinfo.value.data["current_version"] == 2
    assert "expected_version=2" in excinfo.value.message
    assert Entry.objects.get(pk=entry.pk).body == "two"


def test_history_rows_carry_user_reason_and_agent(agent, project):
    entry = entry_upsert(
        actor=agent,
        project="acme",
        fields=EntryFields(title="Decision", body="Use Postgres"),
        reason="kickoff",
    ).entry
    entry_update(
        actor=agent, ref=entry.pk, fields=EntryFields(body="Use PostgreSQL 18"), reason="precise"
    )
    revisions = list(entry.history.order_by("history_id"))
    assert [r.history_change_reason for r in revisions] == ["kickoff", "precise"]
    assert {r.history_user.username for r in revisions} == {"alice"}
    assert revisions[-1].generated_by == "agent:test"
    assert [r.version for r in revisions] == [1, 2]


def test_delete_needs_a_reason_and_keeps_history(actor, project):
    entry = entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="Old", body="obsolete")
    ).entry
    with pytest.raises(ValidationFailed):
        entry_delete(actor=actor, ref=entry.pk, reason=" ")
    entry_delete(actor=actor, ref=entry.pk, reason="duplicate of New")
    assert not Entry.objects.filter(pk=entry.pk).exists()
    history = Entry.history.filter(id=entry.pk).order_by("history_id")
    assert [h.history_type for h in history] == ["+", "-"]
    assert history.last().history_change_reason == "duplicate of New"


def test_move_creates_the_target_path_and_a_revision(actor, project):
    entry = entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="Runbook", body="steps")
    ).entry
    moved = entry_move(actor=actor, ref=entry.short_id, subtopic="ops/runbooks").entry
    assert moved.subtopic.path == "ops/runbooks"
    assert moved.version == 2
    assert entry_get(actor, "acme/ops/runbooks/runbook").pk == entry.pk


def test_move_onto_an_existing_identity_is_refused(actor, project):
    entry_upsert(
        actor=actor, project="acme", subtopic="ops", fields=EntryFields(title="Runbook", body="a")
    )
    entry = entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="runbook", body="b")
    ).entry
    with pytest.raises(AlreadyExists):
        entry_move(actor=actor, ref=entry.pk, subtopic="ops")


def test_set_status_validates_and_records(actor, project):
    entry = entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="Todo", body="call back")
    ).entry
    with pytest.raises(ValidationFailed, match="open"):
        entry_set_status(actor=actor, ref=entry.pk, status="done-ish")
    done = entry_set_status(actor=actor, ref=entry.pk, status=EntryStatus.RESOLVED).entry
    assert done.status == "resolved"
    assert entry.history.count() == 2


def test_read_only_actor_cannot_write(read_only_actor, project):
    with pytest.raises(Forbidden, match="read-only"):
        entry_upsert(actor=read_only_actor, project="acme", fields=EntryFields(title="x", body="y"))


def test_unknown_project_suggests_close_matches(actor, project):
    with pytest.raises(NotFound) as excinfo:
        entry_upsert(actor=actor, project="acmee", fields=EntryFields(title="x", body="y"))
    assert "acme" in excinfo.value.data["suggestions"]
    # The core speaks to every surface: no MCP tool names (each surface adds its next moves).
    assert "(" not in excinfo.value.message
    assert "create" in excinfo.value.message


def test_project_create_normalizes_and_refuses_duplicates(actor, db):
    project = project_create(
        actor=actor, slug="Customer X", fields=ProjectFields(name="Customer X")
    )
    assert project.slug == "customer-x"
    with pytest.raises(AlreadyExists):
        project_create(actor=actor, slug="customer-x", fields=ProjectFields(name="Another"))


def test_transcripts_are_kept_out_of_search_by_default(actor, project):
    entry = entry_upsert(
        actor=actor,
        project="acme",
        fields=EntryFields(title="Call", body="zebra migration", kind="transcript"),
    ).entry
    assert entry.searchable is False
    entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="Note", body="zebra crossing")
    )
    assert [h.title for h in search_entries(actor, "zebra", mode="text")] == ["Note"]


def _found(actor, query):
    return [h.id for h in search_entries(actor, query, mode="text")]


def test_full_text_index_is_fresh_after_every_write(actor, project):
    entry = entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="Cache", body="redis eviction")
    ).entry
    assert _found(actor, "eviction") == [entry.pk]
    entry_update(actor=actor, ref=entry.pk, fields=EntryFields(body="memcached slabs"))
    assert _found(actor, "eviction") == []
    assert _found(actor, "slabs") == [entry.pk]


def test_sources_are_linked_once_per_project(actor, project):
    src = [{"kind": "email", "external_id": "<m1@x>"}]
    entry = entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="Mail", body="b"), sources=src
    ).entry
    again = entry_upsert(
        actor=actor, project="acme", fields=EntryFields(title="Mail", body="b"), sources=src
    )
    assert again.outcome == "unchanged"
    assert entry.sources.count() == 1


def test_a_failed_write_leaves_no_half_state(actor, project):
    with pytest.raises(ValidationFailed):
        entry_upsert(
            actor=actor,
            project="acme",
            subtopic="new/branch",
            fields=EntryFields(title="T", body="x", status="bogus"),
        )
    assert not Subtopic.objects.filter(path__startswith="new").exists()
    assert not Entry.objects.exists()


def test_nul_characters_are_refused_with_a_clear_error(actor, project):
    with pytest.raises(ValidationFailed, match="NUL"):
        entry_upsert(actor=actor, project="acme", fields=EntryFields(title="T", body="a\x00b"))
    with pytest.raises(ValidationFailed, match="NUL"):
        entry_upsert(
            actor=actor, project="acme", subtopic="a\x00", fields=EntryFields(title="T", body="b")
        )
    assert not Entry.objects.exists()


def _entry_reads(queries) -> tuple[int, int]:
    """(row locks, lookups of the entry table) among captured queries."""
    selects = [q["sql"] for q in queries if q["sql"].lstrip().startswith("SELECT")]
    return (
        sum("FOR UPDATE" in sql for sql in selects),
        sum('FROM "knowledge_entry"' in sql for sql in selects),
    )


@pytest.mark.parametrize("ref", ["short_id", "pk", "path"])
def test_a_write_looks_the_entry_up_once_and_locks_it_once(actor, project, ref):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from knowledge.services import entry_edit

    entry = entry_upsert(
        actor=actor, project="acme", subtopic="a/b", fields=EntryFields(title="T", body="one")
    ).entry
    refs = {"short_id": entry.short_id, "pk": entry.pk, "path": "acme/a/b/T"}
    with CaptureQueriesContext(connection) as captured:
        entry_edit(actor=actor, ref=refs[ref], operation="append", content="two")
    assert _entry_reads(captured.captured_queries) == (1, 1)
