"""Note-type schemas cost one parse per stored version, and no shape of schema text or
metadata reaches a RecursionError: it is refused with words (issue 32)."""

from __future__ import annotations

import dataclasses

import pytest

from knowledge.errors import ValidationFailed
from knowledge.note_types import SchemaError, read_schema
from knowledge.note_types.reads import project_schema
from knowledge.reads.editor import schema_preview
from knowledge.services import EntryFields, entry_update, entry_upsert

pytestmark = pytest.mark.django_db
PERSON = "```yaml\nrole: string, job title\n```\n"


def nested(depth: int, leaf: object = "x") -> object:
    for _ in range(depth):
        leaf = [leaf]
    return leaf


@pytest.fixture
def schema(actor, project):
    fields = EntryFields(title="person", body=PERSON, kind="schema")
    return entry_upsert(actor=actor, project="acme", fields=fields).entry


def test_a_schema_is_parsed_once_per_version(actor, project, schema):
    first = project_schema(actor, project, "person")
    assert project_schema(actor, project, "person") is first  # the same parse, not a second one
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.fields[0].name = "other"
    entry_update(
        actor=actor, ref=schema.pk, fields=EntryFields(body="```yaml\nteam: string\n```\n")
    )
    second = project_schema(actor, project, "person")
    assert second is not first and [f.name for f in second.fields] == ["team"]
    assert (first.version, second.version) == (1, 2)


def test_a_draft_is_parsed_anew_not_taken_from_the_cache(actor, project, schema):
    project_schema(actor, project, "person")  # version 1 cached
    with pytest.raises(ValidationFailed, match="does not parse"):
        entry_update(actor=actor, ref=schema.pk, fields=EntryFields(body="```yaml\n: [\n```\n"))


@pytest.mark.parametrize(
    ("yaml_value", "words"),
    [
        ("[" * 5000 + "]" * 5000, "does not parse"),
        ("[" * 40 + "]" * 40, "nested deeper than 32 levels"),
    ],
    ids=["5000-deep", "40-deep"],
)
def test_a_deeply_nested_yaml_schema_is_refused_with_words(actor, project, yaml_value, words):
    body = f"```yaml\nrole: {yaml_value}\n```\n"
    with pytest.raises(ValidationFailed, match=words):
        entry_upsert(
            actor=actor, project="acme", fields=EntryFields(title="p", body=body, kind="schema")
        )


@pytest.mark.parametrize("depth", [9, 900, 5000])
@pytest.mark.parametrize("key", ["role(enum)", "role"])
def test_a_deeply_nested_metadata_schema_is_refused_with_words(key, depth):
    with pytest.raises(SchemaError, match="nests deeper than 8 levels"):
        read_schema(title="person", metadata={"schema": {key: nested(depth)}}, body="")


def test_an_enum_of_lists_is_refused_with_words():
    with pytest.raises(SchemaError, match="words or numbers"):
        read_schema(title="person", metadata={"schema": {"role(enum)": [["a"]]}}, body="")


def test_a_declared_version_kept_in_a_shared_schema_is_a_scalar():
    meta = {"schema": {"role": "string"}, "version": ["1", {"a": 2}]}
    assert read_schema(title="person", metadata=meta, body="").declared_version is None
    assert read_schema(title="p", metadata={**meta, "version": 2}, body="").declared_version == 2


def test_the_editor_preview_survives_5000_nested_brackets_of_metadata(actor, project):
    preview = schema_preview(
        actor, project="acme", kind="schema", title="person", body=PERSON,
        metadata="[" * 5000 + "]" * 5000,
    )  # fmt: skip
    assert preview.schema is not None and preview.schema.fields[0].name == "role"
