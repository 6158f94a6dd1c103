"""The Picoschema parser, validator, inference and diff, pure (no database)."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledge.note_types import (
    MAX_FIELDS,
    Facts,
    Field,
    SchemaError,
    diff,
    infer,
    parse_fields,
    read_schema,
    to_text,
    validate,
)

ROOT = Path(__file__).resolve().parents[2]
PERSON = """# Person

Who works with us.

```yaml
name: string, full name
role: string, job title
works_at?: Organization, employer
expertise?(array): string, what they know
status?(enum): [active, left]
age?: integer
```
"""


def person():
    return read_schema(title="person", metadata={}, body=PERSON)


def test_each_form_of_a_field_parses():
    fields = {f.name: f for f in person().fields}
    assert fields["name"] == Field("name", "string", True, description="full name")
    assert fields["works_at"].is_relation and not fields["works_at"].required
    assert fields["expertise"].array and fields["expertise"].type == "string"
    assert fields["status"].enum == ("active", "left")
    assert fields["age"].type == "integer"


def test_basic_memory_frontmatter_in_metadata_is_read_with_its_entity():
    schema = read_schema(
        title="Person schema",
        metadata={"entity": "Person", "version": 2, "schema": {"name": "string"}},
        body="",
    )
    assert schema.note_type == "person" and schema.declared_version == 2
    assert [f.name for f in schema.fields] == ["name"]


def test_a_schema_key_inside_the_block_and_enum_descriptions_and_objects():
    body = (
        "```yaml\nentity: incident\nschema:\n"
        '  severity(enum, how bad): "[low, high], how bad"\n'
        "  contact?(object):\n    email: string\n  tags(array): string\n```"
    )
    schema = read_schema(title="x", metadata=None, body=body)
    fields = {f.name: f for f in schema.fields}
    assert schema.note_type == "incident"
    assert fields["severity"].enum == ("low", "high")
    assert fields["severity"].description == "how bad"
    assert fields["contact"].children[0].name == "email"


@pytest.mark.parametrize(
    ("mapping", "words"),
    [
        ({"role": "strin"}, "unknown type"),
        ({"role": None}, "needs a type"),
        ({"role(list)": "string"}, "unknown modifier"),
        ({"status(enum)": "open"}, "lists its values"),
        ({"bad name!": "string"}, "not usable"),
        ({"a(object)": {"b(object)": {"c(object)": {"d": "string"}}}}, "nest at most"),
        ({f"f{i}": "string" for i in range(MAX_FIELDS + 1)}, "at most"),
    ],
)
def test_a_bad_schema_says_what_to_write(mapping, words):
    with pytest.raises(SchemaError) as caught:
        parse_fields(mapping)
    assert words in caught.value.message


def test_bad_yaml_names_the_line():
    with pytest.raises(SchemaError, match="line 2"):
        read_schema(title="x", metadata={}, body="```yaml\nrole: string\n  bad: [\n```")


def test_no_block_means_no_schema():
    assert read_schema(title="x", metadata={}, body="Just prose.\n```python\nx=1\n```") is None


# --- validation ---------------------------------------------------------------------------------


def test_a_fitting_entry_fits_and_what_the_schema_does_not_name_is_information():
    facts = Facts.of(
        body="- [name] Ada\n- [role] Engineer\n- [fact] Wrote the first program\n"
        "- works_at [[Acme]]\n- knows [[Bob]]\n",
        status="active",
    )
    report = validate(person(), facts)
    assert report.fits, report.summary()
    assert report.unmatched_observations == {"fact": 1}
    assert report.unmatched_relations == {"knows": 1}


def test_missing_wrong_type_and_not_in_enum_are_misfits_optional_missing_is_not():
    schema = read_schema(
        title="person",
        metadata={},
        body="```yaml\nname: string\nrole: string\nage?: integer\nlevel?(enum): [junior, senior]\n"
        "nick?: string\n```",
    )
    report = validate(schema, Facts.of(body="- [name] Ada\n- [age] old\n- [level] boss"))
    problems = {c.field.name: c.status for c in report.misfits}
    assert problems == {"role": "missing", "age": "wrong_type", "level": "not_in_enum"}
    assert "role is missing" in report.summary()
    assert "nick" not in problems


def test_entry_fields_and_metadata_count_as_fields():
    schema = read_schema(
        title="task",
        metadata={"schema": {"tags(array)": "string", "status(enum)": "[open, resolved]",
                             "owner": "string", "budget?": "number"}},
        body="",
    )  # fmt: skip
    fits = Facts.of(body="", tags=["ops"], status="open", metadata={"owner": "bo", "budget": 2.5})
    assert validate(schema, fits).fits
    misfit = Facts.of(body="", tags=[], status="active", metadata={"budget": "lots"})
    assert {c.field.name for c in validate(schema, misfit).misfits} == {
        "tags", "status", "owner", "budget"
    }  # fmt: skip


@pytest.mark.parametrize(
    ("kind", "good", "bad"),
    [("integer", "42", "4.2"), ("number", "4.2", "four"), ("boolean", "yes", "maybe")],
)
def test_each_scalar_type_checks_its_values(kind, good, bad):
    schema = read_schema(title="t", metadata={"schema": {"v": kind}}, body="")
    assert validate(schema, Facts.of(body=f"- [v] {good}")).fits
    assert not validate(schema, Facts.of(body=f"- [v] {bad}")).fits


def test_a_relation_field_needs_the_typed_relation_not_an_observation():
    schema = read_schema(title="p", metadata={"schema": {"works_at": "Organization"}}, body="")
    assert not validate(schema, Facts.of(body="- [works_at] Acme")).fits
    assert validate(schema, Facts.of(body="- works at [[Acme]]")).fits


# --- inference and diff ---------------------------------------------------------------------------


def _people(with_role: int, without: int) -> list[Facts]:
    have = [Facts.of(body=f"- [role] R{i}\n- [skill] a\n- [skill] b") for i in range(with_role)]
    return have + [Facts.of(body="- [skill] c") for _ in range(without)]


def test_inference_thresholds_required_optional_and_left_out():
    entries = [
        Facts.of(body="- [name] n\n- [team] t" if i < 5 else "- [name] n") for i in range(20)
    ]
    entries += [Facts.of(body="- [name] n\n- [rare] r")]
    inferred = {f.name: f for f in infer("person", entries).fields}
    assert inferred["name"].required  # 21 of 21
    assert "team" not in inferred  # 5 of 21 = 24 %: below 25 %
    assert "rare" not in inferred
    assert not {f.name: f for f in infer("person", entries[:20]).fields}["team"].required


def test_inference_at_the_edges_of_the_thresholds():
    # 19 of 20 = 95 %: required; 5 of 20 = 25 %: optional; 4 of 20: left out
    entries = [
        Facts.of(body="\n".join(
            (["- [a] x"] if i < 19 else []) + (["- [b] x"] if i < 5 else [])
            + (["- [c] x"] if i < 4 else [])
        ))
        for i in range(20)
    ]  # fmt: skip
    result = infer("t", entries)
    fields = {f.name: f for f in result.fields}
    assert fields["a"].required and not fields["b"].required and "c" not in fields
    assert [u.name for u in result.excluded] == ["c"]


def test_inference_finds_arrays_types_and_relation_targets():
    entries = [Facts.of(body=f"- [age] {i}\n- [skill] a\n- [skill] b\n- works_at [[Acme]]")
               for i in range(4)]  # fmt: skip
    result = infer("person", entries, targets={(i, "works_at"): {"organization": 1}
                                               for i in range(4)})  # fmt: skip
    fields = {f.name: f for f in result.fields}
    assert fields["age"].type == "integer"
    assert fields["skill"].array
    assert fields["works_at"].type == "Organization"
    assert "works_at: Organization" in to_text(result.fields)


def test_diff_reports_new_dropped_cardinality_and_requiredness():
    schema = read_schema(
        title="person",
        metadata={"schema": {"role": "string", "skill": "string", "email?": "string",
                             "site?": "string"}},
        body="",
    )  # fmt: skip
    full = "- [role] r\n- [skill] a\n- [skill] b\n- [site] s\n- [team] t"
    entries = [Facts.of(body=full) for _ in range(4)]
    entries.append(Facts.of(body="- [skill] a\n- [skill] b\n- [site] s"))
    drift = diff(schema, entries)
    assert [u.name for u in drift.new_fields] == ["team"]
    assert [f.name for f, _ in drift.dropped_fields] == ["email"]
    assert [(f.name, a, b) for f, a, b in drift.cardinality] == [("skill", "one", "many")]
    assert {(f.name, s) for f, s, _ in drift.requiredness} == {
        ("role", "optional"), ("site", "required")
    }  # fmt: skip
    assert drift.changed


# --- properties ---------------------------------------------------------------------------------

_names = st.from_regex(r"[a-z][a-z0-9_]{0,20}", fullmatch=True)
_words = st.from_regex(r"[a-z][a-z0-9]{0,10}", fullmatch=True)
_field = st.builds(
    lambda name, kind, required, array, enum, description: Field(
        name,
        "enum" if enum else kind,
        required,
        array and not enum,
        enum=tuple(dict.fromkeys(enum)),
        description=description,
    ),
    _names,
    st.sampled_from(["string", "integer", "number", "boolean", "any", "Organization"]),
    st.booleans(),
    st.booleans(),
    st.lists(_words, max_size=4),
    st.one_of(st.just(""), st.from_regex(r"[a-z][a-z ]{0,20}[a-z]", fullmatch=True)),
)


@given(st.lists(_field, min_size=1, max_size=12, unique_by=lambda f: f.name))
def test_written_schemas_read_back_the_same(fields):
    text = to_text(fields)
    schema = read_schema(title="t", metadata={}, body=f"```yaml\n{text}\n```")
    assert schema.fields == tuple(fields)


_yamlish = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=30)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=15), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=300)
@given(st.dictionaries(st.text(max_size=30), _yamlish, max_size=8))
def test_any_mapping_parses_or_says_why(mapping):
    try:
        fields = parse_fields(mapping)
    except SchemaError as exc:
        assert exc.message
    else:
        assert len(fields) == len(mapping)


@given(st.text(max_size=400))
def test_any_body_is_read_or_refused_with_a_message(body):
    try:
        read_schema(title="t", metadata={}, body=f"```yaml\n{body}\n```")
    except SchemaError as exc:
        assert exc.message


# --- linear time (a ratio, not a wall-clock bound) -----------------------------------------------

_TIMED = """
import json, sys, time
from knowledge.note_types import SchemaError, parse_fields
shape, sizes = json.loads(sys.argv[1])
took = []
for size in sizes:
    mapping = {(shape["key"] * size)[:size]: (shape["value"] * size)[:size]}
    start = time.perf_counter()
    for _ in range(20):
        try:
            parse_fields(mapping)
        except SchemaError:
            pass
    took.append(time.perf_counter() - start)
