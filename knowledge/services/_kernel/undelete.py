"""Kernel step: a deleted entry back under its own id, from its delete revision.

Writing its last text again would make a new entry (a new id: links and references to the old
one break, and its sources, kind and tags are lost); this puts the same row back from the
delete revision, which holds the last state and the sources linked then, and the history goes
on from there. An undelete and a run's undo both call it.
"""

from __future__ import annotations

from dataclasses import asdict

from django.contrib.auth import get_user_model

from knowledge.actors import Actor
from knowledge.errors import AlreadyExists, Forbidden, ValidationFailed
from knowledge.models import Entry, HistoricalEntry, Project, Subtopic
from knowledge.selectors import project_maintainers, writable_projects
from knowledge.services._kernel.entries import (
    ensure_path,
    identity_taken,
    link_sources,
    save_entry,
)
from knowledge.services.fields import EntryFields
from knowledge.write_result import WriteResult


def lock_delete_row(entry_id: int):
    """The entry's latest delete revision, locked: two undeletes of one entry wait for each
    other, and the second finds it back."""
    return (
        Entry.history.select_for_update()
        .filter(id=entry_id, history_type="-")
        .order_by("-history_id")
        .first()
    )


def restore_deleted(actor: Actor, row, *, reason: str, state=None) -> WriteResult:
    """Bring the entry of the delete revision `row` back with its id, short id, sources and
    links, reading as the revision `state` (default: as it was deleted), as one new revision
    (its result: undeleted, with the facts its save indexed). Refused when it is back already,
    its project is not writable, or its title is taken."""
    state = state if state is not None else row
    if Entry.objects.filter(pk=row.id).exists():
        raise ValidationFailed(f"Entry {row.short_id} is back already.", entry=row.short_id)
    project = writable_projects(actor).filter(pk=state.project_id).first()
    if project is None:
        where = Project.objects.filter(pk=state.project_id).first()
        if where is None:
            raise Forbidden(
                f"Entry {row.short_id} was in a project that was deleted since: it cannot come "
                "back there. Ask a Cairn administrator.",
                entry=row.short_id,
            )
        raise Forbidden(
            f"Entry {row.short_id} was in {where.slug}, where you may not write: bringing it "
            f"back needs the editor role there. Ask one of its maintainers: "
            f"{project_maintainers(where)}.",
            entry=row.short_id,
        )
    subtopic = place_of(actor, project, state.subtopic_id)
    if identity_taken(project, subtopic, state.title):
        where = f"{project.slug}/{subtopic.path}" if subtopic else project.slug
        raise AlreadyExists(
            f"{where} has another entry titled {state.title!r} now. Rename or delete that one "
            f"first, then bring {row.short_id} back.",
            field="title",
        )
    entry = _restored(row, state, project, subtopic)
    saved = save_entry(entry, actor, reason, authored=False)
    # It was never new: its first creation time, on the row and on the revision just written
    # (the mirror renders the revision; `mirror verify` compares it with the row).
    Entry.objects.filter(pk=entry.pk).update(created_at=row.created_at)
    written = HistoricalEntry.objects.filter(id=entry.pk).order_by("-history_id")[:1]
    HistoricalEntry.objects.filter(history_id__in=written.values("history_id")).update(
        created_at=row.created_at
    )
    entry.created_at = row.created_at
    link_sources(entry, row.sources)
    _relink_corrections(entry)
    return WriteResult(entry, "undeleted", facts=saved.facts)


def place_of(actor: Actor, project: Project, subtopic_id: int | None) -> Subtopic | None:
    """A subtopic an entry was in, made again from that subtopic's history if it was removed
    since (None: the project root)."""
    if subtopic_id is None:
        return None
    if (node := Subtopic.objects.filter(pk=subtopic_id, project=project).first()) is not None:
        return node
    past = Subtopic.history.filter(id=subtopic_id, project_id=project.pk)
    path = past.order_by("-history_id").values_list("path", flat=True).first()
    return ensure_path(actor=actor, project=project, path=path) if path else None


def _restored(row, state, project, subtopic) -> Entry:
    """The unsaved entry as `state` recorded it, with the identity of the delete revision
    `row`; links to rows gone since drop."""
    users = get_user_model().objects
    entries = Entry.objects

    def alive(manager, pk):
        return pk if pk is not None and manager.filter(pk=pk).exists() else None

    return Entry(
        id=row.id,
        short_id=row.short_id,
        project=project,
        subtopic=subtopic,
        **asdict(EntryFields.from_revision(state)),  # what a revert restores, read one way
        version=row.version,
        generated_by=state.generated_by,
        created_by_id=alive(users, row.created_by_id),
        verified_by_id=alive(users, state.verified_by_id),
        verified_at=state.verified_at,
        supersedes_id=alive(entries, state.supersedes_id),
        superseded_by_id=alive(entries, state.superseded_by_id),
    )


def _relink_corrections(entry: Entry) -> None:
    """The delete cleared the other side of a correction link: set it again (no revision, as
    entry_correct sets it)."""
    if entry.supersedes_id:
        Entry.objects.filter(pk=entry.supersedes_id, superseded_by=None).update(superseded_by=entry)
    if entry.superseded_by_id:
        Entry.objects.filter(pk=entry.superseded_by_id, supersedes=None).update(supersedes=entry)
