"""What a search looks at: the entries the actor may see, narrowed by the caller's filters,
and whether that set is small enough to compare every chunk instead of walking the index."""

from __future__ import annotations

from django.conf import settings
from django.db.models import Exists, OuterRef, Q, QuerySet

from knowledge.actors import Actor
from knowledge.models import Entry, EntryStatus, Observation
from knowledge.search import stages
from knowledge.search.filters import SearchFilters
from knowledge.selectors import project_id_get, visible_entries


def search_scope(actor: Actor, filters: SearchFilters) -> tuple[QuerySet[Entry], int | None]:
    """The entries the actor may see, narrowed by the filters, and the id of the project
    searched.

    A searched project was resolved among the projects the actor may see: its entries need no
    second check, and every statement of the search (pending, text, vector, size) is spared
    compiling and planning the membership subqueries of visible_entries.
    """
    searched = None
    if filters.project is not None:
        searched = project_id_get(actor, filters.project)
        entries = Entry.objects.filter(project_id=searched)
    else:
        entries = visible_entries(actor)
    if filters.subtopic is not None:
        path = filters.subtopic
        entries = entries.filter(Q(subtopic__path=path) | Q(subtopic__path__startswith=f"{path}/"))
    if filters.kinds:
        entries = entries.filter(kind__in=filters.kinds)
    if filters.tags:
        tags = list(filters.tags)
        entries = (
            entries.filter(tags__contains=tags)
            if filters.tags_all
            else entries.filter(tags__overlap=tags)
        )
    if filters.status:
        entries = entries.filter(status__in=filters.status)
    elif not filters.include_history:
        entries = entries.exclude(status=EntryStatus.SUPERSEDED)
    if not filters.include_transcripts:
        entries = entries.filter(searchable=True)
    if filters.categories:  # entries with a current observation of one of these categories
        entries = entries.filter(
            Exists(
                Observation.objects.filter(
                    entry_id=OuterRef("pk"), valid_to__isnull=True, category__in=filters.categories
                )
            )
        )
    if filters.after is not None:
        entries = entries.filter(updated_at__gte=filters.after)
    if filters.before is not None:
        entries = entries.filter(updated_at__lt=filters.before)
    return entries, searched


def scope_is_small(scope: QuerySet[Entry], known: int | None, narrowed: bool) -> bool:
    """Whether the filtered set holds at most CAIRN_SEARCH_EXACT_MAX entries.

    `known` is the searched projects' number of entries from the word statistics, which
    settles most searches without touching the entries; only a large project narrowed further
    (a subtopic, kinds, tags, dates, a phrase), or one never counted, is counted here, and never
    beyond the limit.
    """
    limit = settings.CAIRN_SEARCH_EXACT_MAX
    if known is not None and (known <= limit or not narrowed):
        return known <= limit
    with stages.stage("scope size"):
        return scope.order_by().values("pk")[: limit + 1].count() <= limit
