"""The schema tools over the official MCP client, and the issue's scenario end to end."""

from __future__ import annotations

import pytest

from knowledge.actors import Actor
from knowledge.models import Entry
from knowledge.services import ProjectFields, project_update
from tests.mcp_api.conftest import text

pytestmark = pytest.mark.usefixtures("acme")


def _ok(res):
    assert not res.is_error, text(res)
    return res


def test_infer_write_validate_then_strict_refuses_a_person_without_role(call, owner):
    for name in ("Ada", "Grace", "Linus", "Barbara", "Ken"):
        _ok(call("upsert", project="acme", title=name, kind="person",
                 body=f"# {name}\n\n- [role] Engineer\n- [team] Core"))  # fmt: skip
    _ok(call("upsert", project="acme", title="Dennis", kind="person", body="- [team] Core"))

    inferred = _ok(call("schema_infer", note_type="person"))  # the only project with persons
    assert "role" in inferred.structured_content["optional"]
    assert "role?: string" in text(inferred) and "5/6" in text(inferred)

    schema = "People we work with.\n\n```yaml\nrole: string, job title\nteam?: string\n```"
    _ok(call("upsert", project="acme", title="person", kind="schema", body=schema))
    report = _ok(call("schema_validate", note_type="person", project="acme"))
    [run] = report.structured_content["runs"]
    assert [m["title"] for m in run["misfits"]] == ["Dennis"]
    assert run["fitting"] == 5 and "Dennis" in text(report) and "role is missing" in text(report)
    assert "edit(" in text(report)

    project_update(
        actor=Actor.for_user(owner), project="acme", fields=ProjectFields(schema_mode="strict")
    )
    refused = call("upsert", project="acme", title="Margaret", kind="person", body="- [team] x")
    assert refused.is_error
    error = refused.structured_content["error"]
    assert error["code"] == "schema_misfit"
    assert [m["field"] for m in error["misfits"]] == ["role"]
    assert error["schema_version"] == 1 and "role" in text(refused)
    assert not Entry.objects.filter(title="Margaret").exists()

    stored = _ok(call("upsert", project="acme", title="Margaret", kind="person",
                      body="- [role] Engineer"))  # fmt: skip
    assert stored.structured_content["outcome"] == "created"
    assert stored.structured_content["schema"]["fits"]


def test_warn_mode_saves_and_names_the_fix(call, owner):
    _ok(call("upsert", project="acme", title="person", kind="schema",
             body="```yaml\nrole: string\n```"))  # fmt: skip
    project_update(
        actor=Actor.for_user(owner), project="acme", fields=ProjectFields(schema_mode="warn")
    )
    saved = _ok(call("upsert", project="acme", title="Dennis", kind="person", body="Hi."))
    assert "does not fit" in text(saved) and "- [role]" in text(saved)
    assert saved.structured_content["schema"]["misfits"][0]["field"] == "role"


def test_without_a_schema_the_answer_says_how_to_write_one(call):
    _ok(call("upsert", project="acme", title="Ada", kind="person", body="- [role] x"))
    for tool in ("schema_validate", "schema_diff"):
        res = _ok(call(tool, note_type="person", project="acme"))
        assert "No schema for 'person'" in text(res) and "kind='schema'" in text(res)


def test_diff_and_one_entry_by_identifier(call):
    for name in ("Ada", "Grace"):
        _ok(call("upsert", project="acme", title=name, kind="person",
                 body="- [role] x\n- [skill] a\n- [skill] b"))  # fmt: skip
    _ok(call("upsert", project="acme", title="person", kind="schema",
             body="```yaml\nrole: string\nemail: string\n```"))  # fmt: skip
    drift = _ok(call("schema_diff", note_type="person", project="acme")).structured_content
    assert [f["field"] for f in drift["new_fields"]] == ["skill"]
    assert [f["field"] for f in drift["dropped_fields"]] == ["email"]
    one = _ok(call("schema_validate", identifier="acme/ada"))
    assert one.structured_content["runs"][0]["entries"] == 1


def test_a_project_is_needed_when_the_type_lives_in_several(call):
    res = call("schema_infer", note_type="person")
    assert res.is_error and "project" in text(res)
