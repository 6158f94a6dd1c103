"""The note-type tools, with Basic Memory's names and arguments: schema_validate, schema_infer,
schema_diff, with the answers they build (one small feature)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from knowledge import limits
from knowledge.actors import Actor
from knowledge.errors import ValidationFailed
from knowledge.note_types import reads as note_types
from mcp_api import render
from mcp_api.note_type_text import (
    MAX_LISTED,
    counted,
    fix_call,
    no_schema,
    schema_block,
    schema_line,
)
from mcp_api.tools.arguments import OptProject
from mcp_api.tools.arguments import ToolArguments as Arguments
from mcp_api.tools.registry import READ, Tool

NoteType = Annotated[str, Field(max_length=limits.KIND, description="An entry kind, e.g. person.")]


def _project(actor: Actor, project, note_type) -> str:
    """The project named, or the only one holding this note type."""
    if project:
        return project
    found = note_types.projects_with_type(actor, note_type or "")
    if len(found) == 1:
        return found[0]
    where = f" Projects with {note_type!r} entries: {', '.join(found)}." if found else ""
    raise ValidationFailed(f"Name the project (project=…).{where}", field="project")


def _entry_row(fit) -> dict:
    e = fit.entry
    return {
        "id": e.pk,
        "short_id": e.short_id,
        "title": e.title,
        "path": e.path,
        "misfits": [c.as_dict() for c in fit.report.misfits],
    }


def _run_text(run) -> tuple[str, dict]:
    slug = run.project.slug
    if run.schema is None:
        text = no_schema(run.note_type, slug, run.total, run.error)
        return text, {"note_type": run.note_type, "project": slug, "schema": None}
    misfits = run.misfits
    lines = [
        f"{schema_line(run.schema, slug)}: {run.fitting} of {len(run.results)} "
        f"{run.note_type} entries fit" + (f" (newest {len(run.results)} of {run.total})"
                                          if run.cut else "") + "."
    ]  # fmt: skip
    if misfits:
        lines.append(f"{len(misfits)} {'does' if len(misfits) == 1 else 'do'} not fit:")
        for fit in misfits[:MAX_LISTED]:
            e = fit.entry
            lines.append(
                f"- {e.short_id} {e.title!r} ({e.path}): {fit.report.summary()}. "
                f"Fix: {fix_call(e, fit.report)}"
            )
        if len(misfits) > MAX_LISTED:
            lines.append(f"… and {len(misfits) - MAX_LISTED} more (see structured content).")
    observations, relations = {}, {}
    for fit in run.results:
        for name, n in fit.report.unmatched_observations.items():
            observations[name] = observations.get(name, 0) + n
        for name, n in fit.report.unmatched_relations.items():
            relations[name] = relations.get(name, 0) + n
    if observations or relations:
        info = ", ".join(filter(None, [counted(observations), counted(relations, True)]))
        lines.append(f"Not in the schema (information only): {info}.")
    data = {
        "note_type": run.note_type,
        "project": slug,
        "schema": {"entry": run.schema.entry, "version": run.schema.version},
        "entries": len(run.results),
        "total": run.total,
        "fitting": run.fitting,
        "misfits": [_entry_row(f) for f in misfits],
    }
    return "\n".join(lines), data


class ValidateArguments(Arguments):
    note_type: Annotated[
        str | None, Field(max_length=limits.KIND, description="All entries of this type.")
    ] = None
    identifier: Annotated[str | None, Field(max_length=limits.REF, description="Or one entry.")] = (
        None
    )
    project: OptProject = None


def validate(actor: Actor, args: ValidateArguments):
    """Check entries against their note type's schema: each misfit (a missing field, a wrong
    value) with the edit that fixes it."""
    project = None if args.identifier else _project(actor, args.project, args.note_type)
    runs = note_types.schema_validate(
        actor, project=project, note_type=args.note_type, ref=args.identifier or None
    )
    if not runs:
        text = (
            f"No schemas in {project} yet: schema_infer(note_type, project={project!r}) "
            "suggests one from existing entries."
        )
        return render.result(text, {"runs": []})
    parts = [_run_text(run) for run in runs]
    return render.result("\n\n".join(t for t, _ in parts), {"runs": [d for _, d in parts]})


class InferArguments(Arguments):
    note_type: NoteType
    threshold: Annotated[
        float, Field(gt=0, le=1, description="Share of entries a field needs.")
    ] = 0.25
    project: OptProject = None


def infer(actor: Actor, args: InferArguments):
    """Suggest a schema for a note type from its entries: how often each field occurs, and a
    YAML body to save as a schema entry."""
    threshold = args.threshold
    project = _project(actor, args.project, args.note_type)
    run = note_types.schema_infer(
        actor, project=project, note_type=args.note_type, threshold=threshold
    )
    found, slug = run.inference, run.project.slug
    if not found.total:
        text = (
            f"No {found.note_type!r} entries in {slug} to learn from. Write a few with "
            f"upsert(project={slug!r}, kind={found.note_type!r}, …) and '- [field] value' lines."
        )
        return render.result(text, {"note_type": found.note_type, "entries": 0, "fields": []})
    usage = "; ".join(
        f"{u.name} {u.count}/{found.total}" + (" (left out)" if u.share < threshold else "")
        for u in found.usages[:MAX_LISTED]
    )
    lines = [
        f"{found.total} {found.note_type} entries in {slug}"
        + (f" (newest {found.total} of {run.total})" if run.total > found.total else "")
        + f". Field use: {usage}."
    ]
    if found.fields:
        lines += [
            "Suggested schema (required at ≥ 95 %, optional at ≥ "
            f"{threshold:.0%}):\n{schema_block(found.fields)}",
            f"Save it: upsert(project={slug!r}, title={found.note_type!r}, kind='schema', "
            "body=<the block above>)"
            + (f" (replaces schema version {run.schema.version})." if run.schema else "."),
        ]
    else:
        lines.append(
            f"No field reaches {threshold:.0%}: lower threshold, or write '- [field] value' "
            "lines the same way in these entries."
        )
    data = {
        "note_type": found.note_type,
        "project": slug,
        "entries": found.total,
        "usage": [u.as_dict() for u in found.usages[:100]],
        "suggested": schema_block(found.fields) if found.fields else "",
        "required": [f.name for f in found.fields if f.required],
        "optional": [f.name for f in found.fields if not f.required],
    }
    return render.result("\n".join(lines), data)


class DiffArguments(Arguments):
    note_type: NoteType
    project: OptProject = None


def diff(actor: Actor, args: DiffArguments):
    """Compare a note type's schema with its entries now: new fields, unused ones, one value
    vs many, required vs optional."""
    project = _project(actor, args.project, args.note_type)
    run = note_types.schema_diff(actor, project=project, note_type=args.note_type)
    slug = run.project.slug
    if run.schema is None:
        text = no_schema(run.note_type, slug, 0, run.error)
        return render.result(text, {"note_type": run.note_type, "schema": None})
    d = run.drift
    lines = [f"{schema_line(run.schema, slug)} against its {d.total} entries:"]
    lines += [f"+ {u.name}: in {u.share:.0%}, not in the schema" for u in d.new_fields]
    lines += [f"- {f.name}: declared, in {share:.0%} of entries" for f, share in d.dropped_fields]
    lines += [f"~ {f.name}: declared {a}, used as {b}" for f, a, b in d.cardinality]
    lines += [f"~ {f.name}: in {s:.0%}, could be {w}" for f, w, s in d.requiredness]
    if not d.changed:
        lines.append("No drift: the schema matches how its entries are written.")
    else:
        lines.append(
            f"To adopt: schema_infer({run.note_type!r}, project={slug!r}) suggests a new body; "
            "upsert the schema entry with it."
        )
    data = {
        "note_type": run.note_type,
        "project": slug,
        "schema": {"entry": run.schema.entry, "version": run.schema.version},
        "entries": d.total,
        "new_fields": [u.as_dict() for u in d.new_fields],
        "dropped_fields": [{"field": f.name, "share": round(s, 3)} for f, s in d.dropped_fields],
        "cardinality_changes": [
            {"field": f.name, "declared": a, "observed": b} for f, a, b in d.cardinality
        ],
        "requiredness_changes": [
            {"field": f.name, "suggest": w, "share": round(s, 3)} for f, w, s in d.requiredness
        ],
    }
    return render.result("\n".join(lines), data)


SCHEMA_VALIDATE = Tool("schema_validate", ValidateArguments, validate, READ)
SCHEMA_INFER = Tool("schema_infer", InferArguments, infer, READ)
SCHEMA_DIFF = Tool("schema_diff", DiffArguments, diff, READ)
