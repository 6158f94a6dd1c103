"""Entry writes: create or upsert by identity, update with optimistic concurrency, move,
status, delete, and revert (back to a revision). Each composes the kernel's steps in one
durable transaction.
"""

from __future__ import annotations

from django.db import transaction

from knowledge.actors import Actor
from knowledge.errors import ValidationFailed
from knowledge.selectors import entry_revision, project_get
from knowledge.services import _kernel as k
from knowledge.services.fields import EntryFields
from knowledge.write_result import EntryBeforeWrite, WriteResult


@transaction.atomic(durable=True)
def entry_upsert(
    *,
    actor: Actor,
    project: str | int,
    subtopic: str | None = None,
    fields: EntryFields,
    sources: list[dict] | None = None,
    expected_version: int | None = None,
    reason: str = "",
) -> WriteResult:
    """Create or replace the entry identified by (project, subtopic, fields.title); the whole
    body is replaced. expected_version 0 = must not exist yet. Returns outcome "unchanged"
    (and writes no revision) when nothing would change."""
    return k.upsert_entry(
        actor,
        project=project,
        subtopic=subtopic,
        fields=fields,
        sources=sources,
        expected_version=expected_version,
        reason=reason,
    )


@transaction.atomic(durable=True)
def entry_create(
    *,
    actor: Actor,
    project: str | int,
    subtopic: str | None = None,
    fields: EntryFields,
    sources: list[dict] | None = None,
    reason: str = "",
) -> WriteResult:
    """Create the entry identified by (project, subtopic, fields.title); raises AlreadyExists
    (with field="title" and the existing entry's short id) instead of replacing one."""
    return k.upsert_entry(
        actor,
        project=project,
        subtopic=subtopic,
        fields=fields,
        sources=sources,
        reason=reason,
        create_only=True,
    )


@transaction.atomic(durable=True)
def entry_update(
    *,
    actor: Actor,
    ref: int | str,
    fields: EntryFields,
    project: str | int | None = None,
    subtopic: str | None = None,
    expected_version: int | None = None,
    reason: str = "",
) -> WriteResult:
    """Edit an entry (a field not given is kept; subtopic "" = the project root; a new project
    or subtopic moves it), as one revision. Raises EntryConflict when it changed since
    expected_version, unless it sets only fields the change since left alone: then it applies on
    the current version (`rebased`). Outcome "unchanged" (no new revision) when nothing changes;
    "updated" with the entry as the write found it, read under the lock, for the write's
    report."""
    entry = k.lock_entry(actor, ref)
    writes = {f for f in ("title", "kind", "tags", "status") if getattr(fields, f) is not None}
    if project is not None or subtopic is not None:
        writes.add("place")
    # Searchable and metadata are not compared: a write of them never counts as untouched.
    opaque = fields.searchable is not None or fields.metadata is not None
    untouched = not opaque and fields.body is None
    rebased = k.check_version(
        entry,
        expected_version,
        actor=actor,
        body=fields.body,
        writes=frozenset(writes) if untouched else None,
        update=_update_args(fields, project, subtopic) if untouched else None,
    )
    before = EntryBeforeWrite.of(entry)
    changed = k.apply_changes(entry, fields)
    moved = None
    if project is not None or subtopic is not None:
        target = entry.project
        if project is not None and str(project) != str(entry.project_id):
            target = project_get(actor, project, for_write=True)
        path = subtopic if subtopic is not None else entry.subtopic.path if entry.subtopic else ""
        node = k.ensure_path(actor=actor, project=target, path=path)
        moved = k.place_entry(actor, entry, project=target, subtopic=node)
    if not (changed or moved):
        return WriteResult(entry, "unchanged", rebased=rebased)
    saved = k.save_entry(
        entry,
        actor,
        reason or moved or f"update {', '.join(sorted(changed))}",
        moved=moved is not None,
    )
    return WriteResult(entry, "updated", before, saved.facts, saved.schema, rebased=rebased)


def _update_args(fields: EntryFields, project, subtopic) -> dict:
    """What an update's caller passed, by entry_update's names: sent back with its refusal."""
    place = {"subtopic": subtopic, "project": project}
    return fields.given() | {name: value for name, value in place.items() if value is not None}


