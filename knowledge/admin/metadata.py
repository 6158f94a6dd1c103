"""An entry's metadata as fields: the note type's fields (from its project's schema) as inputs
of their type, with their enums as choices; every other key as a key/value row. The stored
JSON stays what it was: a value shown and sent back unchanged is kept as it was stored (the
form carries the stored object along), so opening and saving changes nothing.

A value that does not read as its type is kept as typed (a string): the schema's check at save
judges it, and a strict project refuses the save with that field marked (see EntryAdmin)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from django import forms
from django.core.exceptions import ValidationError

from knowledge.note_types.picoschema import Field, Schema

PREFIX = "metadata__"
MARKER = f"{PREFIX}form"  # the form sent fields, not raw JSON
EXTRA_ROWS = 3  # empty key/value rows for new keys
ENTRY_FIELDS = ("tags", "status", "kind")  # the entry's own fields, on the form already


def shown(value) -> str:
    """How a stored value reads in a text input."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list) and all(isinstance(v, (str, int, float)) for v in value):
        return ", ".join(shown(v) for v in value)
    return json.dumps(value, ensure_ascii=False)


def _scalar(text: str, kind: str):
    """`text` as a value of `kind`; as typed when it does not read as one."""
    try:
        if kind == "integer":
            return int(text)
        if kind == "number":
            number = float(text)
            return int(number) if number.is_integer() and "." not in text else number
        if kind == "boolean" and text.lower() in ("true", "false", "yes", "no"):
            return text.lower() in ("true", "yes")
    except ValueError:
        return text
    return text


def _loose(text: str):
    """A value typed in a free row: JSON when it reads as JSON (a number, true, an object),
    else the text."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def parse(text: str, f: Field | None):
    text = text.strip()
    if f is None or f.type in ("any", "object"):
        return _loose(text)
    if f.array:
        return [_scalar(part.strip(), f.type) for part in text.split(",") if part.strip()]
    return _scalar(text, f.type)


@dataclass
class Row:
    key: str
    text: str
    field: Field | None = None
    error: str = ""

    @property
    def name(self) -> str:
        return f"{PREFIX}f_{self.key}"

    @property
    def kind(self) -> str:
        f = self.field
        if f is None:
            return ""
        return ("list of " if f.array else "") + ("one of" if f.type == "enum" else f.type)


def schema_fields(schema: Schema | None) -> list[Field]:
    if schema is None:
        return []
    return [f for f in schema.fields if f.key not in ENTRY_FIELDS and not f.is_relation]


class MetadataWidget(forms.Widget):
    template_name = "knowledge/admin/entries/metadata_widget.html"

    def __init__(self, attrs=None):
        super().__init__(attrs)
        self.schema: Schema | None = None
        self.misfits: dict[str, str] = {}  # field name → why it does not fit (a refusal)

    def get_context(self, name, value, attrs):
        context = super().get_context(name, value, attrs)
        stored = value if isinstance(value, dict) else _as_dict(value)
        fields = schema_fields(self.schema)
        named = {f.name for f in fields}
        typed = [
            Row(f.name, shown(stored.get(f.name)), f, self.misfits.get(f.key, "")) for f in fields
        ]
        extra = [Row(k, shown(v)) for k, v in stored.items() if k not in named]
        extra += [Row("", "") for _ in range(EXTRA_ROWS)]
        context["meta"] = {
            "schema": self.schema,
            "typed": typed,
            "extra": extra,
            "stored": json.dumps(stored, ensure_ascii=False),
            "marker": MARKER,
            "prefix": PREFIX,
            "misfits": self.misfits,
        }
        return context

    def value_from_datadict(self, data, files, name):
        if MARKER not in data:  # raw JSON (a script, a test, the stock form)
            return data.get(name)
        stored = _as_dict(data.get(f"{PREFIX}stored", ""))
        fields = {f.name: f for f in schema_fields(self.schema)}
        result = {key: data.get(f"{PREFIX}f_{key}", "") for key in fields}
        i = 0
        while f"{PREFIX}k_{i}" in data:
            key = data.get(f"{PREFIX}k_{i}", "").strip()
            if key and key not in fields:
                result[key] = data.get(f"{PREFIX}v_{i}", "")
            i += 1
        metadata = {}
        for key, text in result.items():
            if key in stored and text == shown(stored[key]):
                metadata[key] = stored[key]  # unchanged: exactly as stored
            elif text.strip():
                metadata[key] = parse(text, fields.get(key))
        return metadata


def _as_dict(value) -> dict:
    if isinstance(value, dict):
        return value
    try:
        loaded = json.loads(value or "{}")
    except (TypeError, ValueError):
        return {}
    return loaded if isinstance(loaded, dict) else {}


class MetadataField(forms.JSONField):
    """The entry's metadata: a JSON object, from the fields above or as raw JSON."""

    widget = MetadataWidget

    def to_python(self, value):
        if isinstance(value, dict):
            return value
        value = super().to_python(value)
        if value is not None and not isinstance(value, dict):
            raise ValidationError('Metadata is a JSON object, such as {"team": "Platform"}.')
        return value or {}

    def bound_data(self, data, initial):
        return data if isinstance(data, dict) else super().bound_data(data, initial)

    def prepare_value(self, value):
        return value if isinstance(value, dict) else _as_dict(value)

    def has_changed(self, initial, data):
        return _as_dict(initial) != (data if isinstance(data, dict) else _as_dict(data))
