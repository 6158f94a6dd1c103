"""build_context: an entry (or the entries a memory:// glob, a reference or a search names)
with its neighbourhood and facts in one answer, scoped by the actor like every selector."""

from __future__ import annotations

from datetime import datetime

from django.db.models import F, Q, QuerySet, Window
from django.db.models.functions import RowNumber

from knowledge import inputs
from knowledge.actors import Actor
from knowledge.errors import NotFound, ValidationFailed
from knowledge.graph.selectors import (
    MAX_DEPTH,
    bounded,
    entry_compact,
    excerpt,
    facts_at,
    links_among,
    neighbourhood,
    observation_dict,
    seen_when_written,
)
from knowledge.models import Entry, EntryStatus, Observation
from knowledge.paths import normalize_path
from knowledge.search import search_entries
from knowledge.selectors import (
    MEMORY_SCHEME,
    entry_lookup,
    strip_memory_scheme,
    visible_entries,
    visible_projects,
)

MAX_RELATED = 50
MAX_PRIMARY = 20
MAX_OBSERVATIONS = 20  # per entry
# include_history: every fact an entry ever held, 500 a version for as many versions as it was
# rewritten. At most this many a primary entry (`observations_cut` says when there were more).
MAX_HISTORY_OBSERVATIONS = 200
MAX_URL = 1000


def _glob(entries: QuerySet[Entry], path: str) -> QuerySet[Entry]:
    """`acme/sub/*`: the entries directly in acme/sub; `acme/sub/**`: in it and below."""
    recursive = path.endswith("**")
    base = path.rstrip("*").strip("/")
    project, _, sub = base.partition("/")
    found = entries.filter(project__slug__iexact=project)
    sub = normalize_path(sub) if sub else ""
    if recursive:
        if sub:
            return found.filter(Q(subtopic__path=sub) | Q(subtopic__path__startswith=f"{sub}/"))
        return found
    return found.filter(subtopic__path=sub) if sub else found.filter(subtopic__isnull=True)


def _primary(actor: Actor, entries: QuerySet[Entry], url: str) -> tuple[str, list[Entry], bool]:
    """(how the url matched, the primary entries, whether they were cut)."""
    is_memory = url[: len(MEMORY_SCHEME)].lower() == MEMORY_SCHEME
    path = strip_memory_scheme(url)
    if is_memory and path.endswith("*"):
        found = list(
            _glob(entries, path)
            .exclude(status=EntryStatus.SUPERSEDED)
            .order_by("-updated_at", "-pk")[: MAX_PRIMARY + 1]
        )
        return "glob", found[:MAX_PRIMARY], len(found) > MAX_PRIMARY
    entry = entry_lookup(entries, url)
    if entry is not None:
        return "entry", [entry], False
    if is_memory or not url.strip():
        return "entry", [], False
    ids = [hit.id for hit in search_entries(actor, url, limit=5)]
    by_id = {e.pk: e for e in entries.filter(pk__in=ids)}
    return "search", [by_id[i] for i in ids if i in by_id], False


def _observations(
    actor: Actor, entry_ids: list[int], as_of: datetime | None, history: set[int]
) -> tuple[dict, set[int]]:
    """Observations per entry id: current (or at as_of), MAX_OBSERVATIONS each; for ids in
    `history` the no longer current too, MAX_HISTORY_OBSERVATIONS each. Also the ids that had
    more than were kept. The database stops each entry's rows one past its cap."""
    rows = Observation.objects.filter(entry_id__in=entry_ids)
    if history or as_of is not None:
        rows = seen_when_written(rows, "entry_id", visible_projects(actor))
    if history:
        rows = rows.filter(Q(entry_id__in=history) | Q(pk__in=facts_at(rows, as_of).values("pk")))
    else:
        rows = facts_at(rows, as_of)
    order = ("position", "valid_from", "pk")
    rank = Window(RowNumber(), partition_by=F("entry_id"), order_by=[F(f).asc() for f in order])
    cap = max(MAX_OBSERVATIONS, MAX_HISTORY_OBSERVATIONS if history else 0)
    answer: dict[int, list[dict]] = {}
    cut: set[int] = set()
    ranked = rows.annotate(rank=rank).filter(rank__lte=cap + 1)
    for obs in ranked.order_by("entry_id", *order):
        items = answer.setdefault(obs.entry_id, [])
        limit = MAX_HISTORY_OBSERVATIONS if obs.entry_id in history else MAX_OBSERVATIONS
        if len(items) < limit:
            items.append(observation_dict(obs))
        else:
            cut.add(obs.entry_id)
    return answer, cut


