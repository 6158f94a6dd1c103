"""Listings the surfaces show: a project to browse, what changed recently, what is open."""

from __future__ import annotations

from django.db.models import Count, Q, QuerySet
from django.db.models.functions import Length

from knowledge.actors import Actor
from knowledge.errors import ValidationFailed
from knowledge.models import Entry, EntryStatus
from knowledge.paths import normalize_path
from knowledge.search.filters import SearchFilters
from knowledge.search.scope import search_scope
from knowledge.selectors import project_get, subtopic_tree, visible_entries

# Open: needs follow-up. A task is open until it is resolved (or archived), whatever its status
# says before that.
OPEN = Q(status=EntryStatus.OPEN) | Q(kind="task", status=EntryStatus.ACTIVE)
# A listing shows every entry the filters select, transcripts too (a search leaves them out).
EVERY_ENTRY = SearchFilters(include_transcripts=True)
# How a listing may be sorted: the key, and its order (ties by id, newest first).
SORTS = {
    "updated": ("-updated_at", "-id"),
    "title": ("title", "-id"),
    "size": (Length("body").desc(), "-id"),  # largest first
}


def _sorted(entries: QuerySet[Entry], sort: str) -> QuerySet[Entry]:
    if sort not in SORTS:
        raise ValidationFailed(f"Unknown sort {sort!r}; use {', '.join(SORTS)}.", field="sort")
    return entries.order_by(*SORTS[sort])


def entry_list(
    actor: Actor, filters: SearchFilters = EVERY_ENTRY, *, sort: str = "updated"
) -> QuerySet[Entry]:
    """The entries a search with these filters looks at (superseded ones only when asked for),
    newest first, or by `sort` (SORTS: title, or size, largest first)."""
    entries, _ = search_scope(actor, filters)
    return _sorted(entries.select_related("project", "subtopic"), sort)


def _with_totals(tree: list[dict]) -> list[dict]:
    """Each node's `total`: its entries and those of every subtopic below it."""
    for node in tree:
        prefix = f"{node['path']}/"
        node["total"] = node["entries"] + sum(
            n["entries"] for n in tree if n["path"].startswith(prefix)
        )
    return tree


def entries_open(
    actor: Actor,
    *,
    project: str | int | None = None,
    subtopic: str | None = None,
    limit: int = 50,
) -> list[Entry]:
    """Entries that need follow-up (status open, and tasks not yet resolved), newest first."""
    filters = SearchFilters.parse(project=project, subtopic=subtopic, include_transcripts=True)
    entries = entry_list(actor, filters).filter(OPEN)
    return list(entries.order_by("-updated_at")[:limit])


def entries_recent(
    actor: Actor, *, project: str | int | None = None, since, limit: int = 20
) -> list[Entry]:
    """Entries changed at or after `since` (an aware datetime), newest first; superseded
    entries are left out."""
    filters = SearchFilters.parse(project=project, after=since, include_transcripts=True)
    entries = entry_list(actor, filters)
    return list(entries.order_by("-updated_at")[:limit])


def project_browse(
    actor: Actor,
    *,
    project: str | int,
    subtopic: str | None = None,
    limit: int = 100,
    sort: str = "title",
) -> dict:
    """One project as a listing: the project, its entry counts (`total`, `open`; superseded
    entries left out), its subtopic tree (only below `subtopic` when given) and up to `limit`
    entries directly in `subtopic` (at the project root without one), by title or `sort`
    (SORTS: updated, newest first; size, largest first)."""
    proj = project_get(actor, project)
    entries = entry_list(actor).filter(project=proj)
    counts = entries.aggregate(total=Count("id"), open=Count("id", filter=OPEN))
    tree = _with_totals(subtopic_tree(actor, proj.pk))
    if subtopic:
        prefix = normalize_path(subtopic)
        tree = [n for n in tree if n["path"] == prefix or n["path"].startswith(f"{prefix}/")]
        entries = entries.filter(subtopic__path=prefix)
    else:
        entries = entries.filter(subtopic__isnull=True)
    return {
        "project": proj,
        **counts,
        "subtopics": tree,
        "entries": list(_sorted(entries, sort)[:limit]),
    }


def entries_page(
    actor: Actor, *, after: int = 0, limit: int = 100
) -> tuple[list[Entry], int | None]:
    """Every entry the actor can see, by id, `limit` at a time after id `after`: the page and
    the id to continue after (None at the end)."""
    rows = list(
        visible_entries(actor)
        .select_related("project", "subtopic")
        .filter(pk__gt=after)
        .order_by("pk")[: limit + 1]
    )
    more = len(rows) > limit
    return rows[:limit], rows[limit - 1].pk if more else None
