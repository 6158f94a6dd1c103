"""An entry's revisions, as far as the actor may see the projects it was in."""

from __future__ import annotations

from knowledge.access import visible_projects
from knowledge.actors import Actor
from knowledge.errors import NotFound
from knowledge.models import Entry, HistoricalEntry

# What a listing shows of each revision (who, when, why, which version): never its body, so
# 500 revisions of a 1 MB entry cost a page of rows, not 500 MB.
SUMMARY_COLUMNS = ("history_id", "id", "version", "history_type", "history_date",
                   "history_change_reason", "generated_by", "title", "git_commit", "project_id",
                   "history_user__username")  # fmt: skip
MAX_REVISIONS = 500


def entry_revisions(actor: Actor, entry: Entry, *, limit: int = 50):
    """The revisions of an entry (found with entry_get) the actor can see, newest first, at most
    MAX_REVISIONS, each with SUMMARY_COLUMNS only (entry_revision reads one whole)."""
    return revisions_of(actor, [entry], limit=limit)


def revisions_of(actor: Actor, entries: list[Entry], *, limit: int = 50):
    """The revisions of several entries (each found with entry_get) in one list, newest first,
    as entry_revisions reads them."""
    # An entry moved out of a hidden project keeps its old revisions: they stay hidden.
    return (
        HistoricalEntry.objects.filter(
            id__in=[entry.pk for entry in entries],
            project_id__in=visible_projects(actor).values("pk"),
        )
        .select_related("history_user")
        .only(*SUMMARY_COLUMNS)
        .order_by("-history_id")[: max(1, min(limit, MAX_REVISIONS))]
    )


def entry_revision(actor: Actor, entry: Entry, version: int):
    """One version of an entry (found with entry_get), as long as the actor may see the project
    it was in then."""
    row = (
        entry.history.filter(version=version, project_id__in=visible_projects(actor).values("pk"))
        .exclude(history_type="-")
        .select_related("project", "subtopic")
        .order_by("-history_id")
        .first()
    )
    if row is None:
        raise NotFound(
            f"Entry {entry.short_id} has no version {version} that you can see; its versions "
            f"run from 1 to {entry.version}; its history lists them.",
            entry=entry.short_id,
            version=version,
        )
    return row
