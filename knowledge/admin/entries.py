"""Entries in the admin: Cairn's search in the changelist, the subtopic tree as a filter, bulk
actions with a reason, a Markdown editor with a live preview; every save through the services."""

from __future__ import annotations

from django.contrib import admin
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe
from simple_history.admin import SimpleHistoryAdmin
from unfold.admin import ModelAdmin

from knowledge.admin.actions import BulkActionsMixin
from knowledge.admin.common import ScopedAdminMixin, ServiceWritesMixin
from knowledge.admin.editor import live_preview, markdown_preview
from knowledge.admin.entry_form import EntryForm
from knowledge.admin.note_types import SchemaFieldsMixin, schema_refusal, warn_misfit
from knowledge.admin.search import CairnSearchMixin
from knowledge.admin.tree import SubtopicTreeFilter
from knowledge.errors import AlreadyExists, SchemaMisfit
from knowledge.graph.selectors import entry_relations
from knowledge.models import Entry
from knowledge.selectors.supersession import UNSEEN, unseen_links
from knowledge.services import EntryFields, entry_create, entry_delete, entry_update

# Who wrote, changed and verified an entry: shown, never edited by hand.
PROVENANCE = (
    "short_id", "version", "generated_by", "created_by", "updated_by", "verified_by",
    "verified_at", "supersedes_link", "superseded_by_link", "source_list", "created_at",
    "updated_at",
)  # fmt: skip


