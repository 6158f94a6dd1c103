"""Old addresses: an entry that moved (to another subtopic or another project) keeps answering
to the `project/subtopic/title` and `memory://` addresses it had, with its new one.

Only when no entry holds the address now (that one wins), and only through a revision in a
project the reader may see: an entry that left a project hidden from the reader cannot be found
by its old address there, which would tell that the hidden project holds that path.
"""

from __future__ import annotations

from django.db.models import Q

from knowledge import limits
from knowledge.access import visible_entries, visible_projects
from knowledge.actors import Actor
from knowledge.errors import ValidationFailed
from knowledge.models import HistoricalEntry
from knowledge.paths import normalize_path

MAX_CANDIDATES = 20  # entries that ever had the address, newest revision first


def _place(text: str) -> tuple[str, str, str] | None:
    """(project slug, subtopic path, title or slug) of a path address, None for an id."""
    if "/" not in text:
        return None
    project, _, rest = text.strip("/").partition("/")
    sub, _, name = rest.rpartition("/")
    try:
        return project, normalize_path(sub) if sub else "", name
    except ValidationFailed:
        return None


def moved_entry_id(actor: Actor, text: str) -> int | None:
    """The entry (its id) that the path address `text` (no memory:// scheme) named before it
    moved, if it still exists and the reader may see it; None otherwise. One query for the
    revisions that had that place, one for the entry."""
    limits.check_length(text, field="entry reference", limit=limits.REF)
    place = _place(text)
    if place is None:
        return None
    project, sub, name = place
    where = Q(project__slug__iexact=project) & (Q(slug=name.lower()) | Q(title__iexact=name))
    where &= Q(subtopic__path=sub) if sub else Q(subtopic__isnull=True)
    ids = list(
        HistoricalEntry.objects.filter(where, project_id__in=visible_projects(actor).values("pk"))
        .exclude(history_type="-")
        .order_by("-history_id")
        .values_list("id", flat=True)[:MAX_CANDIDATES]
    )
    if not ids:
        return None
    alive = set(visible_entries(actor).filter(pk__in=ids).values_list("pk", flat=True))
    return next((pk for pk in ids if pk in alive), None)


def named_elsewhere(text: str, entry) -> bool:
    """Whether the path address `text` names another place than `entry`'s own (it moved): the
    pages answer such an address with the entry's own one. Pure: no query."""
    place = _place(text)
    if place is None:
        return False
    project, sub, _ = place
    now = entry.subtopic.path if entry.subtopic_id else ""
    return project.lower() != entry.project.slug.lower() or sub != now
