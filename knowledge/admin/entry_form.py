"""The entry form of the admin: subtopic as a path, tags as text, a reason, and the version the
form was opened at. A save that conflicts with a newer version re-opens the form with the
person's text and a diff against that version (and the next save is theirs to make)."""

from __future__ import annotations

from django import forms
from django.urls import reverse

from knowledge import diffs
from knowledge.admin.common import MarkdownEditor, themed
from knowledge.admin.metadata import MetadataField, schema_fields
from knowledge.errors import ValidationFailed
from knowledge.models import Entry, Project
from knowledge.note_types.lookup import project_schema
from knowledge.paths import normalize_path


def _line_class(line: str) -> str:
    if line.startswith(("+++", "---")):
        return "file"
    if line.startswith("@@"):
        return "hunk"
    return {"+": "add", "-": "del"}.get(line[:1], "")


def _as_text(title: str, body: str) -> str:
    return f"# {title}\n\n{body or ''}".replace("\r\n", "\n")


class EntryForm(forms.ModelForm):
    subtopic_path = forms.CharField(
        required=False,
        label="Subtopic",
        help_text="Path such as customer-x/2026-08/incident; created if missing. "
        "Empty = project root.",
    )
    tags_text = forms.CharField(required=False, label="Tags", help_text="Comma-separated.")
    metadata = MetadataField(required=False, label="Metadata")
    reason = forms.CharField(
        required=False, help_text="Why this change? Recorded in the history and the git mirror."
    )

    # The service's refusal of the last save, shown on its field (see EntryAdmin.add_refused).
    refusal: tuple[str, str] | None = None
    # Who opens the form (set by EntryAdmin.get_form): whose schemas it may show.
    actor = None
    # A strict refusal's misfits, field name → message: marked on their metadata inputs.
    misfits: dict[str, str] | None = None
    # Set when the save conflicted: {"opened": v, "current": v, "lines": [(class, line)], …}.
    conflict: dict | None = None

    class Meta:
        model = Entry
        fields = ("project", "title", "kind", "status", "searchable", "body", "metadata")
        widgets = {"body": MarkdownEditor()}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        themed(self)
        widget = self.fields["metadata"].widget
        widget.schema = self._schema()
        widget.misfits = dict(self.misfits or {})
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

    def _schema(self):
        """The note type's schema for the kind and project on the form (as sent, else as
        stored), as the person may read it (project_schema decides: a project id posted by
        someone who cannot see that project gives none): its fields become the metadata's
        inputs."""
        kind, project = self.instance.kind, self.instance.project_id
        if self.is_bound:
            kind, project = self.data.get("kind") or kind, self.data.get("project") or project
        if not kind or not str(project or "").isdigit() or len(str(project)) > 18:
            return None
        project = Project.objects.filter(pk=int(project)).first()
        if project is None or self.actor is None:
            return None
        return project_schema(self.actor, project, kind)

    def validate_constraints(self, exclude=None):
        """Identity is checked by the service against the subtopic the path resolves to."""

    def clean(self):
        data = super().clean()
        if self.refusal:
            self.add_error(*self.refusal)
        marked = {f.key for f in schema_fields(self.fields["metadata"].widget.schema)}
        if self.misfits and marked & set(self.misfits):
            names = ", ".join(sorted(marked & set(self.misfits)))
            self.add_error("metadata", f"Does not fit the schema: {names} (marked below).")
        try:
            data["subtopic_path"] = normalize_path(data.get("subtopic_path"))
        except ValidationFailed as exc:
            self.add_error("subtopic_path", exc.message)
        opened = data.get("version")
        if self.instance.pk and opened is not None:
            current = (
                Entry.objects.filter(pk=self.instance.pk).values("version", "title", "body").first()
            )
            if current and current["version"] != opened:
                self._keep_conflict(data, opened, current)
        return data

    def _keep_conflict(self, data: dict, opened: int, current: dict) -> None:
        """Refuse this save, keep the person's text on the form, show how it differs from the
        newer version, and let the next save (after they looked) replace that version."""
        now = current["version"]
        diff = diffs.unified_diff(
            _as_text(current["title"], current["body"]).splitlines(),
            _as_text(data.get("title") or "", data.get("body") or "").splitlines(),
            fromfile=f"version {now} (saved meanwhile)",
            tofile="your text",
        )
        changes = reverse("admin:knowledge_entry_revision_diff", args=[self.instance.pk])
        self.conflict = {
            "opened": opened,
            "current": now,
            "lines": [(_line_class(line), line) for line in diff],
            "changes_url": f"{changes}?from={opened}&to={now}&mode=unified",
        }
        self.data = self.data.copy()
        self.data["version"] = str(now)  # the next save is a decision made with the diff seen
        raise forms.ValidationError(
            f"Someone changed this entry since you opened it (now version {now}, you edited "
            f"version {opened}). Your text is kept below, with how it differs from version "
            f"{now}. Merge what you need and save again to make your text version {now + 1}."
        )
