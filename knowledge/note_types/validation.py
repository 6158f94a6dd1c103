"""Does an entry fit its note type's schema? Pure: the entry comes in as `Facts`, what
Cairn already reads out of it (observations and relations from the body, its own fields and
metadata), so a write can be checked before anything is saved.

Where a field is looked for:

- `tags`, `status`, `kind`: the entry's own fields;
- a capitalised type (`works_at?: Organization`): relations of that type, `- works_at [[Acme]]`,
  whose target, when it names an entry, must be of that kind (`Entry`: any kind);
- `(object)`: the metadata key of that name, an object, checked key by key;
- anything else: observations `- [field] value`, else the metadata key of that name.

A field is a misfit when it is required and missing, or present with a value of the wrong
type or outside its enum. Observations and relations the schema does not name are reported
as information: a schema is a floor, not a cage.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from knowledge.graph.parsing import LINKS_TO, parse
from knowledge.note_types.picoschema import Field, Schema

ENTRY_FIELDS = ("tags", "status", "kind")
PRESENT, MISSING, WRONG_TYPE, NOT_IN_ENUM = "present", "missing", "wrong_type", "not_in_enum"
_TRUE_FALSE = {"true", "false", "yes", "no"}


@dataclass(frozen=True)
class Facts:
    """What one entry holds, as a schema sees it."""

    observations: tuple[tuple[str, str], ...] = ()  # (category, content)
    relations: tuple[tuple[str, str], ...] = ()  # (type, target as written)
    tags: tuple[str, ...] = ()
    status: str = ""
    kind: str = ""
    metadata: Mapping = field(default_factory=dict)
    # (relation type, target as written) → the kind of the entry it names, where known (a
    # waiting link, or one to an entry the reader may not see, is not in it)
    targets: Mapping = field(default_factory=dict)

    @classmethod
    def of(
        cls, *, body: str, tags=(), status: str = "", kind: str = "", metadata=None, targets=None
    ) -> Facts:
        graph = parse(body)
        return cls(
            observations=tuple((o.category, o.content) for o in graph.observations),
            relations=tuple((r.type, r.target) for r in graph.relations),
            tags=tuple(tags or ()),
            status=status or "",
            kind=kind or "",
            metadata=metadata if isinstance(metadata, Mapping) else {},
            targets=targets or {},
        )

    def values(self, f: Field) -> list:
        """The values `f` finds in this entry (empty: missing)."""
        if f.key in ENTRY_FIELDS:
            value = getattr(self, f.key)
            return list(value) if isinstance(value, tuple) else [value] if value else []
        if f.is_relation:
            return [target for kind, target in self.relations if kind == f.key]
        found = [content for category, content in self.observations if category == f.key]
        if found or f.type == "object":
            return found if f.type != "object" else _metadata_values(self.metadata, f.name)
        return _metadata_values(self.metadata, f.name)


def _metadata_values(metadata: Mapping, name: str) -> list:
    value = metadata.get(name, metadata.get(name.lower()))
    if value is None or value == "" or value == []:
        return []
    return list(value) if isinstance(value, list) else [value]


@dataclass(frozen=True)
class Check:
    """One field of the schema against one entry."""

    field: Field
    status: str  # present | missing | wrong_type | not_in_enum
    values: tuple = ()
    bad: tuple = ()  # the values of the wrong type or outside the enum

    @property
    def misfit(self) -> bool:
        return self.status in (WRONG_TYPE, NOT_IN_ENUM) or (
            self.status == MISSING and self.field.required
        )

    def message(self) -> str:
        f = self.field
        if self.status == MISSING:
            return f"{f.name} is missing (expected {f.expected()})"
        shown = ", ".join(repr(str(v)[:60]) for v in self.bad[:3])
        if f.type == "object":
            keys = ", ".join(map(str, self.bad))
            return f"{f.name} does not fit in: {keys}" if keys else f"{f.name} is not an object"
        if self.status == NOT_IN_ENUM:
            return f"{f.name} {shown} is not one of {', '.join(f.enum)}"
        if f.is_relation:
            return f"{f.name} {shown} links to an entry whose kind is not {f.type.lower()}"
        return f"{f.name} {shown} is not {_article(f.type)}"

    def as_dict(self) -> dict:
        return {
            "field": self.field.name,
            "problem": self.status,
            "required": self.field.required,
            "expected": self.field.expected(),
            "message": self.message(),
        }


def _article(kind: str) -> str:
    return f"an {kind}" if kind[:1] in "aeiou" else f"a {kind}"


@dataclass(frozen=True)
class Report:
    """One entry against its schema: a check per field, plus what the schema does not name."""

    schema: Schema
    checks: tuple[Check, ...]
    unmatched_observations: dict[str, int] = field(default_factory=dict)
    unmatched_relations: dict[str, int] = field(default_factory=dict)

    @property
    def misfits(self) -> list[Check]:
        return [c for c in self.checks if c.misfit]

    @property
    def fits(self) -> bool:
        return not self.misfits

    def summary(self) -> str:
        """`role is missing (…); status 'x' is not one of …` or `fits`."""
        return "; ".join(c.message() for c in self.misfits) or "fits"

    def as_dict(self) -> dict:
        return {
            "schema": self.schema.note_type,
            "schema_version": self.schema.version,
            "fits": self.fits,
            "misfits": [c.as_dict() for c in self.misfits],
            "fields": {c.field.name: c.status for c in self.checks},
            "unmatched_observations": self.unmatched_observations,
            "unmatched_relations": self.unmatched_relations,
        }


def value_fits(kind: str, value: object) -> bool:
    """Does one value have the scalar type `kind`? Observations are text: `42` is an integer."""
    if kind in ("string", "any"):
        return True
    if isinstance(value, bool):
        return kind == "boolean"
    if kind == "boolean":
        return str(value).strip().lower() in _TRUE_FALSE
    if kind == "integer":
        if isinstance(value, int):
            return True
        text = str(value).strip().removeprefix("-").removeprefix("+").replace("_", "")
        return text.isdigit() and text.isascii()
    if kind == "number":
        if isinstance(value, int | float):
            return math.isfinite(value)
        try:
            return math.isfinite(float(str(value).strip()[:100]))
        except ValueError:
            return False
    return True


def type_key(kind: str) -> str:
    """`CustomerAccount`, `customer-account` and `customer_account` name one note type."""
    return "".join(c for c in kind.lower() if c.isalnum())


def check_field(f: Field, facts: Facts) -> Check:
    values = facts.values(f)
    if not values:
        return Check(f, MISSING)
    if f.type == "object":
        inner = values[0] if isinstance(values[0], Mapping) else None
        if inner is None:
            return Check(f, WRONG_TYPE, tuple(values))
        nested = Facts(metadata=inner)
        bad = tuple(c.name for c in f.children if check_field(c, nested).misfit)
        return Check(f, WRONG_TYPE if bad else PRESENT, tuple(values), bad)
    if f.type == "enum":
        allowed = {v.lower() for v in f.enum}
        bad = tuple(v for v in values if str(v).strip().lower() not in allowed)
        return Check(f, NOT_IN_ENUM if bad else PRESENT, tuple(values), bad)
    if f.is_relation:
        want = type_key(f.type)
        bad = tuple(
            v
            for v in values
            if want != "entry"
            and (kind := facts.targets.get((f.key, v))) is not None
            and type_key(kind) != want
        )
        return Check(f, WRONG_TYPE if bad else PRESENT, tuple(values), bad)
    bad = tuple(v for v in values if isinstance(v, Mapping | list) or not value_fits(f.type, v))
    return Check(f, WRONG_TYPE if bad else PRESENT, tuple(values), bad)


def validate(schema: Schema, facts: Facts) -> Report:
    """Check every field of `schema` against one entry."""
    checks = tuple(check_field(f, facts) for f in schema.fields)
    named = {f.key for f in schema.fields}
    observations: dict[str, int] = {}
    for category, _ in facts.observations:
        if category not in named:
            observations[category] = observations.get(category, 0) + 1
    relations: dict[str, int] = {}
    for kind, _ in facts.relations:
        if kind not in named and kind != LINKS_TO:
            relations[kind] = relations.get(kind, 0) + 1
    return Report(schema, checks, observations, relations)
