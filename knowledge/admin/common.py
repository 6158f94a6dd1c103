"""Shared pieces of Cairn's admin: scoping by project (as `request.actor`, set by
memory_site/actors.py), the Markdown editor."""

from __future__ import annotations

import contextlib

from django import forms
from django.contrib import messages
from django.contrib.admin.utils import unquote
from django.http import Http404, HttpRequest
from django.shortcuts import redirect
from django.utils.decorators import method_decorator
from django.views.decorators.csrf import csrf_protect
from unfold.widgets import (
    UnfoldAdminSelectWidget,
    UnfoldAdminTextareaWidget,
    UnfoldAdminTextInputWidget,
)

from knowledge.errors import EntryConflict, KnowledgeError, NotFound
from knowledge.models import Project
from knowledge.selectors import visible_projects, writable_projects
from ops.timing import content_size, timed


class MarkdownEditor(forms.Textarea):
    """A textarea that EasyMDE (vendored, no CDN) turns into an editor, beside a live preview
    rendered and sanitized by the server (knowledge/admin/editor.py)."""

    template_name = "knowledge/admin/widgets/markdown_editor.html"

    class Media:
        css = {
            "all": (
                "knowledge/vendor/font-awesome/css/font-awesome.min.css",
                "knowledge/vendor/easymde/easymde.min.css",
                "knowledge/admin/markdown.css",
                "knowledge/pygments.css",  # the preview's code blocks, as on the entry page
            )
        }
        js = ("knowledge/vendor/easymde/easymde.min.js", "knowledge/admin/markdown.js")

    def __init__(self, attrs=None):
        super().__init__(attrs={"class": "cairn-markdown", "rows": 24, **(attrs or {})})


def themed(form: forms.BaseForm) -> None:
    """Give a form's plain inputs the theme's widgets (the model admin does it only for model
    fields; Cairn's own fields and forms would come out as bare inputs)."""
    swaps = {
        forms.TextInput: UnfoldAdminTextInputWidget,
        forms.Select: UnfoldAdminSelectWidget,
        forms.Textarea: UnfoldAdminTextareaWidget,
    }
    for field in form.fields.values():
        theme = swaps.get(type(field.widget))
        if theme is None:
            continue
        widget = theme(attrs=field.widget.attrs)
        if hasattr(field.widget, "choices"):
            widget.choices = field.widget.choices
        field.widget = widget


class ScopedAdminMixin:
    """Every queryset and choice list is limited to the projects the user may see."""

    project_field = "project"

    def get_queryset(self, request):
        qs = super().get_queryset(request)
        return qs.filter(**{f"{self.project_field}__in": visible_projects(request.actor)})

    def get_history_queryset(self, request, history_manager, pk_name, object_id):
        # History outlives deletions, so scope it by the project recorded on each revision.
        qs = super().get_history_queryset(request, history_manager, pk_name, object_id)
        field = "id" if self.project_field == "pk" else f"{self.project_field}_id"
        return qs.filter(**{f"{field}__in": visible_projects(request.actor).values("pk")})

    def history_form_view(self, request, object_id, version_id, extra_context=None):
        history = self.model.history
        revisions = self.get_history_queryset(request, history, "id", unquote(object_id))
        if not revisions.filter(history_id=version_id).exists():
            raise Http404("No such revision.")
        return super().history_form_view(request, object_id, version_id, extra_context)

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.related_model is Project:
            kwargs["queryset"] = writable_projects(request.actor)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


def report(request: HttpRequest, exc: KnowledgeError) -> None:
    """Show a service's refusal with the next move a person has on this page."""
    hint = ""
    if isinstance(exc, EntryConflict):
        hint = " Copy your changes, reload the page, and apply them again."
    elif isinstance(exc, NotFound) and "project" in exc.data:
        hint = " The project list shows the projects you can see."
    messages.error(request, exc.message + hint)


class ServiceWritesMixin:
    """Admin pages whose saves go through the services.

    Django wraps the add/change and delete views in a transaction; each service opens its own
    durable one, which may not be nested, so these views run without the outer one (Django's
    own `_changeform_view` / `_delete_view`, minus the wrapper). A refusal by a service (a
    conflict, a duplicate title, a missing role) is shown on the page; it wrote nothing.
    """

    @method_decorator(csrf_protect)
    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        with _timed_save(request, self, "add" if object_id is None else "change") as timer:
            try:
                response = self._changeform_view(request, object_id, form_url, extra_context)
            except KnowledgeError as exc:
                timer and timer.failed(exc)
                report(request, exc)
                return redirect(request.get_full_path())
            if timer and response.status_code == 200:  # the form came back with its errors
                timer.outcome, timer.error = "refused", "invalid form"
            return response

    @method_decorator(csrf_protect)
    def delete_view(self, request, object_id, extra_context=None):
        with _timed_save(request, self, "delete") as timer:
            try:
                return self._delete_view(request, object_id, extra_context)
            except KnowledgeError as exc:
                timer and timer.failed(exc)
                report(request, exc)
                return redirect(request.get_full_path())


def _timed_save(request: HttpRequest, model_admin, action: str):
    """Time a save (a POST) as one admin operation, `entry.change`; a page view is not one."""
    if request.method != "POST":
        return contextlib.nullcontext(None)
    operation = f"{model_admin.opts.model_name}.{action}"
    return timed("admin", operation, content_bytes=content_size(request.POST))
