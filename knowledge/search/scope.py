"""What a search looks at: the entries the actor may see, narrowed by the caller's filters,
and whether that set is small enough to compare every chunk instead of walking the index."""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from knowledge.actors import Actor
from knowledge.errors import ValidationFailed
from knowledge.models import Entry, EntryStatus, Observation, Project
from knowledge.paths import normalize_path
from knowledge.search import timing
from knowledge.selectors import project_get, visible_entries


def _as_list(value: str | list[str] | tuple | None) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = value.split(",")
    return [str(v).strip() for v in value if str(v).strip()]


def _as_datetime(value, name: str) -> dt.datetime | dt.date | None:
    if value is None or value == "":
        return None
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return value
    if isinstance(value, dt.datetime):
        parsed = value
    else:
        text = str(value).strip()
        try:
            parsed = parse_date(text) or parse_datetime(text)
        except ValueError:
            parsed = None
    if parsed is None:
        raise ValidationFailed(
            f"{name}={value!r} is not a date; use ISO form like 2026-08-31 or "
            "2026-08-31T14:00:00Z.",
            field=name,
        )
    if isinstance(parsed, dt.datetime) and timezone.is_naive(parsed):
        parsed = timezone.make_aware(parsed)
    return parsed


def search_scope(
    actor: Actor,
    *,
    project,
    subtopic,
    kinds,
    tags,
    tags_all,
    status,
    after,
    before,
    include_history,
    include_transcripts,
    categories=None,
) -> tuple[QuerySet[Entry], Project | None]:
    """The entries the actor may see, narrowed by the filters, and the project searched."""
    entries = visible_entries(actor)
    searched = None
    if project not in (None, ""):
        searched = project_get(actor, project)
        entries = entries.filter(project=searched)
    if subtopic:
        path = normalize_path(subtopic)
        entries = entries.filter(Q(subtopic__path=path) | Q(subtopic__path__startswith=f"{path}/"))
    kinds = [k.lower() for k in _as_list(kinds)]
    if kinds:
        entries = entries.filter(kind__in=kinds)
    tags = [t.lower().lstrip("#") for t in _as_list(tags)]
    if tags:
        entries = (
            entries.filter(tags__contains=tags) if tags_all else entries.filter(tags__overlap=tags)
        )
    statuses = _as_list(status)
    unknown = [s for s in statuses if s not in EntryStatus.values]
    if unknown:
        raise ValidationFailed(
            f"Unknown status {', '.join(unknown)}; use any of {', '.join(EntryStatus.values)}.",
            field="status",
        )
    if statuses:
        entries = entries.filter(status__in=statuses)
    elif not include_history:
        entries = entries.exclude(status=EntryStatus.SUPERSEDED)
    if not include_transcripts:
        entries = entries.filter(searchable=True)
    categories = [" ".join(c.split()).lower() for c in _as_list(categories) if c.strip()]
    if categories:  # entries with a current observation of one of these categories
        entries = entries.filter(
            Exists(
                Observation.objects.filter(
                    entry_id=OuterRef("pk"), valid_to__isnull=True, category__in=categories
                )
            )
        )
    after = _as_datetime(after, "after")
    before = _as_datetime(before, "before")
    if after is not None:
        lookup = (
            "updated_at__date__gte" if not isinstance(after, dt.datetime) else "updated_at__gte"
        )
        entries = entries.filter(**{lookup: after})
    if before is not None:
        lookup = "updated_at__date__lt" if not isinstance(before, dt.datetime) else "updated_at__lt"
        entries = entries.filter(**{lookup: before})
    return entries, searched


NARROWING = ("subtopic", "kinds", "tags", "status", "after", "before", "categories")


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
    with timing.stage("scope size"):
        return scope.order_by().values("pk")[: limit + 1].count() <= limit
