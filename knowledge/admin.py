"""The Django admin for staff. Reads are scoped by the selectors; writes go through the services,
so an edit here is a revision like any other."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.contrib.admin.views.decorators import staff_member_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import redirect
from django.urls import path
from django.utils.html import format_html
from django.utils.safestring import mark_safe
from simple_history.admin import SimpleHistoryAdmin

from knowledge.actors import Actor
from knowledge.errors import KnowledgeError, ValidationFailed
from knowledge.models import Entry, Project, Source, Subtopic
from knowledge.paths import normalize_path
from knowledge.rendering import render_markdown
from knowledge.selectors import visible_projects, writable_projects
from knowledge.services import (
    entry_delete,
    entry_move,
    entry_update,
    entry_upsert,
    project_create,
    project_update,
    subtopic_ensure,
)


def actor_for(request: HttpRequest) -> Actor:
    return Actor.for_user(request.user)


class MarkdownEditor(forms.Textarea):
    """A textarea that EasyMDE (vendored, no CDN) turns into an editor with a sanitized preview."""

    class Media:
        css = {
            "all": (
                "knowledge/vendor/font-awesome/css/font-awesome.min.css",
                "knowledge/vendor/easymde/easymde.min.css",
                "knowledge/admin/markdown.css",
            )
        }
        js = ("knowledge/vendor/easymde/easymde.min.js", "knowledge/admin/markdown.js")

    def __init__(self, attrs=None):
        super().__init__(attrs={"class": "cairn-markdown", "rows": 24, **(attrs or {})})


class ScopedAdminMixin:
    """Every queryset and choice list is limited to the projects the user may see."""

    project_field = "project"

    def get_queryset(self, request):
        qs = super().get_queryset(request)
        return qs.filter(**{f"{self.project_field}__in": visible_projects(actor_for(request))})

    def get_history_queryset(self, request, history_manager, pk_name, object_id):
        # History outlives deletions, so scope it by the project recorded on each revision.
        qs = super().get_history_queryset(request, history_manager, pk_name, object_id)
        field = "id" if self.project_field == "pk" else f"{self.project_field}_id"
        return qs.filter(**{f"{field}__in": visible_projects(actor_for(request)).values("pk")})

    def history_form_view(self, request, object_id, version_id, extra_context=None):
        history = self.model.history
        revisions = self.get_history_queryset(request, history, "id", unquote(object_id))
        if not revisions.filter(history_id=version_id).exists():
            raise Http404("No such revision.")
        return super().history_form_view(request, object_id, version_id, extra_context)

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.related_model is Project:
            kwargs["queryset"] = writable_projects(actor_for(request))
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


def _report(request: HttpRequest, exc: KnowledgeError) -> None:
    messages.error(request, exc.message)


# --- Projects -----------------------------------------------------------------------------------


@admin.register(Project)
class ProjectAdmin(ScopedAdminMixin, SimpleHistoryAdmin):
    project_field = "pk"
    list_display = ("slug", "name", "sensitivity", "archived", "updated_at")
    list_filter = ("sensitivity", "archived")
    search_fields = ("slug", "name", "description")
    readonly_fields = ("created_at", "updated_at")

    def get_readonly_fields(self, request, obj=None):
        # The slug names files in the git mirror and paths agents quote: fixed once created.
        return (*self.readonly_fields, "slug") if obj else self.readonly_fields

    def save_model(self, request, obj, form, change):
        data = form.cleaned_data
        if change:
            project_update(
                actor=actor_for(request),
                project=obj.pk,
                name=data["name"],
                description=data["description"],
                sensitivity=data["sensitivity"],
                archived=data["archived"],
                reason="edited in the admin",
            )
        else:
            created = project_create(
                actor=actor_for(request),
                slug=data["slug"],
                name=data["name"],
                description=data["description"],
                sensitivity=data["sensitivity"],
                reason="created in the admin",
            )
            obj.pk = created.pk
        obj.refresh_from_db()

    def has_delete_permission(self, request, obj=None):
        # Projects are archived, not deleted: deleting would drop every entry's history.
        return False


# --- Subtopics ----------------------------------------------------------------------------------


class SubtopicForm(forms.ModelForm):
    path = forms.CharField(
        help_text="e.g. customer-x/2026-08/incident or Customer X > 2026-08 > Incident; "
        "missing levels are created."
    )

    class Meta:
        model = Subtopic
        fields = ("project", "path")


@admin.register(Subtopic)
class SubtopicAdmin(ScopedAdminMixin, SimpleHistoryAdmin):
    form = SubtopicForm
    list_display = ("tree", "project", "entry_count")
    list_filter = (("project", admin.RelatedOnlyFieldListFilter),)
    search_fields = ("path", "name")
    ordering = ("project__slug", "path")
    list_select_related = ("project",)

    @admin.display(description="subtopic", ordering="path")
    def tree(self, obj: Subtopic):
        return format_html(
            '<span style="padding-left:{}em">{}</span> <span class="quiet">{}</span>',
            obj.depth * 1.5,
            obj.name,
            obj.path,
        )

    @admin.display(description="entries")
    def entry_count(self, obj: Subtopic) -> int:
        return obj.entries.count()

    def has_change_permission(self, request, obj=None):
        # Subtopics are paths: entries move between them, the nodes themselves are not edited.
        return obj is None and super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return False

    def save_model(self, request, obj, form, change):
        node = subtopic_ensure(
            actor=actor_for(request),
            project=form.cleaned_data["project"].pk,
            path=form.cleaned_data["path"],
        )
        obj.pk = node.pk
        obj.refresh_from_db()


# --- Entries ------------------------------------------------------------------------------------


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


@admin.register(Entry)
class EntryAdmin(ScopedAdminMixin, SimpleHistoryAdmin):
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
    readonly_fields = (
        "short_id",
        "version",
        "rendered",
        "generated_by",
        "created_by",
        "updated_by",
        "verified_by",
        "verified_at",
        "supersedes",
        "superseded_by",
        "source_list",
        "created_at",
        "updated_at",
    )
    fieldsets = (
        (None, {"fields": ("project", "subtopic_path", "title", "body", "reason")}),
        ("Metadata", {"fields": ("kind", "tags_text", "status", "searchable", "metadata")}),
        (
            "Provenance",
            {
                "classes": ("collapse",),
                "fields": (
                    "short_id",
                    "version",
                    "generated_by",
                    "created_by",
                    "updated_by",
                    "verified_by",
                    "verified_at",
                    "supersedes",
                    "superseded_by",
                    "source_list",
                    "created_at",
                    "updated_at",
                ),
            },
        ),
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

    def save_model(self, request, obj, form, change):
        data = form.cleaned_data
        actor = actor_for(request)
        reason = data.get("reason") or ("edited in the admin" if change else "created in the admin")
        if not change:
            result = entry_upsert(
                actor=actor,
                project=data["project"].pk,
                subtopic=data["subtopic_path"],
                title=data["title"],
                body=data["body"],
                kind=data["kind"],
                tags=data["tags_text"],
                status=data["status"],
                searchable=data["searchable"],
                metadata=data["metadata"],
                reason=reason,
            )
            entry = result.entry
            if result.outcome != "created":
                messages.warning(
                    request,
                    f"An entry with this title already existed there; it was {result.outcome}.",
                )
        else:
            entry = entry_update(
                actor=actor,
                entry_id=obj.pk,
                expected_version=data.get("version"),
                title=data["title"],
                body=data["body"],
                kind=data["kind"],
                tags=data["tags_text"],
                status=data["status"],
                searchable=data["searchable"],
                metadata=data["metadata"],
                reason=reason,
            )
            current_path = entry.subtopic.path if entry.subtopic_id else ""
            moved_project = data["project"].pk != entry.project_id
            if moved_project or (data["subtopic_path"] or "").strip() != current_path:
                entry = entry_move(
                    actor=actor,
                    entry_id=entry.pk,
                    project=data["project"].pk,
                    subtopic=data["subtopic_path"],
                    reason=reason,
                )
        obj.pk = entry.pk
        obj.refresh_from_db()

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except KnowledgeError as exc:
            # The service refused (conflict, duplicate title, permission): nothing was written.
            _report(request, exc)
            return redirect(request.get_full_path())

    def delete_model(self, request, obj):
        entry_delete(
            actor=actor_for(request),
            entry_id=obj.pk,
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


@admin.register(Source)
class SourceAdmin(ScopedAdminMixin, admin.ModelAdmin):
    list_display = ("kind", "external_id", "title", "project", "created_at")
    list_filter = (("project", admin.RelatedOnlyFieldListFilter), "kind")
    search_fields = ("external_id", "title", "url")

    def has_add_permission(self, request):
        return False  # sources are recorded with the entries made from them

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


import knowledge.admin_tokens  # noqa: E402, F401  (registers the API token admin)
