"""Restore: rebuild the knowledge from a record of it (the git mirror, read by history's
restoring), every revision with its original version, who, when and why.

One durable transaction: a restore that fails leaves the database as it was.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from django.conf import settings
from django.db import transaction
from django.test.utils import override_settings
from django.utils import timezone

from knowledge.actors import Actor
from knowledge.errors import Forbidden, ValidationFailed
from knowledge.models import Entry, LexemeStat, Membership, Project, Source, Subtopic
from knowledge.records import ProjectRecord
from knowledge.services._kernel import index_text
from knowledge.services._kernel.graph import graph_change, index_entry_graph
from knowledge.services._kernel.mirror_restore import (
    HistoricalEntry,
    HistoricalProject,
    HistoricalSubtopic,
    RestoredRevision,
    Restorer,
    check_revision,
    check_state,
    entry_values,
    history_row,
    link_sources,
    narrowed_tokens,
    record_places,
    renarrow_tokens,
    reset_sequences,
    restore_projects,
    store_is_empty,
    writer,
)
from knowledge.services.embeddings import lexeme_stats_refresh

_BATCH = 500


@dataclass
class RestoreReport:
    projects: int = 0
    entries: int = 0
    revisions: int = 0
    created_users: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)  # revisions that could not be restored, why
    guests: bool = False  # the created accounts were put in the first guest group
    # Entries (short ids) restored otherwise than the record says: a verification mark
    # dropped, a revision refused or unreadable. The record's caller brings the record in line.
    dropped_verified: list[str] = field(default_factory=list)
    marked: list[str] = field(default_factory=list)  # entries with a mark in some revision
    refused: list[str] = field(default_factory=list)
    recorded: bool = False  # the record got a commit saying so (set by the record's caller)
    tokens_repointed: list[str] = field(default_factory=list)
    tokens_revoked: list[str] = field(default_factory=list)


def _wipe() -> None:
    """Everything a restore rebuilds (people and tokens stay)."""
    Entry.objects.all().delete()
    for model in (HistoricalEntry, HistoricalProject, HistoricalSubtopic, LexemeStat, Source,
                  Membership, Subtopic, Project):  # fmt: skip
        model.objects.all().delete()


@transaction.atomic(durable=True)
def memory_restore(
    *,
    actor: Actor,
    projects: list[ProjectRecord],
    revisions: Iterable[RestoredRevision],
    force: bool = False,
    progress=None,
    memberships: bool = True,
    keep_verified: bool = False,
    sensitivity: str = "restricted",
) -> RestoreReport:
    """Recreate projects (with their settings, memberships and subtopics) and replay every
    entry revision oldest first, as recorded, each checked as a write is (a refused one is
    reported and skipped). Refuses a database that holds projects, entries or revisions
    unless `force` (which replaces them). Only the system or a superuser may.

    The record is not trusted further than it must be: `memberships` applies the manifest's
    (the operator saw them), verification marks are kept only with `keep_verified`, projects
    the manifest does not describe get `sensitivity`, and API tokens narrowed to projects stay
    narrowed to the restored projects of the same slugs (or are revoked)."""
    if actor.agent != "system:cairn" and not getattr(actor.user, "is_superuser", False):
        raise Forbidden("Only an administrator may restore Cairn from a backup.")
    if not store_is_empty() and not force:
        raise ValidationFailed(
            "The database already holds projects or entries; a restore goes into an empty "
            "one. Restore into a fresh installation, or pass force to replace everything.",
            field="force",
        )
    report = RestoreReport()
    # Revision rows are written as recorded: simple-history must not stamp new ones.
    tokens = narrowed_tokens()
    with override_settings(SIMPLE_HISTORY_ENABLED=False):
        if force:
            _wipe()
        restorer = Restorer(sensitivity=sensitivity, keep_verified=keep_verified)
        restore_projects(restorer, projects, memberships=memberships)
        rows: list = []
        for rev in revisions:
            _replay(restorer, rev, rows)
            if len(rows) >= _BATCH:
                HistoricalEntry.objects.bulk_create(rows)
                report.revisions += len(rows)
                rows.clear()
            if progress is not None:
                progress.update(1)
        HistoricalEntry.objects.bulk_create(rows)
        report.revisions += len(rows)
        record_places()
        for entry in Entry.objects.select_related("subtopic"):
            index_text(entry)
        reset_sequences()
        restorer.deactivate_created()
    report.tokens_repointed, report.tokens_revoked = renarrow_tokens(tokens, timezone.now())
    lexeme_stats_refresh()
    report.projects = Project.objects.count()
    report.entries = Entry.objects.count()
    report.created_users = restorer.created_users
    report.lost = restorer.lost
    report.guests = bool(settings.CAIRN_GUEST_GROUPS and restorer.created_users)
    report.marked = sorted(restorer.marked)
    report.dropped_verified = [] if keep_verified else report.marked
    report.refused = sorted(restorer.refused)
    return report


def _replay(restorer: Restorer, rev: RestoredRevision, rows: list) -> None:
    if rev.lost:
        restorer.lost.append(f"revision {rev.history_id} of entry {rev.short_id}: {rev.lost}")
        restorer.refused.add(rev.short_id)
        return
    try:
        check_revision(restorer, rev)
        state = check_state(rev.state) if rev.state is not None else None
    except ValidationFailed as exc:
        restorer.lost.append(
            f"revision {rev.history_id} of entry {rev.short_id}: refused as a write would "
            f"be: {exc.message}"
        )
        restorer.refused.add(rev.short_id)
        return
    if state is not None and state.verified_by:
        restorer.marked.add(rev.short_id)
    user = restorer.user(rev.user, email=rev.user_email, name=rev.user_name)
    entry = restorer.entries.get(rev.short_id)
    if rev.action == "-":
        if entry is None:
            restorer.lost.append(
                f"revision {rev.history_id}: deletes entry {rev.short_id}, which the mirror "
                "never created"
            )
            return
        rows.append(history_row(entry, rev, user))
        _delete(restorer, entry)
        return
    try:
        values = entry_values(restorer, rev, state, entry)
    except ValidationFailed as exc:  # a project slug from the trailers that a write refuses
        restorer.lost.append(f"revision {rev.history_id} of entry {rev.short_id}: {exc.message}")
        restorer.refused.add(rev.short_id)
        return
    stamps = {"created_at": values.pop("created_at"), "updated_at": values.pop("updated_at")}
    slug, digest = values.pop("slug"), values.pop("content_hash")
    if entry is None:
        entry = Entry(**values)
        change = graph_change(entry)  # before it has an id: a new entry
        entry.pk, entry.slug, entry.content_hash = rev.entry_pk, slug, digest
        entry.save(force_insert=True)
        restorer.entries[entry.short_id] = entry
        if entry.supersedes_id:  # a correction: the corrected entry points back at it
            Entry.objects.filter(pk=entry.supersedes_id).update(superseded_by=entry)
            entry.supersedes.superseded_by = entry
    else:
        moved = (entry.project_id, entry.subtopic_id) != (
            values["project"].pk,
            values["subtopic"].pk if values["subtopic"] else None,
        )
        for name, value in values.items():
            setattr(entry, name, value)
        change = graph_change(entry, moved=moved)  # slug and hash still the stored ones
        entry.slug, entry.content_hash = slug, digest
        # One UPDATE per revision (update() leaves the stamps as given: no auto_now).
        Entry.objects.filter(pk=entry.pk).update(**values, **stamps, slug=slug, content_hash=digest)
    if entry.pk not in restorer.stamped:  # a save set the stamps to now: put them back
        Entry.objects.filter(pk=entry.pk).update(**stamps)
        restorer.stamped.add(entry.pk)
    for name, value in stamps.items():
        setattr(entry, name, value)
    link_sources(restorer, entry, list(state.sources))
    rows.append(history_row(entry, rev, user))
    if settings.CAIRN_GRAPH_ON_SAVE:
        index_entry_graph(entry, change, writer(user))


def _delete(restorer: Restorer, entry: Entry) -> None:
    pk = entry.pk
    Entry.objects.filter(pk=pk).delete()  # its graph rows go with it, as on a delete
    del restorer.entries[entry.short_id]
    for other in restorer.entries.values():  # the database set these links to null
        if other.supersedes_id == pk:
            other.supersedes = None
        if other.superseded_by_id == pk:
            other.superseded_by = None
    restorer.sources.pop(pk, None)
