"""The text of the schema tools' answers (and the warn-mode line of a saved entry): short,
with the next call to make. Imports nothing of mcp_api, so render may use it."""

from __future__ import annotations

from knowledge.models import Entry
from knowledge.note_types import Report, Schema, SchemaError, read_schema, to_text

MAX_LISTED = 20
HOW_TO_WRITE = (
    "Fields: `field: type, description` (required), `field?: type` (optional), "
    "`field(array): string`, `field(enum): [a, b]`; a capitalised type (Organization) is a "
    "relation `- field [[Target]]`; other fields are observations `- [field] value`."
)


def schema_line(schema: Schema, project: str) -> str:
    return (
        f"{schema.note_type} schema (entry {schema.entry}, version {schema.version}) in {project}"
    )


def fix_call(entry: Entry, report: Report) -> str:
    lines = [
        f"- [{c.field.name}] …" if not c.field.is_relation else f"- {c.field.name} [[…]]"
        for c in report.misfits
        if c.status == "missing"
    ]
    if lines:
        return f'edit("{entry.short_id}", "append", {chr(10).join(lines)!r})'
    return f'get("{entry.short_id}") then edit("{entry.short_id}", "find_replace", …)'


def schema_fit_note(entry: Entry, report: Report | None) -> str:
    """For a saved entry its note type's schema checked (`report`: the write's, WriteResult.
    schema): that it fits, or (in a warn-mode project) what it lacks and the call that adds it.
    Nothing when no schema checked it."""
    if report is None:
        return ""
    if report.fits:
        return f" It fits the {report.schema.note_type} schema (version {report.schema.version})."
    return (
        f"\nSaved, but it does not fit the {report.schema.note_type} schema (version "
        f"{report.schema.version}): {report.summary()}. Fix: {fix_call(entry, report)}."
    )


def schema_entry_note(entry: Entry) -> str:
    """For a saved `schema` entry: that its body parsed as a schema, and the fields it defines
    (a schema entry that does not parse is refused with what to write instead)."""
    if entry.kind != "schema":
        return ""
    try:
        schema = read_schema(title=entry.title, metadata=entry.metadata, body=entry.body)
    except SchemaError:
        return ""
    if schema is None or not schema.fields:
        return ""
    names = ", ".join(
        f.name + ("" if f.required else "?") + (" (relation)" if f.is_relation else "")
        for f in schema.fields[:MAX_LISTED]
    )
    more = f" and {len(schema.fields) - MAX_LISTED} more" if len(schema.fields) > MAX_LISTED else ""
    return (
        f"\nParsed as the {schema.note_type!r} schema: {len(schema.fields)} field(s), "
        f"{names}{more} (? = optional)."
    )


def no_schema(note_type: str, project: str, entries: int, error: str = "") -> str:
    head = error or f"No schema for {note_type!r} in {project} ({entries} entries of that kind)."
    return (
        f"{head}\nWrite one: schema_infer({note_type!r}, project={project!r}) suggests fields; "
        f"save them with upsert(project={project!r}, title={note_type!r}, kind='schema', "
        "body='```yaml\\nrole: string, job title\\n```').\n" + HOW_TO_WRITE
    )


def counted(items: dict[str, int], relation: bool = False) -> str:
    return ", ".join(
        f"{name} x{n}" if relation else f"[{name}] x{n}" for name, n in sorted(items.items())
    )


def schema_block(fields) -> str:
    return f"```yaml\n{to_text(fields)}\n```"