print(json.dumps(took))
"""
SHAPES = [
    {"key": "(", "value": "string"},
    {"key": "a?(enum, ", "value": "[a, "},
    {"key": "role", "value": "string, " + "x"},
    {"key": "s(enum)", "value": "[" + "a," * 3},
    {"key": "x(array", "value": "String[]"},
]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s["key"])
def test_the_parser_runs_in_linear_time(shape):
    done = subprocess.run(
        [sys.executable, "-c", _TIMED, json.dumps([shape, [25_000, 100_000]])],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    small, large = json.loads(done.stdout)
    # Four times the input: about four times the time when linear, sixteen when quadratic.
    assert large < 10 * small + 0.05, f"{shape}: 25,000 chars {small:.4f} s, 100,000 {large:.4f} s"


def test_enum_words_yaml_would_read_as_other_types_are_written_back_as_words():
    fields = parse_fields({"answer(enum)": "[placeholder]"})
    words = ("no", "Yes", "on", "1.0", "null", "~", "2026-01-01", 'say "hi"')
    written = to_text([replace(fields[0], enum=words)])
    assert parse_fields(yaml.safe_load(written))[0].enum == words


@pytest.mark.parametrize("name", ["yes", "on", "off", "null", "true"])
def test_a_field_named_as_a_yaml_word_is_written_in_quotes_and_reads_back(name):
    fields = [Field(name, "string", True, False, enum=(), description="")]
    text = to_text(fields)
    assert text == f'"{name}": string'
    assert read_schema(title="t", metadata={}, body=f"```yaml\n{text}\n```").fields == tuple(fields)
