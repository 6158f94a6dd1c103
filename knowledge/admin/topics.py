"""Subtopics (the topic tree) and sources in the admin."""

from __future__ import annotations

from django import forms
from django.contrib import admin
from django.utils.html import format_html
from simple_history.admin import SimpleHistoryAdmin

from knowledge.admin.common import ScopedAdminMixin, ServiceWritesMixin, actor_for
from knowledge.models import Source, Subtopic
from knowledge.services import subtopic_ensure


class SubtopicForm(forms.ModelForm):
    path = forms.CharField(
        help_text="e.g. customer-x/2026-08/incident or Customer X > 2026-08 > Incident; "
        "missing levels are created."
    )

    class Meta:
        model = Subtopic
        fields = ("project", "path")


@admin.register(Subtopic)
class SubtopicAdmin(ServiceWritesMixin, ScopedAdminMixin, SimpleHistoryAdmin):
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
