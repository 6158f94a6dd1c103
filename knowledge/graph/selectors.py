"""Graph reads, scoped by the actor like every selector: an entry's relations and backlinks,
the neighbourhood walk, graph data for a page, and observation search (build_context, an entry
and its neighbourhood in one answer, builds on these in knowledge.reads.context).

What the reader may not see never shows: a relation to a hidden entry shows only the link text
its author wrote; a hidden entry's links to a visible one are not backlinks; traversal never
passes through a hidden entry.
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.contrib.postgres.search import SearchQuery, SearchRank
from django.db.models import Exists, F, OuterRef, Q, QuerySet

from knowledge.actors import Actor
from knowledge.errors import NotFound, ValidationFailed
from knowledge.models import Entry, EntryStatus, Observation, Relation
from knowledge.selectors import (
    entry_lookup,
    project_get,
    strip_memory_scheme,
    visible_entries,
    visible_projects,
)

MAX_DEPTH = 3
MAX_FRONTIER = 500  # entries expanded per hop
MAX_EDGES_PER_HOP = 5000
MAX_LINKS_AMONG = 50  # links among the entries a glob or a search matched, shown with them
MAX_RELATIONS = 200  # per direction in entry_relations
MAX_NODES = 2000
# Each of MAX_NODES entries may hold 500 relations: a million edges in one answer. The edges
# between the nodes shown stop here (`edges_cut` says so).
MAX_GRAPH_EDGES = 10_000
EXCERPT_CHARS = 240


# --- shapes -------------------------------------------------------------------------------------


def entry_compact(entry: Entry) -> dict:
    """id, short_id, title, path, permalink, project, kind, status, updated."""
    return {
        "id": entry.pk,
        "short_id": entry.short_id,
        "title": entry.title,
        "path": entry.path,
        "permalink": entry.permalink,
        "project": entry.project.slug,
        "kind": entry.kind,
        "status": entry.status,
        "updated": entry.updated_at.isoformat(),
    }


def observation_dict(obs: Observation) -> dict:
    return {
        "category": obs.category,
        "content": obs.content,
        "tags": list(obs.tags),
        "context": obs.context,
        "current": obs.valid_to is None,
        "since": obs.valid_from.isoformat(),
        "since_version": obs.valid_from_version,
        "until": obs.valid_to.isoformat() if obs.valid_to else None,
        "until_version": obs.valid_to_version,
    }


def excerpt(body: str, size: int = EXCERPT_CHARS) -> str:
    text = " ".join(body.split())
    return text if len(text) <= size else text[: size - 1].rstrip() + "…"


def facts_at(rows: QuerySet, as_of: datetime | None) -> QuerySet:
    """Facts current now, or at `as_of`."""
    if as_of is None:
        return rows.filter(valid_to__isnull=True)
    return rows.filter(Q(valid_to__isnull=True) | Q(valid_to__gt=as_of), valid_from__lte=as_of)


def bounded(value, name: str, low: int, high: int) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = low - 1
    if not low <= number <= high:
        raise ValidationFailed(f"{name} must be between {low} and {high}.", field=name)
    return number


def seen_when_written(rows: QuerySet, entry_field: str, visible: QuerySet) -> QuerySet:
    """Past facts (no longer current) only when the revision that wrote them lived in a project
    the reader can see: an entry moved out of a hidden project keeps its hidden past hidden,
    like its revisions (a current fact is in the body the reader sees anyway)."""
    written = Entry.history.filter(
        id=OuterRef(entry_field),
        version=OuterRef("valid_from_version"),
        project_id__in=visible.values("pk"),
    )
    return rows.filter(Q(valid_to__isnull=True) | Exists(written))


# --- an entry's relations ------------------------------------------------------------------------


def entry_relations(actor: Actor, entry: Entry, *, backlinks: bool = True) -> dict:
    """The entry's current outgoing relations (resolved or waiting) and its backlinks (unless
    backlinks=False: a write's report shows only what the new text links to).

    `entry` is one the actor can see (from entry_get). An outgoing relation whose target the
    actor may not see has `entry: None`, like a waiting one: only the link text shows.
    """
    visible = visible_projects(actor)
    outgoing = []
    rows = (
        Relation.objects.filter(source_id=entry.pk, valid_to__isnull=True)
        .select_related("target__project", "target__subtopic")
        .annotate(shown=Q(target__project__in=visible))
        .order_by("position", "pk")[:MAX_RELATIONS]
    )
    for rel in rows:
        target = rel.target if rel.target_id and rel.shown else None
        outgoing.append(
            {
                "type": rel.relation_type,
                "target_text": rel.target_text,
                "entry": entry_compact(target) if target else None,
            }
        )
    if not backlinks:
        return {"outgoing": outgoing, "backlinks": []}
    incoming = [
        {"type": rel.relation_type, "entry": entry_compact(rel.source)}
        for rel in Relation.objects.filter(
            target_id=entry.pk, valid_to__isnull=True, source__project__in=visible
        )
        .select_related("source__project", "source__subtopic")
        .order_by("-source__updated_at", "pk")[:MAX_RELATIONS]
    ]
    return {"outgoing": outgoing, "backlinks": incoming}


# --- the neighbourhood walk -----------------------------------------------------------------------


def neighbourhood(
    actor: Actor, start: list[int], *, depth: int, as_of: datetime | None = None
) -> list[dict]:
    """Entries reached from `start` over relations in both directions, nearest first:
    [{"id", "type", "direction" (outgoing/incoming), "distance", "via"}], each entry once."""
    visible = visible_projects(actor)
    seen = set(start)
    frontier = list(start)
    found = []
    for distance in range(1, depth + 1):
        if not frontier:
            break
        frontier = frontier[:MAX_FRONTIER]
        # One query per hop, both directions; each end must be visible.
        rows = facts_at(Relation.objects.filter(target__isnull=False), as_of)
        if as_of is not None:
            rows = seen_when_written(rows, "source_id", visible)
        edges = rows.filter(
            Q(source_id__in=frontier, target__project__in=visible)
            | Q(target_id__in=frontier, source__project__in=visible)
        ).values_list("source_id", "target_id", "relation_type")[:MAX_EDGES_PER_HOP]
        hop = set(frontier)
        edges = list(edges)
        out = [e for e in edges if e[0] in hop]
        inc = [e for e in edges if e[1] in hop and e[0] not in hop]
        nxt = []
        for direction, pairs in (("outgoing", out), ("incoming", inc)):
            for source, target, rtype in pairs:
                other, via = (target, source) if direction == "outgoing" else (source, target)
                if other in seen:
                    continue
                seen.add(other)
                nxt.append(other)
                found.append(
                    {
                        "id": other,
                        "type": rtype,
                        "direction": direction,
                        "distance": distance,
                        "via": via,
                    }
                )
        frontier = nxt
    return found


def links_among(
    actor: Actor, ids: list[int], *, as_of: datetime | None = None, limit: int = MAX_LINKS_AMONG
) -> list[tuple[int, int, str]]:
    """The relations between entries of `ids` (which the caller may see): (source id, target
    id, type), in the source's order of writing, at most `limit`."""
    rows = facts_at(Relation.objects.filter(source_id__in=ids, target_id__in=ids), as_of)
    if as_of is not None:
        rows = seen_when_written(rows, "source_id", visible_projects(actor))
    rows = rows.exclude(source_id=F("target_id")).order_by("source_id", "position", "pk")
    return list(rows.values_list("source_id", "target_id", "relation_type")[:limit])


