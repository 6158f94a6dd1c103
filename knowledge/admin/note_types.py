"""Note-type schemas in the entry admin: a schema entry's parsed fields as a table, the
schema's verdict on a save (strict: an error on the form, naming each field and the schema's
version; warn: a message after the save), and the fit of the draft in the live preview."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.admin import display
from django.http import HttpRequest
from django.template.loader import render_to_string
from django.utils.html import format_html

from knowledge.errors import SchemaMisfit
from knowledge.models import Entry
from knowledge.note_types import Report, SchemaError
from knowledge.note_types.reads import SCHEMA_KIND, load_schema
from knowledge.reads.editor import schema_preview

FIELDS_TEMPLATE = "knowledge/admin/entries/schema_fields.html"


class SchemaFieldsMixin:
    """Schema entries (kind `schema`) show the fields they declare, as parsed, on their page."""

    def get_fieldsets(self, request, obj=None):
        fieldsets = super().get_fieldsets(request, obj)
        if obj is None or obj.kind != SCHEMA_KIND:
            return fieldsets
        return (*fieldsets[:1], ("Schema", {"fields": ("schema_fields",)}), *fieldsets[1:])

    def get_readonly_fields(self, request, obj=None):
        return (*super().get_readonly_fields(request, obj), "schema_fields")

    @display(description="fields")
    def schema_fields(self, obj: Entry):
        try:
            schema = load_schema(obj)
        except SchemaError as exc:
            return format_html('<p class="errornote">This schema does not parse: {}</p>',
                               exc.message)  # fmt: skip
        return render_to_string(FIELDS_TEMPLATE, {"schema": schema})


def schema_refusal(exc: SchemaMisfit) -> str:
    """A strict refusal, as the form's error: each field that does not fit, and the version."""
    return render_to_string(
        "knowledge/admin/entries/schema_refusal.html",
        {
            "note_type": exc.data.get("schema", ""),
            "version": exc.data.get("schema_version"),
            "schema_entry": exc.data.get("schema_entry", ""),
            "project": exc.data.get("project", ""),
            "misfits": exc.data.get("misfits", []),
        },
    )


def warn_misfit(request: HttpRequest, report: Report | None) -> None:
    """In warn mode a save that does not fit is kept; say what it lacks (`report`: the
    write's schema report, WriteResult.schema)."""
    if report is None or report.fits:
        return
    schema = report.schema
    messages.warning(
        request,
        f"Saved, but this entry does not fit the {schema.note_type} schema (version "
        f"{schema.version}): {report.summary()}. Edit it again to add what is missing.",
    )


def live_schema(request: HttpRequest) -> dict:
    """The live preview's schema part (see schema_fit.html)."""
    post = request.POST
    return {
        "schema_preview": schema_preview(
            request.actor,
            project=post.get("project", "")[:200] or None,
            kind=post.get("kind", "")[:100],
            body=post.get("text", ""),
            title=post.get("title", "")[:300],
            tags=post.get("tags", "")[:2000],
            status=post.get("status", "")[:20],
            metadata=post.get("metadata", ""),
            entry=int(entry)
            if (entry := post.get("entry", "")).isdigit() and len(entry) < 19
            else None,
        )
    }
