"""`manage.py schema validate|infer|diff` with --strict (exit code for CI) and --json."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from knowledge.services import EntryFields, entry_upsert
from tests.factories import StaffFactory


@pytest.fixture
def people(actor, project):
    StaffFactory(username="root")
    for name, body in (("Ada", "- [role] x"), ("Grace", "- [role] y"), ("Dennis", "hi")):
        entry_upsert(
            actor=actor, project="acme", fields=EntryFields(title=name, body=body, kind="person")
        )


def run(*args):
    out = StringIO()
    call_command("schema", *args, stdout=out)
    return out.getvalue()


def test_infer_prints_a_schema_to_save(people):
    assert "role?: string" in run("infer", "person", "--project", "acme")


def test_validate_strict_fails_on_a_misfit_and_json_lists_it(people, actor):
    entry_upsert(
        actor=actor,
        project="acme",
        fields=EntryFields(title="person", body="```yaml\nrole: string\n```", kind="schema"),
    )
    assert "MISS" in run("validate", "person", "--project", "acme")
    with pytest.raises(CommandError) as caught:
        run("validate", "person", "--project", "acme", "--strict")
    assert caught.value.returncode == 1
    [report] = json.loads(run("validate", "--project", "acme", "--json"))
    assert [e["title"] for e in report["entries"] if not e["fits"]] == ["Dennis"]


def test_validate_strict_fails_without_a_schema_and_diff_reports_drift(people, actor):
    with pytest.raises(CommandError):
        run("validate", "person", "--project", "acme", "--strict")
    entry_upsert(
        actor=actor,
        project="acme",
        fields=EntryFields(title="person", body="```yaml\nemail: string\n```", kind="schema"),
    )
    out = run("diff", "person", "--project", "acme")
    assert "+ role" in out and "- email" in out
    with pytest.raises(CommandError):
        run("diff", "person", "--project", "acme", "--strict")
