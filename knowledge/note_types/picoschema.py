"""Picoschema, the compact schema notation Basic Memory borrowed from Google's Dotprompt, read
into plain values (pure: no database, no Django).

    name: string, full name          required field, with a description
    role?: string                    optional field
    expertise?(array): string        several values
    status?(enum): [active, left]    one of these values
    works_at?: Organization          a capitalised type: a relation to an entry of that kind
    contact?(object):                a metadata key holding an object with these keys
      email?: string

Every step is a scan or a split (no backtracking pattern), and the work is bounded: at most
MAX_FIELDS fields, nested at most MAX_DEPTH objects deep, in a YAML block of at most
MAX_BLOCK characters.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

import yaml

from knowledge.markdown import is_fence
from knowledge.safe_yaml import load_yaml

SCALAR_TYPES = ("string", "integer", "number", "boolean", "any")
MODIFIERS = ("array", "enum", "object")
MAX_FIELDS = 200
MAX_DEPTH = 3
MAX_BLOCK = 20_000
MAX_NAME = 60
MAX_TEXT = 500
MAX_ENUM = 100
# How deeply a metadata `schema` object may nest (objects MAX_DEPTH deep, an enum's list, room
# to spare): the write path bounds metadata depth, but a preview or an old row may not have been.
MAX_NESTING = 8
_SCALARS = (str, int, float, bool)
YAML_INFO = ("yaml", "yml", "picoschema")


class SchemaError(ValueError):
    """A schema that cannot be read; `message` says which field and what to write instead."""

    def __init__(self, message: str, *, field: str = "") -> None:
        super().__init__(message)
        self.message, self.field = message, field


@dataclass(frozen=True)
class Field:
    name: str
    type: str  # a scalar type, "enum", "object", or a capitalised entry type (a relation)
    required: bool = True
    array: bool = False
    enum: tuple[str, ...] = ()
    description: str = ""
    children: tuple[Field, ...] = ()

    @property
    def is_relation(self) -> bool:
        return self.type[:1].isupper()

    @property
    def key(self) -> str:
        """How the field is matched: lower-case, like observation categories and kinds."""
        return self.name.lower()

    def expected(self) -> str:
        """What a value must look like, in words (for messages)."""
        if self.is_relation:
            return f"a '- {self.name} [[{self.type} …]]' relation"
        if self.type == "enum":
            return "one of " + ", ".join(self.enum)
        if self.type == "object":
            return f"a metadata object {self.name!r}"
        noun = "" if self.type in ("string", "any") else f" ({self.type})"
        return f"a '- [{self.name}] …' observation{noun}"


@dataclass(frozen=True)
class Schema:
    """A note type's fields. `version` and `entry` are the schema entry's (set by whoever
    loaded it): a schema's history is its entry's."""

    note_type: str
    fields: tuple[Field, ...]
    version: int = 0
    entry: str = ""  # the schema entry's short id
    declared_version: object = None  # a `version:` the author wrote (Basic Memory's), if any

    def field(self, name: str) -> Field | None:
        return next((f for f in self.fields if f.key == name.lower()), None)

    @property
    def has_relations(self) -> bool:
        """Does a field name a relation (whose target's kind a check needs)?"""
        return any(f.is_relation for f in self.fields)


@dataclass
class _Budget:
    left: int = MAX_FIELDS


# --- one field --------------------------------------------------------------------------------


def parse_key(key: object) -> tuple[str, bool, str, str]:
    """`name?(array, description)` → (name, required, modifier, description)."""
    if not isinstance(key, str):
        raise SchemaError(
            f"Field name {key!r} is not text; write it as name: type, in quotes when YAML would "
            'read the name as something else (e.g. "yes": string, "null": string).'
        )
    text, modifier, description = key.strip(), "", ""
    if text.endswith(")") and "(" in text:
        opener = text.find("(")
        inner = text[opener + 1 : -1]
        word, _, description = inner.partition(",")
        modifier = word.strip().lower()
        if modifier not in MODIFIERS:
            raise SchemaError(
                f"Field {text[:MAX_NAME]!r}: unknown modifier ({word.strip()[:40]}); use "
                "(array), (enum) or (object).",
                field=text[:opener][:MAX_NAME],
            )
        text = text[:opener].rstrip()
    required = not text.endswith("?")
    name = text.removesuffix("?").strip()
    if not name or len(name) > MAX_NAME or not all(c.isalnum() or c in "_-" for c in name):
        raise SchemaError(
            f"Field name {name[:MAX_NAME]!r} is not usable: use letters, digits, _ or -, at most "
            f"{MAX_NAME} characters (e.g. role, works_at).",
            field=name[:MAX_NAME],
        )
    return name, required, modifier, description.strip()[:MAX_TEXT]


def _type_of(name: str, text: str, *, array: bool) -> tuple[str, bool]:
    kind = text.strip()
    if kind.endswith("[]"):  # `string[]`, the shorthand Basic Memory's guidance shows
        kind, array = kind[:-2].strip(), True
    if kind.lower() in SCALAR_TYPES and not kind[:1].isupper():
        return kind.lower(), array
    if kind[:1].isupper() and kind.replace("_", "").replace("-", "").isalnum():
        return kind[:MAX_NAME], array
    raise SchemaError(
        f"Field {name!r}: unknown type {kind[:40]!r}; use {', '.join(SCALAR_TYPES)}, or a "
        "capitalised note type (e.g. Organization) for a relation.",
        field=name,
    )


def _enum_values(name: str, value: object) -> tuple[tuple[str, ...], str]:
    description = ""
    if isinstance(value, str):  # `"[a, b], description"`, quoted so YAML keeps it a string
        text = value.strip()
        close = text.find("]")
        if not text.startswith("[") or close < 0:
            raise SchemaError(
                f"Field {name!r}: an enum lists its values, e.g. {name}(enum): [open, closed].",
                field=name,
            )
        description = text[close + 1 :].strip().removeprefix(",").strip()
        value = text[1:close].split(",")
    if not isinstance(value, list):
        raise SchemaError(f"Field {name!r}: an enum's values are a list [a, b].", field=name)
    if not all(isinstance(v, _SCALARS) or v is None for v in value):
        raise SchemaError(
            f"Field {name!r}: an enum's values are words or numbers, e.g. [open, closed].",
            field=name,
        )
    values = tuple(dict.fromkeys(str(v).strip()[:MAX_TEXT] for v in value if str(v).strip()))
    if not values or len(values) > MAX_ENUM:
        raise SchemaError(
            f"Field {name!r}: an enum needs 1 to {MAX_ENUM} values (got {len(values)}).",
            field=name,
        )
    return values, description[:MAX_TEXT]


def parse_field(key: object, value: object, *, depth: int = 0, budget: _Budget) -> Field:
    name, required, modifier, description = parse_key(key)
    budget.left -= 1
    if budget.left < 0:
        raise SchemaError(f"A schema has at most {MAX_FIELDS} fields.", field=name)
    if modifier == "enum":
        values, more = _enum_values(name, value)
        return Field(name, "enum", required, enum=values, description=description or more)
    if modifier == "object" or isinstance(value, Mapping):
        if not isinstance(value, Mapping) or not value:
            raise SchemaError(
                f"Field {name!r}: an object lists its keys below it, indented.", field=name
            )
        if depth + 1 >= MAX_DEPTH:
            raise SchemaError(
                f"Field {name!r}: objects nest at most {MAX_DEPTH} levels deep.", field=name
            )
        children = parse_fields(value, depth=depth + 1, budget=budget)
        return Field(name, "object", required, description=description, children=children)
    if not isinstance(value, str) or not value.strip():
        raise SchemaError(
            f"Field {name!r} needs a type, e.g. {name}: string, what it holds.", field=name
        )
    kind, _, more = value.partition(",")
    kind, array = _type_of(name, kind, array=modifier == "array")
    return Field(name, kind, required, array, description=description or more.strip()[:MAX_TEXT])


def parse_fields(mapping: Mapping, *, depth: int = 0, budget: _Budget | None = None):
    """A Picoschema mapping (`{"role?": "string, job title", …}`) → its fields, in order."""
    budget = budget if budget is not None else _Budget()
    if len(mapping) > MAX_FIELDS:
        raise SchemaError(f"A schema has at most {MAX_FIELDS} fields (got {len(mapping)}).")
    fields, seen = [], set()
    for key, value in mapping.items():
        parsed = parse_field(key, value, depth=depth, budget=budget)
        if parsed.key in seen:
            raise SchemaError(f"Field {parsed.name!r} is declared twice.", field=parsed.name)
        seen.add(parsed.key)
        fields.append(parsed)
    return tuple(fields)


# --- a schema entry ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Source:
    """Where a schema entry keeps its fields, and what its header says beside them."""

    fields: Mapping
    header: Mapping = field(default_factory=dict)


def yaml_block(body: str) -> str | None:
    """The first fenced block marked yaml, yml or picoschema, or None."""
    inside, lines = False, []
    for line in (body or "").split("\n"):
        if not inside:
            if is_fence(line) and line.strip().lstrip("`~").strip().lower() in YAML_INFO:
                inside = True
        elif is_fence(line):
            return "\n".join(lines)
        else:
            lines.append(line)
    return "\n".join(lines) if inside else None


def find_source(metadata: Mapping | None, body: str | None) -> Source | None:
    """The schema's fields: metadata's `schema` object (as a Basic Memory schema note's
    frontmatter has it), else the body's first YAML block (a `schema:` key in it, or the whole
    block). None when there is neither."""
    metadata = metadata if isinstance(metadata, Mapping) else {}
    if isinstance(metadata.get("schema"), Mapping):
        if _nesting(metadata["schema"]) > MAX_NESTING:
            raise SchemaError(
                f"metadata 'schema' nests deeper than {MAX_NESTING} levels; objects nest at "
                f"most {MAX_DEPTH} deep."
            )
        return Source(metadata["schema"], metadata)
    block = yaml_block(body or "")
    if block is None:
        return None
    if len(block) > MAX_BLOCK:
        raise SchemaError(f"The schema's YAML block is over {MAX_BLOCK:,} characters.")
    try:
        data = load_yaml(block)
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" (line {where.line + 1} of the block)" if where is not None else ""
        problem = getattr(exc, "problem", None) or "not valid YAML"
        raise SchemaError(f"The schema's YAML block does not parse{line}: {problem}.") from None
    if not isinstance(data, Mapping) or not data:
        raise SchemaError("The schema's YAML block must list fields, one per line: role: string.")
    if isinstance(data.get("schema"), Mapping):
        return Source(data["schema"], data)
    return Source(data)


def _nesting(value: object) -> int:
    """How deeply objects and lists nest in `value`, without recursing (it may be deep)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, Mapping | list):
            deepest = max(deepest, level)
            if deepest > MAX_NESTING:
                break
            stack.extend(
                (v, level + 1) for v in (item.values() if isinstance(item, Mapping) else item)
            )
    return deepest


def read_schema(*, title: str, metadata: Mapping | None, body: str | None) -> Schema | None:
    """The schema a `schema` entry declares (None when it declares no fields). The note type is
    the header's `entity` (Basic Memory's key), else the entry's title."""
    source = find_source(metadata, body)
    if source is None:
        return None
    note_type = str(source.header.get("entity") or title or "").strip().lower()
    return Schema(
        note_type=note_type,
        fields=parse_fields(source.fields),
        # Kept only when a scalar: a cached Schema is shared, so it holds nothing mutable.
        declared_version=version
        if isinstance(version := source.header.get("version"), _SCALARS)
        else None,
    )


