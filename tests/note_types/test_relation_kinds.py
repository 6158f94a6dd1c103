"""A relation field (`works_at?: Organization`) also checks what its link names: a link to an
entry of another kind is a wrong type; a waiting link, or one to an entry the reader may not
see, is not judged."""

from __future__ import annotations

import pytest

from knowledge.actors import Actor
from knowledge.errors import SchemaMisfit
from knowledge.models import Membership, Project, Role, Sensitivity
from knowledge.note_types import Facts, parse_fields, validate
from knowledge.note_types.picoschema import Schema
from knowledge.note_types.reads import schema_validate
from knowledge.services import EntryFields, ProjectFields, entry_upsert, project_create
from tests.factories import UserFactory

SCHEMA = "```yaml\nrole: string\nworks_at?: Organization\n```\n"


def schema_of(**fields) -> Schema:
    return Schema("person", parse_fields(fields))


def check(schema: Schema, body: str, targets: dict) -> tuple[str, str]:
    report = validate(schema, Facts.of(body=body, targets=targets))
    only = report.checks[0]
    return only.status, only.message() if only.misfit else ""


def test_a_link_to_an_entry_of_another_kind_is_a_wrong_type():
    schema = schema_of(**{"works_at": "Organization"})
    body = "- works_at [[Acme]]"
    assert check(schema, body, {("works_at", "Acme"): "organization"}) == ("present", "")
    status, message = check(schema, body, {("works_at", "Acme"): "note"})
    assert status == "wrong_type"
    assert message == "works_at 'Acme' links to an entry whose kind is not organization"


def test_a_waiting_or_unseen_link_is_not_judged():
    schema = schema_of(**{"works_at": "Organization"})
    assert check(schema, "- works_at [[Nowhere]]", {}) == ("present", "")


def test_the_type_entry_takes_any_kind_and_spellings_of_a_kind_match():
    any_kind = schema_of(**{"see": "Entry"})
    assert check(any_kind, "- see [[X]]", {("see", "X"): "note"}) == ("present", "")
    account = schema_of(**{"owns": "CustomerAccount"})
    for kind in ("customer-account", "customer_account", "customeraccount"):
        assert check(account, "- owns [[X]]", {("owns", "X"): kind})[0] == "present"


def test_one_wrong_link_among_several_is_named():
    schema = schema_of(**{"knows(array)": "Person"})
    targets = {("knows", "Ada"): "person", ("knows", "Launch"): "decision"}
    status, message = check(schema, "- knows [[Ada]]\n- knows [[Launch]]", targets)
    assert status == "wrong_type" and "'Launch'" in message and "'Ada'" not in message


# --- with the database ---------------------------------------------------------------------------


def write(actor, title, body, *, kind="person", project="acme"):
    return entry_upsert(
        actor=actor, project=project, fields=EntryFields(title=title, body=body, kind=kind)
    )


@pytest.fixture
def world(actor, project):
    write(actor, "person", SCHEMA, kind="schema")
    write(actor, "Acme Corp", "A customer.", kind="organization")
    write(actor, "Launch plan", "A plan.", kind="note")


def set_mode(project, mode):
    project.schema_mode = mode
    project.save(update_fields=["schema_mode"])


def test_validation_names_the_link_to_an_entry_of_another_kind(actor, world):
    write(actor, "Ada", "- [role] CTO\n- works_at [[Acme Corp]]")
    write(actor, "Bob", "- [role] PM\n- works_at [[Launch plan]]")
    (run,) = schema_validate(actor, project="acme", note_type="person")
    assert [(f.entry.title, f.report.summary()) for f in run.misfits] == [
        ("Bob", "works_at 'Launch plan' links to an entry whose kind is not organization")
    ]


def test_strict_refuses_a_write_whose_link_names_another_kind(actor, project, world):
    set_mode(project, "strict")
    with pytest.raises(SchemaMisfit) as caught:
        write(actor, "Bob", "- [role] PM\n- works_at [[Launch plan]]")
    assert caught.value.data["misfits"][0]["problem"] == "wrong_type"
    assert write(actor, "Ada", "- [role] CTO\n- works_at [[Acme Corp]]").outcome == "created"
    assert write(actor, "Cy", "- [role] QA\n- works_at [[Not yet written]]").outcome == "created"


def test_a_link_to_an_entry_the_reader_cannot_see_is_not_judged(actor, user):
    root = Actor.for_user(UserFactory(username="root", is_superuser=True))
    for slug in ("vault", "cellar"):
        project_create(
            actor=root,
            slug=slug,
            fields=ProjectFields(name=slug, sensitivity=Sensitivity.RESTRICTED),
        )
    Membership.objects.create(project=Project.objects.get(slug="cellar"), user=user,
                              role=Role.VIEWER)  # fmt: skip
    write(root, "person", SCHEMA, kind="schema", project="cellar")
    write(root, "Secret plan", "x", kind="note", project="vault")
    write(root, "Dee", "- [role] CEO\n- works_at [[vault/Secret plan]]", project="cellar")
    (seen_by_root,) = schema_validate(root, project="cellar", note_type="person")
    assert [f.entry.title for f in seen_by_root.misfits] == ["Dee"]
    (seen_by_alice,) = schema_validate(actor, project="cellar", note_type="person")
    assert seen_by_alice.total == 1 and not seen_by_alice.misfits  # the kind is not told
