"""Subtopics (the topic tree) and sources in the admin."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.db.models import Count
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.http import urlencode
from simple_history.admin import SimpleHistoryAdmin
from unfold.admin import ModelAdmin

from knowledge import limits
from knowledge.admin.common import ScopedAdminMixin, ServiceWritesMixin, themed
from knowledge.errors import KnowledgeError
from knowledge.models import Source, Subtopic
from knowledge.paths import normalize_path
from knowledge.reads.moves import move_notice
from knowledge.selectors import writable_projects
from knowledge.services import subtopic_ensure, subtopic_move
from ops.timing import timed


class SubtopicMoveForm(forms.Form):
    project = forms.ModelChoiceField(queryset=None)
    path = forms.CharField(max_length=limits.PATH, label="Subtopic")
    to = forms.CharField(
        max_length=limits.PATH,
        label="New path",
        help_text="e.g. archive/2026/incident; the subtopics below it keep their place under it.",
    )
    to_project = forms.ModelChoiceField(
        queryset=None,
        required=False,
        label="To project",
        empty_label="(the same project)",
        help_text="Another project to move it to, with its entries: their sources come along, "
        "their old addresses keep leading to them. Out of a members-only project it needs "
        "that project's maintainer.",
    )
    reason = forms.CharField(
        max_length=limits.REASON, help_text="Recorded in each moved entry's history."
    )
    field_order = ("project", "path", "to_project", "to", "reason")

    def __init__(self, *args, actor, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["project"].queryset = writable_projects(actor).order_by("slug")
        self.fields["to_project"].queryset = writable_projects(actor).order_by("slug")
        themed(self)


class SubtopicForm(forms.ModelForm):
    path = forms.CharField(
        help_text="e.g. customer-x/2026-08/incident or Customer X > 2026-08 > Incident; "
        "missing levels are created."
    )

    class Meta:
        model = Subtopic
        fields = ("project", "path")


@admin.register(Subtopic)
class SubtopicAdmin(ServiceWritesMixin, ScopedAdminMixin, SimpleHistoryAdmin, ModelAdmin):
    form = SubtopicForm
    list_display = ("tree", "project", "entry_count")
    list_filter = (("project", admin.RelatedOnlyFieldListFilter),)
    search_fields = ("path", "name")
    ordering = ("project__slug", "path")
    list_select_related = ("project",)

    @admin.display(description="subtopic", ordering="path")
    def tree(self, obj: Subtopic):
        return format_html(
            '<span class="cairn-depth-{}">{}</span> <span class="quiet">{}</span>',
            min(obj.depth, 8),  # deeper nodes indent like depth 8 (cairn-admin.css)
            obj.name,
            obj.path,
        )

    def get_queryset(self, request):
        # The count in the same query: one per row would grow with the tree.
        return super().get_queryset(request).annotate(n_entries=Count("entries"))

    @admin.display(description="entries", ordering="n_entries")
    def entry_count(self, obj: Subtopic) -> int:
        return obj.n_entries

    def get_urls(self):
        move = path(
            "move/", self.admin_site.admin_view(self.move_view), name="knowledge_subtopic_move"
        )
        return [move, *super().get_urls()]

    def move_view(self, request):
        """Move a subtopic with its entries (one revision each, with the reason)."""
        actor = request.actor
        form = SubtopicMoveForm(
            request.POST if request.method == "POST" else None, actor=actor, initial=request.GET
        )
        if request.method == "POST" and form.is_valid():
            data = form.cleaned_data
            try:
                with timed("admin", "subtopic.move"):
                    dest = data.get("to_project") or data["project"]
                    moved = subtopic_move(
                        actor=actor,
                        project=data["project"].pk,
                        path=data["path"],
                        to=data["to"],
                        to_project=dest.pk,
                        reason=data["reason"],
                    )
            except KnowledgeError as exc:
                form.add_error(None, exc.message)
            else:
                notice = move_notice(actor, [data["project"]], dest)
                messages.success(
                    request,
                    f"Moved {data['path']} to {dest.slug}/{data['to']}: {moved} entries, one "
                    f"revision each. {notice}",
                )
                tree = f"{dest.slug}/{normalize_path(data['to'])}"
                url = reverse("admin:knowledge_entry_changelist")
                return HttpResponseRedirect(f"{url}?{urlencode({'tree': tree})}")
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": "Move a subtopic with its entries",
            "form": form,
        }
        return TemplateResponse(request, "knowledge/admin/subtopics/move.html", context)

    def has_change_permission(self, request, obj=None):
        # Subtopics are paths: entries move between them, the nodes themselves are not edited.
        return obj is None and super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return False

    def save_model(self, request, obj, form, change):
        node = subtopic_ensure(
            actor=request.actor,
            project=form.cleaned_data["project"].pk,
            path=form.cleaned_data["path"],
        )
        obj.pk = node.pk
        obj.refresh_from_db()


@admin.register(Source)
class SourceAdmin(ScopedAdminMixin, ModelAdmin):
    list_display = ("kind", "external_id", "title", "project", "created_at")
    list_filter = (("project", admin.RelatedOnlyFieldListFilter), "kind")
    search_fields = ("external_id", "title", "url")

    def has_add_permission(self, request):
        return False  # sources are recorded with the entries made from them

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
