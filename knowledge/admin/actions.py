"""Bulk work on entries with a reason: move to a subtopic, add or remove tags, set the status,
verify. Each asks for the reason on an intermediate page, then calls one service per entry
(one revision each, the reason recorded) and reports what was done and what was refused.

The intermediate page carries the version of each entry as it was listed: an entry changed
meanwhile is refused as a conflict, not overwritten.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.template.response import TemplateResponse
from django.utils.html import format_html, format_html_join

from knowledge import limits
from knowledge.actors import Actor
from knowledge.admin.common import themed
from knowledge.errors import KnowledgeError, ValidationFailed
from knowledge.models import Entry, EntryStatus
from knowledge.paths import normalize_path
from knowledge.reads.moves import move_notice
from knowledge.selectors import writable_projects
from knowledge.services import (
    WriteResult,
    entry_move,
    entry_retag,
    entry_set_status,
    entry_verify,
)
from ops.timing import timed

MAX_BULK = 500  # entries per action: one revision each, in one request
MAX_REFUSALS_SHOWN = 20


class ReasonForm(forms.Form):
    reason = forms.CharField(
        max_length=limits.REASON,
        help_text="Why? Recorded in each entry's history and the git mirror.",
        widget=forms.TextInput(attrs={"size": 60, "autofocus": True}),
    )

    def __init__(self, *args, actor: Actor, **kwargs):
        super().__init__(*args, **kwargs)
        self.actor = actor
        themed(self)


class MoveForm(ReasonForm):
    project = forms.ModelChoiceField(
        queryset=None,
        required=False,
        empty_label="(each entry's own project)",
        help_text="Another project to move them to, if any.",
    )
    subtopic = forms.CharField(
        required=False,
        max_length=limits.PATH,
        label="Subtopic",
        help_text="Path such as ops/archive or Ops > Archive; created if missing. "
        "Empty = the project root.",
    )
    understood = forms.BooleanField(
        required=False,
        label="I understand who will read them",
        help_text="Asked when they change project: the page says who reads them there.",
    )
    field_order = ("project", "subtopic", "reason", "understood")

    def __init__(self, *args, actor: Actor, **kwargs):
        super().__init__(*args, actor=actor, **kwargs)
        self.fields["project"].queryset = writable_projects(actor).order_by("slug")
        self.entries: list[Entry] = []  # set by run_bulk: what the move says is about them

    def clean_subtopic(self):
        try:
            return normalize_path(self.cleaned_data["subtopic"])
        except ValidationFailed as exc:
            raise forms.ValidationError(exc.message) from exc

    def clean(self):
        data = super().clean()
        target = data.get("project")
        if target and any(e.project_id != target.pk for e in self.entries):
            notice = move_notice(self.actor, [e.project for e in self.entries], target)
            if not data.get("understood"):
                raise forms.ValidationError(f"{notice} Tick “{UNDERSTOOD}” and move again.")
        return data


UNDERSTOOD = "I understand who will read them"


class TagsForm(ReasonForm):
    add = forms.CharField(required=False, max_length=limits.TAGS, help_text="Comma-separated.")
    remove = forms.CharField(required=False, max_length=limits.TAGS, help_text="Comma-separated.")
    field_order = ("add", "remove", "reason")

    def clean(self):
        data = super().clean()
        if not (data.get("add") or "").strip(", ") and not (data.get("remove") or "").strip(", "):
            raise forms.ValidationError("Name a tag to add or to remove.")
        return data


class StatusForm(ReasonForm):
    status = forms.ChoiceField(choices=EntryStatus.choices)
    field_order = ("status", "reason")


@dataclass(frozen=True)
class BulkAction:
    name: str
    title: str  # the intermediate page's heading
    done_words: str  # "Moved", "Verified", …
    form: type[ReasonForm]
    apply: Callable[..., WriteResult]


def _move(actor, entry, data, version):
    project = data.get("project")
    return entry_move(
        actor=actor,
        ref=entry.pk,
        subtopic=data["subtopic"] or None,
        project=project.pk if project else None,
        expected_version=version,
        reason=data["reason"],
    )


def _tags(actor, entry, data, version):
    return entry_retag(
        actor=actor,
        ref=entry.pk,
        add=data.get("add") or None,
        remove=data.get("remove") or None,
        expected_version=version,
        reason=data["reason"],
    )


def _status(actor, entry, data, version):
    return entry_set_status(
        actor=actor,
        ref=entry.pk,
        status=data["status"],
        expected_version=version,
        reason=data["reason"],
    )


def _verify(actor, entry, data, version):
    return entry_verify(actor=actor, ref=entry.pk, expected_version=version, reason=data["reason"])


ACTIONS = {
    a.name: a
    for a in (
        BulkAction("move_entries", "Move entries to a subtopic", "Moved", MoveForm, _move),
        BulkAction("tag_entries", "Add or remove tags", "Retagged", TagsForm, _tags),
        BulkAction("set_entries_status", "Set the status", "Set the status of", StatusForm,
                   _status),
        BulkAction("verify_entries", "Verify entries", "Verified", ReasonForm, _verify),
    )
}  # fmt: skip


def _versions(post) -> dict[int, int]:
    """The versions the intermediate page listed, by entry id."""
    versions = {}
    for key, value in post.items():
        if key.startswith("version_") and key[8:].isdigit() and value.isdigit():
            versions[int(key[8:])] = int(value)
    return versions


def run_bulk(modeladmin, request, queryset, name: str):
    """The intermediate page (first call) or the work and its report (the page's submit)."""
    action = ACTIONS[name]
    actor = request.actor
    entries = list(queryset.select_related("project", "subtopic").order_by("title")[: MAX_BULK + 1])
    if len(entries) > MAX_BULK:
        messages.error(
            request,
            f"Select at most {MAX_BULK} entries for one bulk change (filter the list first).",
        )
        return None
    form = action.form(request.POST if "apply" in request.POST else None, actor=actor)
    form.entries = entries
    if "apply" in request.POST and form.is_valid():
        versions = _versions(request.POST)
        done, refused = [], []
        with timed("admin", f"entry.{name}"):
            for entry in entries:
                try:
                    action.apply(actor, entry, form.cleaned_data, versions.get(entry.pk))
                except KnowledgeError as exc:
                    refused.append((entry, exc.message))
                else:
                    done.append(entry)
        _report(request, action, done, refused, form.cleaned_data["reason"])
        return None
    context = {
        **modeladmin.admin_site.each_context(request),
        "title": action.title,
        "opts": modeladmin.model._meta,
        "action": action,
        "form": form,
        "entries": entries,
        "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
        "select_across": request.POST.get("select_across", "0"),
        "media": modeladmin.media + form.media,
    }
    return TemplateResponse(request, "knowledge/admin/entries/bulk_action.html", context)


def _report(request, action: BulkAction, done, refused, reason: str) -> None:
    if done:
        names = format_html_join(", ", "{}", ((e.title,) for e in done[:MAX_REFUSALS_SHOWN]))
        more = f" and {len(done) - MAX_REFUSALS_SHOWN} more" if len(done) > 20 else ""
        messages.success(
            request,
            format_html(
                "{} {} {}, one revision each (reason: {}): {}{}.",
                action.done_words,
                len(done),
                "entry" if len(done) == 1 else "entries",
                reason,
                names,
                more,
            ),
        )
    for entry, why in refused[:MAX_REFUSALS_SHOWN]:
        messages.error(request, format_html("Not changed: {} ({}): {}", entry.title,
                                            entry.short_id, why))  # fmt: skip
    if len(refused) > MAX_REFUSALS_SHOWN:
        messages.error(request, f"… and {len(refused) - MAX_REFUSALS_SHOWN} more refused.")
    if not done and not refused:
        messages.info(request, "No entry was selected.")


class BulkActionsMixin:
    actions = ("move_entries", "tag_entries", "set_entries_status", "verify_entries")

    @admin.action(permissions=["change"], description="Move selected entries to a subtopic…")
    def move_entries(self, request, queryset):
        return run_bulk(self, request, queryset, "move_entries")

    @admin.action(permissions=["change"], description="Add or remove tags of selected entries…")
    def tag_entries(self, request, queryset):
        return run_bulk(self, request, queryset, "tag_entries")

    @admin.action(permissions=["change"], description="Set the status of selected entries…")
    def set_entries_status(self, request, queryset):
        return run_bulk(self, request, queryset, "set_entries_status")

    @admin.action(permissions=["change"], description="Verify selected entries (you checked them)…")
    def verify_entries(self, request, queryset):
        return run_bulk(self, request, queryset, "verify_entries")
