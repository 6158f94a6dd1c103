"""schema_mode on every write path: off checks nothing, warn saves and reports, strict refuses
before any revision exists."""

from __future__ import annotations

import pytest

from knowledge.errors import SchemaMisfit, ValidationFailed
from knowledge.models import Entry
from knowledge.services import (
    EntryFields,
    ImportItem,
    ProjectFields,
    entries_import,
    entry_correct,
    entry_edit,
    entry_move,
    entry_revert,
    entry_set_status,
    entry_update,
    entry_upsert,
    entry_verify,
    project_update,
)
from tests.factories import ProjectFactory

SCHEMA = "```yaml\nrole: string, job title\nlevel?(enum): [junior, senior]\n```\n"


def write(actor, title, body, *, kind="person", project="acme", **fields):
    return entry_upsert(
        actor=actor,
        project=project,
        fields=EntryFields(title=title, body=body, kind=kind, **fields),
    )


@pytest.fixture
def schema(actor, project):
    return write(actor, "person", SCHEMA, kind="schema").entry


def set_mode(project, mode):
    project.schema_mode = mode
    project.save(update_fields=["schema_mode"])


def revisions():
    return Entry.history.count()


def test_off_checks_nothing(actor, project, schema):
    result = write(actor, "Ada", "No role here.")
    assert result.outcome == "created" and result.schema is None


def test_warn_saves_and_lists_what_is_missing(actor, project, schema):
    set_mode(project, "warn")
    result = write(actor, "Ada", "No role here.")
    assert Entry.objects.filter(pk=result.entry.pk).exists()
    assert [c.field.name for c in result.schema.misfits] == ["role"]


def test_strict_refuses_before_any_revision_naming_each_field_and_the_version(
    actor, project, schema
):
    set_mode(project, "strict")
    before = revisions()
    with pytest.raises(SchemaMisfit) as caught:
        write(actor, "Ada", "- [level] boss")
    exc = caught.value
    assert {m["field"]: m["problem"] for m in exc.data["misfits"]} == {
        "role": "missing",
        "level": "not_in_enum",
    }
    assert exc.data["schema_version"] == schema.version
    assert exc.data["schema_entry"] == schema.short_id
    assert "role is missing" in exc.message and exc.code == "schema_misfit"
    assert revisions() == before and not Entry.objects.filter(title="Ada").exists()
    stored = write(actor, "Ada", "- [role] Engineer\n- [level] senior")
    assert stored.outcome == "created" and stored.schema.fits


@pytest.fixture
def strict_ada(actor, project, schema):
    ada = write(actor, "Ada", "- [role] Engineer").entry
    set_mode(project, "strict")
    return ada


@pytest.mark.parametrize(
    "change",
    [
        lambda a, e: entry_edit(
            actor=a, ref=e.pk, operation="find_replace", find="[role]", content="[job]"
        ),
        lambda a, e: entry_update(actor=a, ref=e.pk, fields=EntryFields(body="gone")),
        lambda a, e: entry_correct(actor=a, ref=e.pk, body="- [job] x", reason="wrong"),
        lambda a, e: write(a, "Ada", "replaced"),
    ],
    ids=["edit", "update", "correct", "upsert"],
)
def test_strict_covers_every_path_that_writes_text(actor, strict_ada, change):
    before = revisions()
    with pytest.raises(SchemaMisfit):
        change(actor, strict_ada)
    assert revisions() == before
    strict_ada.refresh_from_db()
    assert strict_ada.version == 1 and "[role]" in strict_ada.body


def test_strict_refuses_a_revert_to_a_version_that_did_not_fit(actor, project, schema):
    ada = write(actor, "Ada", "no role").entry
    write(actor, "Ada", "- [role] Engineer")
    set_mode(project, "strict")
    with pytest.raises(SchemaMisfit):
        entry_revert(actor=actor, ref=ada.pk, to_version=1)


def test_a_move_into_a_strict_project_is_checked_there(actor, project, schema, user):
    from knowledge.models import Membership, Role

    other = ProjectFactory(slug="other")
    Membership.objects.create(project=other, user=user, role=Role.EDITOR)
    loose = write(actor, "Bob", "no role", project="other").entry
    set_mode(project, "strict")
    with pytest.raises(SchemaMisfit):
        entry_move(actor=actor, ref=loose.pk, project="acme", subtopic="")


def test_a_status_change_must_fit_but_a_verification_is_no_new_text(actor, project, schema):
    ada = write(actor, "Ada", "no role").entry
    set_mode(project, "strict")
    with pytest.raises(SchemaMisfit):
        entry_set_status(actor=actor, ref=ada.pk, status="archived")
    assert entry_verify(actor=actor, ref=ada.pk).entry.is_verified


def test_a_schema_that_does_not_parse_is_refused_in_every_mode(actor, project):
    with pytest.raises(ValidationFailed, match="unknown type"):
        write(actor, "person", "```yaml\nrole: strin\n```", kind="schema")
    with pytest.raises(ValidationFailed, match="yaml block"):
        write(actor, "person", "Just prose.", kind="schema")


def test_imports_report_misfits_and_skip_them_only_when_asked(actor, project, schema):
    set_mode(project, "strict")
    item = ImportItem(
        name="ada.md", project="acme", fields=EntryFields(title="Ada", body="x", kind="person")
    )
    [outcome] = entries_import(actor=actor, items=[item])
    assert outcome.outcome == "created" and "role is missing" in outcome.reason
    other = ImportItem(
        name="bob.md", project="acme", fields=EntryFields(title="Bob", body="x", kind="person")
    )
    [strict] = entries_import(actor=actor, items=[other], strict_schemas=True)
    assert strict.outcome == "skipped" and "role" in strict.reason


def test_a_maintainer_sets_the_mode_and_a_wrong_mode_is_refused(actor, acme, owner):
    from knowledge.actors import Actor

    maintainer = Actor.for_user(owner)
    assert project_update(
        actor=maintainer, project="acme", fields=ProjectFields(schema_mode="Strict")
    ).schema_mode == ("strict")
    with pytest.raises(ValidationFailed, match="schema_mode"):
        project_update(actor=maintainer, project="acme", fields=ProjectFields(schema_mode="loud"))


def test_a_newer_schema_version_applies_at_once(actor, project, schema):
    set_mode(project, "strict")
    write(actor, "person", "```yaml\nrole?: string\n```", kind="schema")
    assert write(actor, "Ada", "no role").outcome == "created"