# --- graph data for a page ----------------------------------------------------------------------


def graph_data(
    actor: Actor,
    *,
    project: str | int | None = None,
    around: str | int | None = None,
    depth: int = 1,
    limit: int = MAX_NODES,
) -> dict:
    """Nodes (entries, with their degree in this graph) and edges (typed relations) of a project,
    of an entry's neighbourhood (`around`, up to `depth` hops), or of everything the actor can
    see; at most `limit` nodes, newest first (`cut` says when there were more), and at most
    MAX_GRAPH_EDGES edges between them (`edges_cut`)."""
    limit = bounded(limit, "limit", 1, MAX_NODES)
    depth = bounded(depth, "depth", 1, MAX_DEPTH)
    entries = visible_entries(actor).select_related("project", "subtopic")
    cut = False
    if around not in (None, ""):
        centre = entry_lookup(entries, around)
        if centre is None:
            ref = str(around)
            raise NotFound(f"No entry {ref!r} that you can see.", entry=strip_memory_scheme(ref))
        reached = neighbourhood(actor, [centre.pk], depth=depth)
        cut = len(reached) + 1 > limit
        ids = [centre.pk, *(r["id"] for r in reached[: limit - 1])]
        nodes = list(entries.filter(pk__in=ids))
    else:
        if project not in (None, ""):
            entries = entries.filter(project=project_get(actor, project))
        nodes = list(
            entries.exclude(status=EntryStatus.SUPERSEDED).order_by("-updated_at", "-pk")[
                : limit + 1
            ]
        )
        cut = len(nodes) > limit
        nodes = nodes[:limit]
    ids = {e.pk for e in nodes}
    edges = [
        {"source": s, "target": t, "type": rtype}
        for s, t, rtype in Relation.objects.filter(
            valid_to__isnull=True, source_id__in=ids, target_id__in=ids
        )
        .order_by("pk")
        .values_list("source_id", "target_id", "relation_type")[: MAX_GRAPH_EDGES + 1]
    ]
    edges_cut = len(edges) > MAX_GRAPH_EDGES
    edges = edges[:MAX_GRAPH_EDGES]
    degree = dict.fromkeys(ids, 0)
    for edge in edges:
        degree[edge["source"]] += 1
        degree[edge["target"]] += 1
    return {
        "nodes": [
            {
                "id": e.pk,
                "short_id": e.short_id,
                "title": e.title,
                "path": e.path,
                "project": e.project.slug,
                "kind": e.kind,
                "degree": degree[e.pk],
            }
            for e in nodes
        ],
        "edges": edges,
        "cut": cut,
        "limit": limit,
        "edges_cut": edges_cut,  # degrees then count only the edges shown
    }