# History adds its revision pages (list, diff, revert) to this admin: history/admin/revisions.py.
@admin.register(Entry)
class EntryAdmin(
    SchemaFieldsMixin,
    CairnSearchMixin,
    BulkActionsMixin,
    ServiceWritesMixin,
    ScopedAdminMixin,
    SimpleHistoryAdmin,
    ModelAdmin,
):
    form = EntryForm
    change_form_template = "knowledge/admin/entries/change_form.html"
    autocomplete_fields = ("project",)
    list_display = (
        "title",
        "short_id",
        "project",
        "where",
        "kind",
        "status",
        "verified",
        "version",
        "updated_at",
    )
    list_filter = (
        SubtopicTreeFilter,
        ("project", admin.RelatedOnlyFieldListFilter),
        "kind",
        "status",
        ("verified_at", admin.EmptyFieldListFilter),
        "searchable",
    )
    search_fields = ("title", "body", "short_id", "tags", "subtopic__path")
    list_select_related = ("project", "subtopic")
    readonly_fields = ("links", "backlinks", *PROVENANCE)
    fieldsets = (
        (None, {"fields": ("project", "subtopic_path", "title", "body", "reason")}),
        ("Metadata", {"fields": ("kind", "tags_text", "status", "searchable", "metadata")}),
        ("Links", {"fields": ("links", "backlinks")}),
        ("Provenance", {"classes": ("collapse",), "fields": PROVENANCE}),
    )
    history_list_display = ("version", "status", "generated_by")
    date_hierarchy = "updated_at"

    @admin.display(description="path")
    def where(self, obj: Entry) -> str:
        return obj.subtopic.path if obj.subtopic_id else "—"

    @admin.display(boolean=True, ordering="verified_at")
    def verified(self, obj: Entry) -> bool:
        return obj.is_verified

    def get_readonly_fields(self, request, obj=None):
        if obj is not None and obj.pk:
            # What this person may see: a link to a hidden entry shows its text only.
            obj.graph_links = entry_relations(request.actor, obj)
            obj.unseen_links = unseen_links(request.actor, [obj])
        return super().get_readonly_fields(request, obj)

    def _supersession(self, obj: Entry, field: str):
        pk = getattr(obj, f"{field}_id")
        if pk is None:
            return "—"
        if pk in getattr(obj, "unseen_links", {pk}):  # not worked out: say nothing of it
            return UNSEEN
        linked = getattr(obj, field)
        url = reverse("admin:knowledge_entry_change", args=[pk])
        return format_html('<a href="{}">{}</a> <small>{}</small>', url, linked.title,
                           linked.short_id)  # fmt: skip

    @admin.display(description="supersedes")
    def supersedes_link(self, obj: Entry):
        return self._supersession(obj, "supersedes")

    @admin.display(description="superseded by")
    def superseded_by_link(self, obj: Entry):
        return self._supersession(obj, "superseded_by")

    @staticmethod
    def _entry_link(entry: dict):
        url = reverse("admin:knowledge_entry_change", args=[entry["id"]])
        return format_html('<a href="{}">{}</a> <small>{}</small>', url, entry["title"],
                           entry["path"])  # fmt: skip

    @admin.display(description="links")
    def links(self, obj: Entry):
        rows = getattr(obj, "graph_links", {}).get("outgoing", [])
        if not rows:
            return "—"
        return format_html_join(
            mark_safe("<br>"),
            "{} → {}",
            (
                (r["type"], self._entry_link(r["entry"]) if r["entry"] else
                 format_html("[[{}]] <small>(no entry yet)</small>", r["target_text"]))
                for r in rows
            ),
        )  # fmt: skip

    @admin.display(description="backlinks")
    def backlinks(self, obj: Entry):
        rows = getattr(obj, "graph_links", {}).get("backlinks", [])
        if not rows:
            return "—"
        return format_html_join(
            mark_safe("<br>"), "{} ← {}", ((r["type"], self._entry_link(r["entry"])) for r in rows)
        )

    @admin.display(description="sources")
    def source_list(self, obj: Entry) -> str:
        return ", ".join(str(s) for s in obj.sources.all()) or "—"

    def get_urls(self):
        view = self.admin_site.admin_view
        return [
            path("preview/", view(markdown_preview), name="knowledge_entry_preview"),
            path("preview/live/", view(live_preview), name="knowledge_entry_live_preview"),
            *super().get_urls(),
        ]

    def get_form(self, request, obj=None, **kwargs):
        form = super().get_form(request, obj, **kwargs)
        extra = {
            "actor": request.actor,
            "refusal": getattr(request, "cairn_refusal", None),
            "misfits": getattr(request, "cairn_misfits", None),
        }
        return type(form.__name__, (form,), extra)

    def _changeform_view(self, request, object_id, form_url, extra_context):
        try:
            return super()._changeform_view(request, object_id, form_url, extra_context)
        except AlreadyExists as exc:
            if object_id is not None or exc.data.get("field") != "title":
                raise
            # The add form comes back with what the person typed and the refusal on the title
            # (a redirect would lose the text); the service wrote nothing.
            search = reverse("admin:knowledge_entry_changelist") + f"?q={exc.data['entry']}"
            request.cairn_refusal = (
                "title",
                format_html('{} <a href="{}">Open it to edit</a>, or choose another title.',
                            exc.message, search),
            )  # fmt: skip
            return super()._changeform_view(request, object_id, form_url, extra_context)
        except SchemaMisfit as exc:
            # Strict: the form comes back with the person's text and each misfit on it.
            request.cairn_refusal = (None, mark_safe(schema_refusal(exc)))
            request.cairn_misfits = {
                str(m.get("field", "")).lower(): m.get("message", "")
                for m in exc.data.get("misfits", [])
            }
            return super()._changeform_view(request, object_id, form_url, extra_context)

    def save_model(self, request, obj, form, change):
        data = form.cleaned_data
        actor = request.actor
        reason = data.get("reason") or ("edited in the admin" if change else "created in the admin")
        fields = EntryFields(
            title=data["title"],
            body=data["body"],
            kind=data["kind"],
            tags=data["tags_text"],
            status=data["status"],
            searchable=data["searchable"],
            metadata=data["metadata"],
        )
        if not change:
            result = entry_create(
                actor=actor,
                project=data["project"].pk,
                subtopic=data["subtopic_path"],
                fields=fields,
                reason=reason,
            )
        else:
            result = entry_update(
                actor=actor,
                ref=obj.pk,
                fields=fields,
                project=data["project"].pk,
                subtopic=data["subtopic_path"] or "",
                expected_version=data.get("version"),
                reason=reason,
            )
        warn_misfit(request, result.schema)
        obj.pk = result.entry.pk
        obj.refresh_from_db()

    def delete_model(self, request, obj):
        entry_delete(
            actor=request.actor,
            ref=obj.pk,
            reason=f"deleted in the admin by {request.user.get_username()}",
        )

    def delete_queryset(self, request, queryset):
        for entry in queryset:
            self.delete_model(request, entry)
