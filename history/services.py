"""History writes. A revert is a new revision made through knowledge.services, never a rewrite."""

from __future__ import annotations

from history.selectors import revision_for
from knowledge.actors import Actor
from knowledge.errors import ValidationFailed
from knowledge.models import Entry
from knowledge.selectors import entry_get
from knowledge.services import entry_restore

RESTORED_FIELDS = ("title", "body", "kind", "tags", "status", "searchable", "metadata")


def entry_revert(
    *,
    actor: Actor,
    entry_id: int | str,
    to_version: int,
    expected_version: int | None = None,
    reason: str = "",
) -> Entry:
    """Make the entry read as it did at `to_version` again (text, fields and place), as one new
    revision. Raises EntryConflict on a stale expected_version, ValidationFailed when the entry
    already reads like that version."""
    entry = entry_get(actor, entry_id)
    row = revision_for(actor, entry, to_version)  # revisions never change: no lock needed
    values = {field: getattr(row, field) for field in RESTORED_FIELDS}
    values["tags"], values["metadata"] = list(row.tags or []), row.metadata or {}
    entry, changed = entry_restore(
        actor=actor,
        entry_id=entry.pk,
        values=values,
        project_id=row.project_id,
        subtopic=row.subtopic.path if row.subtopic_id else None,
        expected_version=expected_version,
        reason=reason or f"revert to version {to_version}",
    )
    if not changed:
        raise ValidationFailed(
            f"Entry {entry.short_id} already reads as version {to_version}; nothing to revert.",
            entry=entry.short_id,
        )
    return entry