@transaction.atomic(durable=True)
def entry_move(
    *,
    actor: Actor,
    ref: int | str,
    subtopic: str | None,
    project: str | int | None = None,
    expected_version: int | None = None,
    reason: str = "",
) -> WriteResult:
    """Move an entry to another subtopic (and optionally another project); outcome
    "unchanged" when it is there already. A stale expected_version whose changes since left
    the place alone applies on the current version (`rebased`)."""
    entry = k.lock_entry(actor, ref)
    rebased = k.check_version(entry, expected_version, actor=actor, writes=frozenset({"place"}))
    before = EntryBeforeWrite.of(entry)
    target = project_get(actor, project, for_write=True) if project is not None else entry.project
    node = k.ensure_path(actor=actor, project=target, path=subtopic)
    moved = k.place_entry(actor, entry, project=target, subtopic=node)
    if not moved:
        return WriteResult(entry, "unchanged", rebased=rebased)
    saved = k.save_entry(entry, actor, reason or moved, moved=True)
    return WriteResult(entry, "updated", before, saved.facts, saved.schema, rebased=rebased)


@transaction.atomic(durable=True)
def entry_set_status(
    *,
    actor: Actor,
    ref: int | str,
    status: str,
    expected_version: int | None = None,
    reason: str = "",
) -> WriteResult:
    """Set the entry's status; outcome "unchanged" when it has that status already. A stale
    expected_version whose changes since left the status alone applies (`rebased`)."""
    k.check_status(status)
    entry = k.lock_entry(actor, ref)
    rebased = k.check_version(entry, expected_version, actor=actor, writes=frozenset({"status"}))
    before = EntryBeforeWrite.of(entry)
    if not k.apply_changes(entry, EntryFields(status=status)):
        return WriteResult(entry, "unchanged", rebased=rebased)
    saved = k.save_entry(entry, actor, reason or f"status {status}")
    return WriteResult(entry, "updated", before, saved.facts, saved.schema, rebased=rebased)


@transaction.atomic(durable=True)
def entry_delete(*, actor: Actor, ref: int | str, reason: str) -> WriteResult:
    """Delete an entry; its history stays (the last revision records who deleted it and why).
    The result's entry is the deleted one (its fields as they were, without a primary key)."""
    if not (reason or "").strip():
        raise ValidationFailed("Say why the entry is deleted (reason).", field="reason")
    entry = k.lock_entry(actor, ref)
    before = EntryBeforeWrite.of(entry)
    k.delete_entry(entry, actor, reason)
    return WriteResult(entry, "deleted", before)


@transaction.atomic(durable=True)
def entry_revert(
    *,
    actor: Actor,
    ref: int | str,
    to_version: int,
    expected_version: int | None = None,
    reason: str = "",
) -> WriteResult:
    """Make the entry read as it did at `to_version` again (text, fields and place), as one new
    revision, so a revert can itself be reverted. Raises EntryConflict on a stale
    expected_version, ValidationFailed when the entry already reads like that version."""
    entry = k.lock_entry(actor, ref)
    row = entry_revision(actor, entry, to_version)  # revisions never change: no lock needed
    # A revert sets every field: what changed since is shown, never offered as untouched.
    k.check_version(entry, expected_version, actor=actor)
    before = EntryBeforeWrite.of(entry)
    target = entry.project
    if row.project_id != entry.project_id:
        target = project_get(actor, row.project_id, for_write=True)
    node = k.ensure_path(
        actor=actor, project=target, path=row.subtopic.path if row.subtopic_id else None
    )
    moved = k.place_entry(actor, entry, project=target, subtopic=node)
    if not (k.apply_changes(entry, EntryFields.from_revision(row)) or moved):
        # Rolls back a subtopic the revert would have recreated: nothing changes at all.
        raise ValidationFailed(
            f"Entry {entry.short_id} already reads as version {to_version}; nothing to revert.",
            entry=entry.short_id,
        )
    saved = k.save_entry(
        entry, actor, reason or f"revert to version {to_version}", moved=moved is not None
    )
    return WriteResult(entry, "updated", before, saved.facts, saved.schema)
