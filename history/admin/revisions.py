"""Revision history in the admin: who/when/why/commit, a diff between any two revisions and a
revert that goes through knowledge.services (a new revision, never a rewrite).

History builds on knowledge, so the knowledge admin knows nothing of these pages: history adds
them to the Entry admin the site registered (add_revisions), under the same URLs
(`admin:knowledge_entry_revision_diff`, `…_revision_revert`). A site of its own (a test's) gets
them with `site.register(Entry, with_revisions(EntryAdmin))`.
"""

from __future__ import annotations

from django.contrib import admin, messages
from django.contrib.admin.exceptions import NotRegistered
from django.contrib.admin.utils import unquote
from django.core.exceptions import ImproperlyConfigured, PermissionDenied
from django.http import Http404, HttpResponseNotAllowed, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.safestring import mark_safe

from history import selectors
from knowledge.errors import KnowledgeError, NotFound
from knowledge.selectors import entry_not_found, entry_revision
from knowledge.services import entry_revert, entry_undelete
from ops.timing import timed


def _line_class(line: str) -> str:
    if line.startswith("@@"):
        return "hunk"
    return {"+": "add", "-": "del"}.get(line[:1], "")


class RevisionAdminMixin:
    object_history_template = "history/admin/revisions/object_history.html"
    history_list_per_page = 50

    def get_urls(self):
        info = self.model._meta.app_label, self.model._meta.model_name
        view = self.admin_site.admin_view
        return [
            path(
                "<path:object_id>/history/diff/",
                view(self.revision_diff_view),
                name="{}_{}_revision_diff".format(*info),
            ),
            path(
                "<path:object_id>/history/undelete/",
                view(self.revision_undelete_view),
                name="{}_{}_revision_undelete".format(*info),
            ),
            path(
                "<path:object_id>/history/revert/<int:version>/",
                view(self.revision_revert_view),
                name="{}_{}_revision_revert".format(*info),
            ),
            *super().get_urls(),
        ]

    def _url(self, name: str, *args) -> str:
        info = self.model._meta.app_label, self.model._meta.model_name
        return reverse(f"admin:{info[0]}_{info[1]}_{name}", args=args)

    def _entry(self, request, object_id):
        ref = unquote(object_id)
        if "\x00" in ref:  # no entry is named with one, and no query may hold it
            raise Http404("An entry reference holds no NUL byte (\\x00).")
        try:
            return selectors.entry_get(request.actor, ref)
        except KnowledgeError as exc:  # not found, or refused by the rules (too long)
            raise Http404(exc.message) from exc

    def history_view(self, request, object_id, extra_context=None):
        try:
            entry = self._entry(request, object_id)
        except Http404:
            if "\x00" in unquote(object_id):
                raise
            gone = entry_not_found(request.actor, unquote(object_id))
            if not gone.data.get("deleted"):
                raise
            return self._deleted_view(request, gone)
        rows = selectors.entry_revisions(request.actor, entry, limit=500)
        extra = {
            "revisions": [
                {
                    **selectors.revision_summary(r),
                    "diff_url": self._url("revision_diff", entry.pk)
                    + f"?from={max(r.version - 1, 1)}&to={r.version}",
                    "revert_url": self._url("revision_revert", entry.pk, r.version),
                    "current": r.version == entry.version,
                    "deleted": r.history_type == "-",
                }
                for r in rows
            ],
            "diff_url": self._url("revision_diff", entry.pk),
            "can_revert": self.has_change_permission(request, entry),
        }
        return super().history_view(request, object_id, {**extra, **(extra_context or {})})

    def _deleted_view(self, request, gone: NotFound):
        """A deleted entry's history page: its last text and an action that brings it back."""
        deleted = gone.data["deleted"]
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": f"{deleted['title']} (deleted)",
            "message": gone.message,
            "deleted": deleted,
            "undelete_url": self._url("revision_undelete", deleted["id"]),
            "can_undelete": self.has_change_permission(request),
        }
        return TemplateResponse(request, "history/admin/revisions/deleted.html", context)

    def revision_undelete_view(self, request, object_id):
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        if not self.has_change_permission(request):
            raise PermissionDenied
        try:
            with timed("admin", "entry.undelete"):
                entry = entry_undelete(
                    actor=request.actor,
                    ref=unquote(object_id),
                    reason=request.POST.get("reason", ""),
                ).entry
        except KnowledgeError as exc:
            messages.error(request, exc.message)
            return HttpResponseRedirect(self._url("history", unquote(object_id)))
        messages.success(request, f"Brought back as version {entry.version}, with its history.")
        return HttpResponseRedirect(self._url("history", entry.pk))

    def revision_diff_view(self, request, object_id):
        entry = self._entry(request, object_id)
        if not self.has_view_or_change_permission(request, entry):
            raise PermissionDenied
        try:
            old_v = int(request.GET.get("from") or max(entry.version - 1, 1))
            new_v = int(request.GET.get("to") or entry.version)
            old_row = entry_revision(request.actor, entry, old_v)
            new_row = entry_revision(request.actor, entry, new_v)
        except (ValueError, NotFound) as exc:
            messages.error(request, getattr(exc, "message", "Pick two versions to compare."))
            return HttpResponseRedirect(self._url("history", entry.pk))
        actor = request.actor
        old, new = selectors.revision_text(old_row, actor), selectors.revision_text(new_row, actor)
        labels = {"old_label": f"version {old_v}", "new_label": f"version {new_v}"}
        mode = "unified" if request.GET.get("mode") == "unified" else "side"
        side = selectors.side_by_side_html(old, new, **labels) if mode == "side" else None
        if mode == "side" and side is None:
            mode = "unified"
            messages.info(request, "This change is too large to show side by side; unified diff.")
        lines = selectors.unified_diff(old, new, **labels).splitlines()
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "object": entry,
            "title": f"{entry.title}: version {old_v} → {new_v}",
            "old": selectors.revision_summary(old_row),
            "new": selectors.revision_summary(new_row),
            "mode": mode,
            "unified": [(_line_class(ln), ln) for ln in lines[2:]],
            # HtmlDiff escapes the text itself.
            "side": mark_safe(side or ""),
            "same": old == new,
            "history_url": self._url("history", entry.pk),
            "revert_url": self._url("revision_revert", entry.pk, old_v),
            "can_revert": self.has_change_permission(request, entry) and old_v != entry.version,
            "versions": sorted(
                {r.version for r in selectors.entry_revisions(request.actor, entry, limit=500)},
                reverse=True,
            ),
        }
        return TemplateResponse(request, "history/admin/revisions/revision_diff.html", context)

    def revision_revert_view(self, request, object_id, version):
        entry = self._entry(request, object_id)
        if not self.has_change_permission(request, entry):
            raise PermissionDenied
        if request.method == "POST":
            try:
                with timed("admin", "entry.revert"):
                    entry = entry_revert(
                        actor=request.actor,
                        ref=entry.pk,
                        to_version=version,
                        expected_version=int(request.POST.get("expected_version") or 0) or None,
                        reason=request.POST.get("reason", ""),
                    ).entry
            except KnowledgeError as exc:
                messages.error(request, exc.message)
            else:
                messages.success(
                    request, f"Reverted to version {version}: this is now version {entry.version}."
                )
            return HttpResponseRedirect(self._url("history", entry.pk))
        try:
            row = entry_revision(request.actor, entry, version)
        except NotFound as exc:
            messages.error(request, exc.message)
            return HttpResponseRedirect(self._url("history", entry.pk))
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "object": entry,
            "title": f"Revert {entry.title} to version {version}?",
            "version": version,
            "revision": selectors.revision_summary(row),
            "diff": selectors.unified_diff(
                selectors.revision_text(
                    entry_revision(request.actor, entry, entry.version),
                    request.actor,
                ),
                selectors.revision_text(row, request.actor),
                old_label=f"now (version {entry.version})",
                new_label=f"after revert (as version {version})",
            ),
            "history_url": self._url("history", entry.pk),
        }
        return TemplateResponse(request, "history/admin/revisions/revision_revert.html", context)


def with_revisions(admin_class: type[admin.ModelAdmin]) -> type[admin.ModelAdmin]:
    """`admin_class` with the revision pages (it must be a SimpleHistoryAdmin)."""
    return type(admin_class.__name__, (RevisionAdminMixin, admin_class), {"__module__": __name__})


def add_revisions(site: admin.AdminSite, model) -> None:
    """Give the admin `site` registered for `model` the revision pages."""
    try:
        registered = type(site.get_model_admin(model))
    except NotRegistered as exc:
        raise ImproperlyConfigured(
            f"history's admin adds the revision pages to the {model.__name__} admin, which the "
            "knowledge app registers: list 'knowledge' before 'history' in INSTALLED_APPS."
        ) from exc
    site.unregister(model)
    site.register(model, with_revisions(registered))
