"""Entries in the admin: a Markdown editor, saves through the services, a sanitized preview."""

from __future__ import annotations

from django import forms
from django.contrib import admin
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe
from simple_history.admin import SimpleHistoryAdmin

from knowledge.admin.common import (
    MarkdownEditor,
    ScopedAdminMixin,
    ServiceWritesMixin,
    actor_for,
)
from knowledge.admin.revisions import RevisionAdminMixin
from knowledge.errors import AlreadyExists, ValidationFailed
from knowledge.graph.selectors import entry_relations
from knowledge.models import Entry
from knowledge.paths import normalize_path
from knowledge.rendering import render_markdown
from knowledge.services import EntryFields, entry_create, entry_delete, entry_update


class EntryForm(forms.ModelForm):
    subtopic_path = forms.CharField(
        required=False,
        label="Subtopic",
        help_text="Path such as customer-x/2026-08/incident; created if missing. "
        "Empty = project root.",
    )
    tags_text = forms.CharField(required=False, label="Tags", help_text="Comma-separated.")
    reason = forms.CharField(
        required=False, help_text="Why this change? Recorded in the history and the git mirror."
    )

    # The service's refusal of the last save, shown on its field (see EntryAdmin.add_refused).
    refusal: tuple[str, str] | None = None

    class Meta:
        model = Entry
        fields = ("project", "title", "kind", "status", "searchable", "body", "metadata")
        widgets = {"body": MarkdownEditor()}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            self.fields["subtopic_path"].initial = (
                self.instance.subtopic.path if self.instance.subtopic_id else ""
            )
            self.fields["tags_text"].initial = ", ".join(self.instance.tags)
            # The current version, not the instance's: a revert form shows an old revision.
            current = Entry.objects.filter(pk=self.instance.pk).values_list("version", flat=True)
            self.fields["version"] = forms.IntegerField(
                widget=forms.HiddenInput, initial=current.first() or self.instance.version
            )

    def validate_constraints(self, exclude=None):
        """Identity is checked by the service against the subtopic the path resolves to."""

    def clean(self):
        data = super().clean()
        if self.refusal:
            self.add_error(*self.refusal)
        try:
            data["subtopic_path"] = normalize_path(data.get("subtopic_path"))
        except ValidationFailed as exc:
            self.add_error("subtopic_path", exc.message)
        if self.instance.pk and data.get("version") is not None:
            current = Entry.objects.filter(pk=self.instance.pk).values_list("version", flat=True)
            if current and current[0] != data["version"]:
                # Re-show the form with the person's text intact rather than overwrite silently.
                raise forms.ValidationError(
                    f"Someone changed this entry since you opened it (now version {current[0]},"
                    f" you edited version {data['version']}). Copy your changes, reload the"
                    " page, and apply them again."
                )
        return data


# Who wrote, changed and verified an entry: shown, never edited by hand.
PROVENANCE = (
    "short_id", "version", "generated_by", "created_by", "updated_by", "verified_by",
    "verified_at", "supersedes", "superseded_by", "source_list", "created_at", "updated_at",
)  # fmt: skip


@admin.register(Entry)
class EntryAdmin(RevisionAdminMixin, ServiceWritesMixin, ScopedAdminMixin, SimpleHistoryAdmin):
    form = EntryForm
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
        ("project", admin.RelatedOnlyFieldListFilter),
        "kind",
        "status",
        ("verified_at", admin.EmptyFieldListFilter),
        "searchable",
    )
    search_fields = ("title", "body", "short_id", "tags", "subtopic__path")
    list_select_related = ("project", "subtopic")
    readonly_fields = ("rendered", "links", "backlinks", *PROVENANCE)
    fieldsets = (
        (None, {"fields": ("project", "subtopic_path", "title", "body", "reason")}),
        ("Metadata", {"fields": ("kind", "tags_text", "status", "searchable", "metadata")}),
        ("Links", {"fields": ("links", "backlinks")}),
        ("Provenance", {"classes": ("collapse",), "fields": PROVENANCE}),
        ("Rendered", {"classes": ("collapse",), "fields": ("rendered",)}),
    )
    history_list_display = ("version", "status", "generated_by")
    date_hierarchy = "updated_at"

    @admin.display(description="path")
    def where(self, obj: Entry) -> str:
        return obj.subtopic.path if obj.subtopic_id else "—"

    @admin.display(boolean=True, ordering="verified_at")
    def verified(self, obj: Entry) -> bool:
        return obj.is_verified

    @admin.display(description="rendered body")
    def rendered(self, obj: Entry):
        # Safe: render_markdown sanitizes with nh3 (bodies are written by agents, too).
        return mark_safe(f'<div class="cairn-rendered">{render_markdown(obj.body)}</div>')

    def get_readonly_fields(self, request, obj=None):
        if obj is not None and obj.pk:
            # What this person may see: a link to a hidden entry shows its text only.
            obj.graph_links = entry_relations(actor_for(request), obj)
        return super().get_readonly_fields(request, obj)

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
        preview = path(
            "preview/",
            self.admin_site.admin_view(markdown_preview),
            name="knowledge_entry_preview",
        )
        return [preview, *super().get_urls()]

    def get_form(self, request, obj=None, **kwargs):
        form = super().get_form(request, obj, **kwargs)
        refusal = getattr(request, "cairn_refusal", None)
        return type(form.__name__, (form,), {"refusal": refusal}) if refusal else form

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

    def save_model(self, request, obj, form, change):
        data = form.cleaned_data
        actor = actor_for(request)
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
            entry = entry_create(
                actor=actor,
                project=data["project"].pk,
                subtopic=data["subtopic_path"],
                fields=fields,
                reason=reason,
            )
        else:
            entry = entry_update(
                actor=actor,
                ref=obj.pk,
                fields=fields,
                project=data["project"].pk,
                subtopic=data["subtopic_path"] or "",
                expected_version=data.get("version"),
                reason=reason,
            )
        obj.pk = entry.pk
        obj.refresh_from_db()

    def delete_model(self, request, obj):
        entry_delete(
            actor=actor_for(request),
            ref=obj.pk,
            reason=f"deleted in the admin by {request.user.get_username()}",
        )

    def delete_queryset(self, request, queryset):
        for entry in queryset:
            self.delete_model(request, entry)


@staff_member_required
def markdown_preview(request: HttpRequest) -> HttpResponse:
    """The editor's preview: rendered and sanitized on the server, like every other rendering."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    return HttpResponse(render_markdown(request.POST.get("text", "")))
