"""Projects and their members in the admin. Settings and membership need the maintainer role."""

from __future__ import annotations

from django import forms
from django.contrib import admin
from simple_history.admin import SimpleHistoryAdmin
from unfold.admin import ModelAdmin, TabularInline

from knowledge.admin.common import ScopedAdminMixin, ServiceWritesMixin
from knowledge.admin.tree import mark_open, tree_links
from knowledge.models import Membership, Project
from knowledge.note_types.reads import SHAREABLE
from knowledge.reads.trees import entry_forest
from knowledge.selectors import maintained_projects, visible_projects
from knowledge.services import (
    MembershipChange,
    ProjectFields,
    project_create,
    project_update,
)


def _maintains(request, project: Project | None) -> bool:
    if project is None:
        return True
    return maintained_projects(request.actor).filter(pk=project.pk).exists()


class MembershipForm(forms.ModelForm):
    class Meta:
        model = Membership
        fields = ("user", "group", "role")

    def validate_constraints(self, exclude=None):
        """The membership service replaces an existing role instead of failing on uniqueness."""

    def validate_unique(self):
        pass


class ProjectForm(forms.ModelForm):
    """Taken slugs and names are refused by project_create, in the words every surface uses
    ("not available"); Django's own checks would say "already exists" instead.

    schema_mode is on the change form only (a new project starts with off), and optional: a
    save that does not send it (an older page, a script) keeps the stored mode instead of
    being refused as "required"."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if "schema_mode" in self.fields:
            self.fields["schema_mode"].required = False

    def clean_schema_mode(self):
        return self.cleaned_data.get("schema_mode") or self.instance.schema_mode

    def validate_constraints(self, exclude=None):
        pass

    def validate_unique(self):
        pass


class MembershipInline(TabularInline):
    """Who may read, edit and maintain this project. Saved with the project's settings in
    one service call."""

    model = Membership
    form = MembershipForm
    extra = 1
    verbose_name = "member"
    verbose_name_plural = "members (users or groups)"

    # The maintainer role, not Django's model permissions, decides who manages members.
    def has_view_permission(self, request, obj=None):
        return obj is not None

    def has_add_permission(self, request, obj=None):
        return obj is not None and _maintains(request, obj)

    def has_change_permission(self, request, obj=None):
        return obj is not None and _maintains(request, obj)

    def has_delete_permission(self, request, obj=None):
        return obj is not None and _maintains(request, obj)


@admin.register(Project)
class ProjectAdmin(ServiceWritesMixin, ScopedAdminMixin, SimpleHistoryAdmin, ModelAdmin):
    project_field = "pk"
    form = ProjectForm
    list_display = ("slug", "name", "sensitivity", "archived", "updated_at")
    list_filter = ("sensitivity", "archived")
    search_fields = ("slug", "name", "description")
    readonly_fields = ("created_at", "updated_at")
    inlines = [MembershipInline]
    change_form_template = "knowledge/admin/projects/change_form.html"

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None and obj.pk:
            forest = entry_forest(request.actor, project=obj.pk)
            mark_open(forest, obj.slug)
            tree_links(forest)
            context["cairn_tree"] = forest
        return super().render_change_form(request, context, add, change, form_url, obj)

    def get_exclude(self, request, obj=None):
        new = not (obj is not None and obj.pk)
        return ("schema_mode", "schemas_shared", "schema_library") if new else ()

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        field = super().formfield_for_foreignkey(db_field, request, **kwargs)
        if db_field.name == "schema_library":  # only libraries the person may read
            field.queryset = visible_projects(request.actor).filter(
                schemas_shared=True, sensitivity__in=SHAREABLE
            )
            field.required = False
        return field

    def get_readonly_fields(self, request, obj=None):
        # The slug names files in the git mirror and paths agents quote: fixed once created.
        return (*self.readonly_fields, "slug") if obj else self.readonly_fields

    def has_change_permission(self, request, obj=None):
        return super().has_change_permission(request, obj) and _maintains(request, obj)

    def has_delete_permission(self, request, obj=None):
        # Projects are archived, not deleted: deleting would drop every entry's history.
        return False

    def save_model(self, request, obj, form, change):
        if change:
            return  # saved with its members in save_related: one service call for the page
        data = form.cleaned_data
        created = project_create(
            actor=request.actor,
            slug=data["slug"],
            reason="created in the admin",
            fields=ProjectFields(
                name=data["name"], description=data["description"], sensitivity=data["sensitivity"]
            ),
        )
        obj.pk = created.pk
        obj.refresh_from_db()

    def save_related(self, request, form, formsets, change):
        if not change:  # a new project has no member rows on the page yet
            return super().save_related(request, form, formsets, change)
        # The settings and every member row in one call: a refusal of either saves neither, and
        # swapping the last maintainer is one change, not two.
        data = form.cleaned_data
        project_update(
            actor=request.actor,
            project=form.instance.pk,
            reason="edited in the admin",
            memberships=[c for fs in formsets if fs.model is Membership for c in _changes(fs)],
            fields=ProjectFields(
                name=data["name"],
                description=data["description"],
                sensitivity=data["sensitivity"],
                archived=data["archived"],
                schema_mode=data.get("schema_mode") or None,
                schemas_shared=data.get("schemas_shared"),
                schema_library=data["schema_library"].slug if data.get("schema_library") else "",
            ),
        )
        form.instance.refresh_from_db()
        for formset in formsets:
            formset.new_objects, formset.changed_objects, formset.deleted_objects = [], [], []


def _changes(formset) -> list[MembershipChange]:
    """The member rows of the page as changes: a removed or re-pointed row revokes the stored
    membership, a new or edited one grants its role."""
    deleted = set(formset.deleted_forms)
    changes = []
    for member_form in formset.forms:
        data = getattr(member_form, "cleaned_data", None) or {}
        old = data.get("id")  # the stored membership (the form's instance may be emptied)
        who = {"user": data.get("user"), "group": data.get("group")}
        if old is not None and (member_form in deleted or (old.user, old.group) != (
            who["user"], who["group"]
        )):  # fmt: skip
            changes.append(MembershipChange(user=old.user, group=old.group))
        if data and member_form not in deleted and member_form.has_changed():
            changes.append(MembershipChange(**who, role=data["role"]))
    return changes
