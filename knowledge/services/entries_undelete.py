"""Undelete: a deleted entry back as it was, under its own id, for as long as its revisions exist.

Writing its last text again would make a new entry (a new id: links and references to the old
one break, and its sources, kind and tags are lost); this puts the same row back from the
delete revision, which holds the last state, and the history goes on from there.
"""

from __future__ import annotations

from dataclasses import asdict

from django.contrib.auth import get_user_model
from django.db import transaction

from knowledge.actors import Actor
from knowledge.errors import AlreadyExists, Forbidden, ValidationFailed
from knowledge.models import Entry, Subtopic
from knowledge.selectors import (
    entry_lookup,
    entry_not_found,
    project_maintainers,
    strip_memory_scheme,
    visible_entries,
    visible_projects,
    writable_projects,
)
from knowledge.selectors.deleted import deleted_entry
from knowledge.services import _kernel as k
from knowledge.services.fields import EntryFields
from knowledge.write_result import WriteResult


@transaction.atomic(durable=True)
def entry_undelete(*, actor: Actor, ref: int | str, reason: str) -> WriteResult:
    """Bring the deleted entry `ref` names back with its id, short id, place, text, kind, tags,
    status and sources, as one new revision (one version up). Refused when it is not deleted,
    when its project is not writable, or when another entry has since taken its title there."""
    if not (reason or "").strip():
        raise ValidationFailed("Say why the entry comes back (reason).", field="reason")
    k.require_write(actor)
    text = strip_memory_scheme(str(ref).strip())
    if (alive := entry_lookup(visible_entries(actor), text)) is not None:
        raise ValidationFailed(
            f"Entry {alive.short_id} {alive.title!r} is not deleted; nothing to bring back.",
            entry=alive.short_id,
        )
    gone = deleted_entry(visible_projects(actor), text)
    if gone is None:
        raise entry_not_found(actor, ref)
    # Locked: two undeletes of one entry wait for each other, and the second finds it back.
    row = (
        Entry.history.select_for_update()
        .filter(id=gone["id"], history_type="-")
        .order_by("-history_id")
        .first()
    )
    if Entry.objects.filter(pk=row.id).exists():
        raise ValidationFailed(f"Entry {row.short_id} is back already.", entry=row.short_id)
    project = writable_projects(actor).filter(pk=row.project_id).first()
    if project is None:
        raise Forbidden(
            f"Entry {row.short_id} was in {gone['project']}, where you may not write: bringing "
            f"it back needs the editor role there. Ask one of its maintainers: "
            f"{project_maintainers(row.project)}.",
            entry=row.short_id,
        )
    subtopic = _place(actor, project, row.subtopic_id)
    if k.identity_taken(project, subtopic, row.title):
        where = f"{project.slug}/{subtopic.path}" if subtopic else project.slug
        raise AlreadyExists(
            f"{where} has another entry titled {row.title!r} now. Rename or delete that one "
            f"first, then bring {row.short_id} back.",
            field="title",
        )
    entry = _restored(row, project, subtopic)
    saved = k.save_entry(entry, actor, f"undelete: {reason.strip()}", authored=False)
    Entry.objects.filter(pk=entry.pk).update(created_at=row.created_at)  # it was never new
    k.link_sources(entry, row.sources)
    _relink_corrections(entry)
    return WriteResult(entry, "undeleted", facts=saved.facts)


def _place(actor: Actor, project, subtopic_id: int | None) -> Subtopic | None:
    """Its subtopic, made again from that subtopic's history if it was removed since."""
    if subtopic_id is None:
        return None
    if (node := Subtopic.objects.filter(pk=subtopic_id, project=project).first()) is not None:
        return node
    past = Subtopic.history.filter(id=subtopic_id, project_id=project.pk)
    path = past.order_by("-history_id").values_list("path", flat=True).first()
    return k.ensure_path(actor=actor, project=project, path=path) if path else None


def _restored(row, project, subtopic) -> Entry:
    """The unsaved entry as the delete revision recorded it; links to rows gone since drop."""
    users = get_user_model().objects
    entries = Entry.objects

    def alive(manager, pk):
        return pk if pk is not None and manager.filter(pk=pk).exists() else None

    return Entry(
        id=row.id,
        short_id=row.short_id,
        project=project,
        subtopic=subtopic,
        **asdict(EntryFields.from_revision(row)),  # what a revert restores, read one way
        version=row.version,
        generated_by=row.generated_by,
        created_by_id=alive(users, row.created_by_id),
        verified_by_id=alive(users, row.verified_by_id),
        verified_at=row.verified_at,
        supersedes_id=alive(entries, row.supersedes_id),
        superseded_by_id=alive(entries, row.superseded_by_id),
    )


def _relink_corrections(entry: Entry) -> None:
    """The delete cleared the other side of a correction link: set it again (no revision, as
    entry_correct sets it)."""
    if entry.supersedes_id:
        Entry.objects.filter(pk=entry.supersedes_id, superseded_by=None).update(superseded_by=entry)
    if entry.superseded_by_id:
        Entry.objects.filter(pk=entry.superseded_by_id, supersedes=None).update(supersedes=entry)