# --- observation search --------------------------------------------------------------------------


def observation_search(
    actor: Actor,
    query: str = "",
    *,
    category: str | None = None,
    project: str | int | None = None,
    limit: int = 20,
) -> list[dict]:
    """Current observations of entries the actor can see that match `query` (full text) and/or
    `category`, best first; each with its entry (compact)."""
    limit = bounded(limit, "limit", 1, 100)
    query = (query or "").strip()[:500]
    category = " ".join((category or "").split()).lower() or None
    if not query and not category:
        raise ValidationFailed("Give query words, a category, or both.", field="query")
    rows = Observation.objects.filter(
        valid_to__isnull=True, entry__project__in=visible_projects(actor)
    ).select_related("entry__project", "entry__subtopic")
    if project not in (None, ""):
        rows = rows.filter(entry__project=project_get(actor, project))
    if category:
        rows = rows.filter(category=category)
    if query:
        tsquery = SearchQuery(query, search_type="websearch", config=settings.CAIRN_SEARCH_CONFIG)
        rows = rows.filter(search_vector=tsquery).annotate(
            rank=SearchRank(F("search_vector"), tsquery)
        )
        rows = rows.order_by("-rank", "-entry__updated_at", "pk")
    else:
        rows = rows.order_by("-entry__updated_at", "position", "pk")
    return [{**observation_dict(o), "entry": entry_compact(o.entry)} for o in rows[:limit]]
