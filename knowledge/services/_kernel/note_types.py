"""Kernel step: does the entry about to be saved fit its note type's schema?

Runs inside save_entry before the version, the stamps and the revision, so a strict refusal
leaves nothing behind. The project's schema_mode decides: off checks nothing (and costs no
query), warn saves and hands the report to the write's result for the surface to show, strict
refuses. A `schema` entry itself must parse, whatever the mode.
"""

from __future__ import annotations

from knowledge.actors import Actor
from knowledge.errors import SchemaMisfit, ValidationFailed
from knowledge.models import Entry, SchemaMode
from knowledge.note_types import Report, SchemaError, validate
from knowledge.note_types.lookup import write_schema
from knowledge.note_types.reads import SCHEMA_KIND, facts_of, load_schema
from knowledge.note_types.targets import draft_target_kinds


def check_schema_entry(entry: Entry) -> None:
    """A schema entry that does not parse is refused: its note type would silently lose it."""
    if entry.kind != SCHEMA_KIND:
        return
    try:
        schema = load_schema(entry)
    except SchemaError as exc:
        raise ValidationFailed(
            f"This schema does not parse: {exc.message}",
            field="body",
            schema_field=exc.field,
        ) from None
    if schema is None:
        raise ValidationFailed(
            "A schema entry lists its fields in a ```yaml block of its body (or in metadata "
            "'schema'), one per line, e.g. role: string, job title — or role?: string when "
            "optional.",
            field="body",
        )


def check_schema(
    entry: Entry, *, lenient: bool = False, actor: Actor | None = None
) -> Report | None:
    """Check `entry` against its type's schema per the project's mode. Returns the report
    (None when nothing was checked); raises SchemaMisfit in strict mode unless `lenient`
    (imports report misfits instead of refusing)."""
    check_schema_entry(entry)
    mode = entry.project.schema_mode
    if mode == SchemaMode.OFF or entry.kind == SCHEMA_KIND:
        return None
    schema = write_schema(entry.project, entry.kind)
    if schema is None:
        return None
    # a relation field checks the kind of the entry each link names, resolved as the save will
    targets = draft_target_kinds(entry, actor) if schema.has_relations else None
    report = validate(schema, facts_of(entry, targets))
    if report.fits or mode != SchemaMode.STRICT or lenient:
        return report
    raise SchemaMisfit(
        f"This {schema.note_type} entry does not fit the {schema.note_type} schema "
        f"(schema entry {schema.entry}, version {schema.version}) of project "
        f"{entry.project.slug}, which refuses writes that do not fit: {report.summary()}. "
        "Add what is missing and save again, or ask a maintainer to change the schema or the "
        "project's schema mode.",
        field="body",
        project=entry.project.slug,
        schema=schema.note_type,
        schema_entry=schema.entry,
        schema_version=schema.version,
        misfits=[c.as_dict() for c in report.misfits],
    )
