"""The schema reads as plain JSON-ready dicts, one shape for REST, commands and pages."""

from __future__ import annotations

from knowledge.note_types import Schema, to_text
from knowledge.note_types.reads import DiffRun, InferenceRun, NoteType, ValidationRun


def schema_dict(schema: Schema | None) -> dict | None:
    if schema is None:
        return None
    return {
        "note_type": schema.note_type,
        "entry": schema.entry,
        "version": schema.version,
        "fields": [
            {
                "name": f.name,
                "type": f.type,
                "required": f.required,
                "array": f.array,
                "enum": list(f.enum),
                "description": f.description,
            }
            for f in schema.fields
        ],
        "text": to_text(schema.fields),
    }


def validation_dict(run: ValidationRun) -> dict:
    return {
        "project": run.project.slug,
        "note_type": run.note_type,
        "schema": schema_dict(run.schema),
        "error": run.error,
        "total": run.total,
        "checked": len(run.results),
        "fitting": run.fitting,
        "entries": [
            {
                "id": fit.entry.pk,
                "short_id": fit.entry.short_id,
                "title": fit.entry.title,
                "path": fit.entry.path,
                **fit.report.as_dict(),
            }
            for fit in run.results
        ],
    }


def inference_dict(run: InferenceRun) -> dict:
    found = run.inference
    return {
        "project": run.project.slug,
        "note_type": found.note_type,
        "entries": found.total,
        "total": run.total,
        "threshold": found.threshold,
        "usage": [u.as_dict() for u in found.usages[:200]],
        "suggested": to_text(found.fields),
        "required": [f.name for f in found.fields if f.required],
        "optional": [f.name for f in found.fields if not f.required],
        "current_schema": schema_dict(run.schema),
    }


def diff_dict(run: DiffRun) -> dict:
    d = run.drift
    return {
        "project": run.project.slug,
        "note_type": run.note_type,
        "schema": schema_dict(run.schema),
        "error": run.error,
        "entries": d.total if d else 0,
        "new_fields": [u.as_dict() for u in d.new_fields] if d else [],
        "dropped_fields": [{"field": f.name, "share": round(s, 3)} for f, s in d.dropped_fields]
        if d
        else [],
        "cardinality_changes": [
            {"field": f.name, "declared": a, "observed": b} for f, a, b in d.cardinality
        ]
        if d
        else [],
        "requiredness_changes": [
            {"field": f.name, "suggest": w, "share": round(s, 3)} for f, w, s in d.requiredness
        ]
        if d
        else [],
    }


def note_type_dict(item: NoteType) -> dict:
    return {
        "kind": item.kind,
        "entries": item.entries,
        "schema": schema_dict(item.schema),
        "fitting": item.fitting,
    }