# --- writing one ------------------------------------------------------------------------------


def field_key(f: Field) -> str:
    modifier = "(array)" if f.array and f.type != "enum" else ""
    modifier = "(enum)" if f.type == "enum" else "(object)" if f.type == "object" else modifier
    return f"{f.name}{'' if f.required else '?'}{modifier}"


def _line(f: Field, indent: str) -> list[str]:
    key = field_key(f)
    if not _reads_back_key(key):  # YAML reads a bare `yes`, `on` or `null` as true or None
        key = json.dumps(key)
    if f.type == "object":
        head = [f"{indent}{key}:"]
        return head + [line for c in f.children for line in _line(c, indent + "  ")]
    if f.type == "enum":
        values = f"[{', '.join(f.enum)}]"
        if f.description or not all(_reads_back(v) for v in f.enum):
            # One quoted string, which _enum_values splits itself: YAML would read `[no]` as
            # [False] and `[1.0]` as [1.0], not as the words written.
            values = json.dumps(f"{values}, {f.description}" if f.description else values)
        return [f"{indent}{key}: {values}"]
    return [f"{indent}{key}: {f.type}" + (f", {f.description}" if f.description else "")]


def _reads_back_key(key: str) -> bool:
    try:
        return load_yaml(f"{key}: x") == {key: "x"}
    except yaml.YAMLError:
        return False


def _reads_back(value: str) -> bool:
    try:
        return load_yaml(f"[{value}]") == [value]
    except yaml.YAMLError:
        return False


def to_text(fields: tuple[Field, ...] | list[Field]) -> str:
    """The fields as Picoschema YAML lines, ready for a schema entry's ```yaml block."""
    return "\n".join(line for f in fields for line in _line(f, ""))