def build_context(
    actor: Actor,
    url: str,
    *,
    depth: int = 1,
    timeframe: str | None = None,
    max_related: int = 10,
    include_history: bool = False,
    as_of: str | datetime | None = None,
) -> dict:
    """An entry (or the entries a memory:// glob, a reference or a search names) with what it
    links to and what links to it, up to `depth` hops, in one answer.

    `url`: memory://project/path/entry, memory://project/sub/* (directly in sub) or /** (and
    below), an entry reference, or search words. `timeframe` ('7d', an ISO date) keeps only
    entries changed since; `as_of` shows the facts current at that time; `include_history`
    adds the primary entries' facts that are no longer current. Related entries come nearest
    first, then newest; at most `max_related` (`cut` says when there were more). `links`: the
    relations among the primary entries themselves (a glob's or a search's).
    """
    url = str(url or "").strip()
    if not url:
        raise ValidationFailed(
            "Give a memory:// URL, an entry reference or search words.", field="url"
        )
    if len(url) > MAX_URL:
        raise ValidationFailed(f"url is longer than {MAX_URL} characters.", field="url")
    depth = bounded(depth, "depth", 1, MAX_DEPTH)
    max_related = bounded(max_related, "max_related", 1, MAX_RELATED)
    since = inputs.when(timeframe, field="timeframe") if timeframe else None
    at = inputs.when(as_of, field="as_of") if as_of else None
    entries = visible_entries(actor).select_related("project", "subtopic")
    matched, primary, primary_cut = _primary(actor, entries, url)
    if since is not None and matched != "entry":
        primary = [e for e in primary if e.updated_at >= since]
    if not primary:
        raise NotFound(
            f"Nothing that you can see matches {url!r}"
            + (f" changed since {since.date().isoformat()}" if since else "")
            + ". Search for it, list what changed recently, or create the entry.",
            entry=strip_memory_scheme(url),
            context=True,
        )
    reached = neighbourhood(actor, [e.pk for e in primary], depth=depth, as_of=at)
    related_entries = entries.filter(pk__in=[r["id"] for r in reached])
    if since is not None:
        related_entries = related_entries.filter(updated_at__gte=since)
    by_id = {e.pk: e for e in related_entries}
    reached = [r for r in reached if r["id"] in by_id]
    reached.sort(key=lambda r: (r["distance"], -by_id[r["id"]].updated_at.timestamp()))
    shown = reached[:max_related]
    ids = [e.pk for e in primary] + [r["id"] for r in shown]
    history = {e.pk for e in primary} if include_history else set()
    observations, cut = _observations(actor, ids, at, history)
    # Each related entry names the entry it was reached through by short id and title, so a
    # reader knows what links where without a get per hop.
    known = {e.pk: e for e in primary} | by_id
    # The entries a glob or a search matched may link to each other: the neighbourhood starts
    # from all of them, so those links are no hop to anything and would go unsaid.
    among = links_among(actor, [e.pk for e in primary], as_of=at) if len(primary) > 1 else []
    return {
        "url": url,
        "matched": matched,
        "depth": depth,
        "timeframe": timeframe or None,
        "as_of": at.isoformat() if at else None,
        "primary": [
            {
                **entry_compact(e),
                "excerpt": excerpt(e.body),
                "observations": observations.get(e.pk, []),
                "observations_cut": e.pk in cut,
            }
            for e in primary
        ],
        "primary_cut": primary_cut,
        "links": [
            {
                "source": known[source].short_id,
                "source_title": known[source].title,
                "type": rtype,
                "target": known[target].short_id,
                "target_title": known[target].title,
            }
            for source, target, rtype in among
        ],
        "related": [
            {
                **entry_compact(by_id[r["id"]]),
                "excerpt": excerpt(by_id[r["id"]].body),
                "observations": observations.get(r["id"], []),
                "observations_cut": r["id"] in cut,
                "relation": {
                    "type": r["type"],
                    "direction": r["direction"],
                    "distance": r["distance"],
                    "via": known[r["via"]].short_id if r["via"] in known else "",
                    "via_title": known[r["via"]].title if r["via"] in known else "",
                },
            }
            for r in shown
        ],
        "total_related": len(reached),
        "max_related": max_related,
        "cut": len(reached) > len(shown),
    }
