"""An entry's revisions, as far as the actor may see the projects it was in."""

from __future__ import annotations

from knowledge.actors import Actor
from knowledge.errors import NotFound
from knowledge.models import Entry
from knowledge.selectors.access import visible_projects


def entry_revisions(actor: Actor, entry: Entry, *, limit: int = 50):
    """The revisions of an entry (found with entry_get) the actor can see, newest first."""
    # An entry moved out of a hidden project keeps its old revisions: they stay hidden.
    return (
        entry.history.filter(project_id__in=visible_projects(actor).values("pk"))
        .select_related("history_user")
        .order_by("-history_id")[:limit]
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
