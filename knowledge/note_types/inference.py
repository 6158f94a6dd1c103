"""Schemas from usage: infer one from the entries of a note type, and diff a schema against
them (pure: the entries come in as `Facts`).

A field's share is the part of the entries that have it at least once: at or above
REQUIRED (95 %) it is suggested as required, at or above the threshold (25 % by default) as
optional, below it is left out but listed. A field is an array when more than half the
entries that have it have it more than once (Basic Memory's rule).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from knowledge.graph.parsing import LINKS_TO
from knowledge.note_types.picoschema import Field, Schema
from knowledge.note_types.validation import Facts, value_fits

REQUIRED = 0.95
THRESHOLD = 0.25
SAMPLES = 3
_SCALARS = ("integer", "number", "boolean")


@dataclass
class Usage:
    """How the entries of a note type use one field."""

    name: str
    source: str  # observation | relation | metadata | tags
    count: int = 0  # entries that have it
    multi: int = 0  # entries that have it more than once
    total: int = 0
    samples: list = field(default_factory=list)
    types: Counter = field(default_factory=Counter)  # scalar types every value fits
    values: int = 0
    targets: Counter = field(default_factory=Counter)  # kinds of the entries it links to

    @property
    def share(self) -> float:
        return self.count / self.total if self.total else 0.0

    @property
    def is_array(self) -> bool:
        return self.multi * 2 > self.count

    def value_type(self) -> str:
        if self.source == "relation":
            kind = self.targets.most_common(1)[0][0] if self.targets else "entry"
            return kind[:1].upper() + kind[1:]
        return next((t for t in _SCALARS if self.values and self.types[t] == self.values), "string")

    def suggest(self, *, required: float = REQUIRED) -> Field:
        return Field(self.name, self.value_type(), self.share >= required, self.is_array)

    def as_dict(self) -> dict:
        return {
            "field": self.name,
            "source": self.source,
            "entries": self.count,
            "share": round(self.share, 3),
            "array": self.is_array,
            "type": self.value_type(),
            "samples": [str(s)[:80] for s in self.samples],
        }


def usage(entries: list[Facts], targets: Mapping[tuple[int, str], Counter] | None = None):
    """Every field the entries use, most used first. `targets` maps (entry index, relation
    type) to the kinds of the entries those relations reach, when the caller knows them."""
    found: dict[tuple[str, str], Usage] = {}
    total = len(entries)

    def add(source: str, name: str, values: list, index: int) -> None:
        u = found.setdefault((source, name), Usage(name, source, total=total))
        u.count += 1
        u.multi += len(values) > 1
        for value in values:
            if len(u.samples) < SAMPLES and value not in u.samples:
                u.samples.append(value)
            if source != "relation" and not isinstance(value, Mapping | list):
                u.values += 1
                u.types.update(t for t in _SCALARS if value_fits(t, value))
        if source == "relation" and targets:
            u.targets.update(targets.get((index, name), Counter()))

    for index, facts in enumerate(entries):
        grouped: dict[tuple[str, str], list] = {}
        for category, content in facts.observations:
            grouped.setdefault(("observation", category), []).append(content)
        for kind, target in facts.relations:
            if kind != LINKS_TO:
                grouped.setdefault(("relation", kind), []).append(target)
        for key, value in facts.metadata.items():
            if ("observation", str(key).lower()) not in grouped and value not in (None, "", []):
                grouped[("metadata", str(key))] = value if isinstance(value, list) else [value]
        if facts.tags:
            grouped[("tags", "tags")] = list(facts.tags)
        for (source, name), values in grouped.items():
            add(source, name, values, index)
    return sorted(found.values(), key=lambda u: (-u.count, u.source, u.name))


@dataclass(frozen=True)
class Inference:
    note_type: str
    total: int
    usages: list[Usage]
    fields: tuple[Field, ...]  # the suggested schema
    threshold: float

    @property
    def excluded(self) -> list[Usage]:
        return [u for u in self.usages if u.share < self.threshold]


def infer(
    note_type: str,
    entries: list[Facts],
    *,
    threshold: float = THRESHOLD,
    targets: Mapping | None = None,
) -> Inference:
    """A suggested schema for `note_type` from its entries."""
    usages = usage(entries, targets)
    fields = tuple(u.suggest() for u in usages if u.share >= threshold)
    return Inference(note_type, len(entries), usages, fields, threshold)


@dataclass(frozen=True)
class Drift:
    """A schema against the entries of its type, today."""

    schema: Schema
    total: int
    new_fields: list[Usage]  # used by ≥ threshold of the entries, not in the schema
    dropped_fields: list[tuple[Field, float]]  # declared, used by < threshold of the entries
    cardinality: list[tuple[Field, str, str]]  # (field, declared, observed): one | many
    requiredness: list[tuple[Field, str, float]]  # (field, suggestion, share)

    @property
    def changed(self) -> bool:
        return bool(self.new_fields or self.dropped_fields or self.cardinality or self.requiredness)


def diff(schema: Schema, entries: list[Facts], *, threshold: float = THRESHOLD) -> Drift:
    """What the entries do differently from what `schema` says."""
    usages = {u.name.lower(): u for u in usage(entries) if u.source != "tags"}
    declared = {f.key for f in schema.fields}
    new = [u for key, u in usages.items() if key not in declared and u.share >= threshold]
    dropped, cardinality, requiredness = [], [], []
    for f in schema.fields:
        if f.key in ("tags", "status", "kind"):
            continue
        u = usages.get(f.key)
        share = u.share if u else 0.0
        if share < threshold:
            dropped.append((f, share))
            continue
        if u.is_array != f.array and f.type not in ("enum", "object"):
            one_many = ("many", "one") if f.array else ("one", "many")
            if u.is_array or u.multi == 0:
                cardinality.append((f, *one_many))
        if f.required and share < REQUIRED:
            requiredness.append((f, "optional", share))
        elif not f.required and share >= REQUIRED:
            requiredness.append((f, "required", share))
    return Drift(schema, len(entries), new, dropped, cardinality, requiredness)
