"""History writes. A revert is a new revision made through knowledge.services, never a rewrite."""

from __future__ import annotations

import datetime as dt

from django.contrib.auth import get_user_model
from django.db import transaction

from history.selectors import revision_for
from knowledge.actors import Actor
from knowledge.errors import ValidationFailed
from knowledge.models import Entry
from knowledge.selectors import entry_get
from knowledge.services import UpsertResult, entry_move, entry_update, entry_upsert
from knowledge.services.entries import _entry_for_write


@transaction.atomic
def entry_revert(
    *,
    actor: Actor,
    entry_id: int | str,
    to_version: int,
    expected_version: int | None = None,
    reason: str = "",
) -> Entry:
    """Make the entry look as it did at `to_version` again, as a new revision (or two: a move
    back to the old subtopic is recorded separately). Raises EntryConflict on a stale
    expected_version, ValidationFailed when the entry already looks like that version."""
    entry = entry_get(actor, entry_id)
    row = revision_for(actor, entry, to_version)
    reason = reason or f"revert to version {to_version}"
    moved = row.project_id != entry.project_id or row.subtopic_id != entry.subtopic_id
    if moved:
        entry = entry_move(
            actor=actor,
            entry_id=entry.pk,
            project=row.project_id,
            subtopic=row.subtopic.path if row.subtopic_id else None,
            expected_version=expected_version,
            reason=reason,
        )
        expected_version = entry.version
    before = entry.version
    entry = entry_update(
        actor=actor,
        entry_id=entry.pk,
        expected_version=expected_version,
        title=row.title,
        body=row.body,
        kind=row.kind,
        tags=list(row.tags or []),
        status=row.status,
        searchable=row.searchable,
        metadata=row.metadata or {},
        reason=reason,
    )
    if not moved and entry.version == before:
        raise ValidationFailed(
            f"Entry {entry.short_id} already reads as version {to_version}; nothing to revert.",
            entry=entry.short_id,
        )
    return entry


def _parse_time(value) -> dt.datetime | None:
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
    if isinstance(value, str) and value:
        try:
            parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)
    return None


@transaction.atomic
def entry_import(*, actor: Actor, provenance: dict | None = None, **fields: object) -> UpsertResult:
    """entry_upsert, and for a newly created entry restore what a Cairn export recorded about
    it (short id, version, created/updated, generated_by, verification), on the entry and on
    the revision that created it, so an export of the import reads the same."""
    result = entry_upsert(actor=actor, **fields)
    if result.outcome != "created" or not provenance:
        return result
    entry = result.entry
    changes: dict[str, object] = {}
    short_id = str(provenance.get("id") or "").strip().lower()
    if short_id and not Entry.objects.filter(short_id=short_id).exists():
        changes["short_id"] = short_id
    if isinstance(provenance.get("version"), int) and provenance["version"] > 0:
        changes["version"] = provenance["version"]
    for key, field in (("created", "created_at"), ("updated", "updated_at")):
        if when := _parse_time(provenance.get(key)):
            changes[field] = when
    if provenance.get("generated_by"):
        changes["generated_by"] = str(provenance["generated_by"])[:120]
    if (when := _parse_time(provenance.get("verified_at"))) and provenance.get("verified_by"):
        user = get_user_model().objects.filter(username=provenance["verified_by"]).first()
        if user is not None:
            changes["verified_at"], changes["verified_by"] = when, user
    if not changes:
        return result
    Entry.objects.filter(pk=entry.pk).update(**changes)
    latest = Entry.history.filter(id=entry.pk).order_by("-history_id").values("history_id")[:1]
    Entry.history.filter(history_id__in=latest).update(**changes)
    entry.refresh_from_db()
    return UpsertResult(entry, "created")


@transaction.atomic
def entry_link_supersession(
    *, actor: Actor, entry_id: int, supersedes: str = "", superseded_by: str = ""
) -> Entry:
    """Restore supersedes/superseded_by links (by short id) on an entry an import just created.
    Unknown short ids are ignored; the links live on the entry and its latest revision."""
    entry = _entry_for_write(actor, entry_id)
    changes = {}
    for field, ref in (("supersedes", supersedes), ("superseded_by", superseded_by)):
        if ref:
            target = Entry.objects.filter(short_id=str(ref).lower()).first()
            if target is not None and target.pk != entry.pk:
                changes[f"{field}_id"] = target.pk
    if changes:
        Entry.objects.filter(pk=entry.pk).update(**changes)
        latest = Entry.history.filter(id=entry.pk).order_by("-history_id").values("history_id")[:1]
        Entry.history.filter(history_id__in=latest).update(**changes)
        entry.refresh_from_db()
    return entry
