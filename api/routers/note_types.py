"""Note types and their schemas: validate, infer and diff (the same reads as MCP's schema_*
tools and `manage.py schema`), and a project's note types with how many entries fit."""

from django.http import HttpRequest
from ninja import Query, Router, Schema
from pydantic import Field

from api.schemas.fields import ProjectRef, Ref, Short
from knowledge.note_types.reads import (
    project_note_types,
    schema_diff,
    schema_infer,
    schema_validate,
)
from knowledge.reads import note_types as note_type_reports

router = Router()


class NoteTypeQuery(Schema):
    note_type: Short = Field(..., description="The note type (entry kind), e.g. person.")


class InferQuery(NoteTypeQuery):
    threshold: float = Field(0.25, gt=0, le=1, description="Share a field needs to be suggested.")


class ValidateQuery(Schema):
    note_type: Short | None = Field(None, description="Omit for every type with a schema.")


@router.get("/projects/{project}/note-types", response=list[dict], tags=["schemas"])
def note_types(request: HttpRequest, project: ProjectRef):
    """The project's note types by entry count, each with its schema and how many fit."""
    return [note_type_reports.note_type_dict(t) for t in project_note_types(request.auth, project)]


@router.get("/projects/{project}/schemas/validate", response=list[dict], tags=["schemas"])
def validate_type(request: HttpRequest, project: ProjectRef, query: Query[ValidateQuery]):
    """Each entry of the type (or of every type with a schema) against its schema: per field
    present, missing, wrong_type or not_in_enum; observations the schema does not name."""
    runs = schema_validate(request.auth, project=project, note_type=query.note_type)
    return [note_type_reports.validation_dict(run) for run in runs]


@router.get("/entries/{ref}/schema", response=dict, tags=["schemas"])
def validate_entry(request: HttpRequest, ref: Ref):
    """One entry against its type's schema (`schema` null when its type has none)."""
    [run] = schema_validate(request.auth, ref=ref)
    return note_type_reports.validation_dict(run)


@router.get("/projects/{project}/schemas/infer", response=dict, tags=["schemas"])
def infer(request: HttpRequest, project: ProjectRef, query: Query[InferQuery]):
    """A suggested schema from the type's entries: field use, and Picoschema text to save."""
    run = schema_infer(
        request.auth, project=project, note_type=query.note_type, threshold=query.threshold
    )
    return note_type_reports.inference_dict(run)


@router.get("/projects/{project}/schemas/diff", response=dict, tags=["schemas"])
def diff(request: HttpRequest, project: ProjectRef, query: Query[NoteTypeQuery]):
    """The type's schema against its entries: new, dropped, cardinality, requiredness."""
    return note_type_reports.diff_dict(
        schema_diff(request.auth, project=project, note_type=query.note_type)
    )
