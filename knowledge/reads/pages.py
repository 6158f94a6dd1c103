"""Reads for the pages people see (web/): one selector per page, constant query counts.

Apart from knowledge.selectors because the entry page also reads the graph, whose selectors
build on knowledge.selectors.
"""

from __future__ import annotations

from django.db.models import Count, Max, Q

from knowledge.actors import Actor
from knowledge.errors import NotFound
from knowledge.graph.selectors import entry_relations
from knowledge.models import (
    EntryStatus,
    Observation,
    Subtopic,
)
from knowledge.note_types.reads import (
    MAX_ENTRIES,
    entry_schema_fit,
    fits_of,
    note_type_of,
    note_types_of,
)
from knowledge.paths import normalize_path
from knowledge.reads.listings import entry_list
from knowledge.selectors import (
    entry_lookup,
    entry_not_found,
    project_get,
    visible_entries,
    visible_projects,
    writable_projects,
)


def home_page(actor: Actor, *, recent_limit: int = 15, open_limit: int = 15) -> dict:
    """What a person sees first: the projects they may see (entry count, last change, superseded
    entries left out), the latest changes across them and the entries still open."""
    current = ~Q(entries__status=EntryStatus.SUPERSEDED)
    projects = (
        visible_projects(actor)
        .annotate(
            entry_count=Count("entries", filter=current),
            last_change=Max("entries__updated_at"),
        )
        .order_by("slug")
    )
    entries = entry_list(actor)
    return {
        "projects": list(projects),
        "recent": list(entries[: max(1, min(recent_limit, 100))]),
        "open": list(entries.filter(status=EntryStatus.OPEN)[: max(1, min(open_limit, 100))]),
    }


def project_page(
    actor: Actor,
    *,
    project: str | int,
    subtopic: str | None = None,
    kind: str | None = None,
    misfits: bool = False,
    limit: int = 200,
) -> dict:
    """A project or one of its subtopics as a page: the whole subtopic tree (direct entry
    counts, superseded left out), the current node and its ancestors, and up to `limit`
    entries directly in it, by title. NotFound for a subtopic that does not exist.

    The project itself also lists its note types (`note_types`, see note_types_of); with
    `kind`, the listing is that type's entries anywhere in the project, each with how it fits
    the type's schema (`schema_fit` on the entry), and with `misfits` only those that do not."""
    proj = project_get(actor, project)
    path = normalize_path(subtopic) if subtopic else ""
    current = ~Q(entries__status=EntryStatus.SUPERSEDED)
    tree = [
        {"path": s.path, "name": s.name, "depth": s.depth, "entries": s.n}
        for s in Subtopic.objects.filter(project=proj)
        .annotate(n=Count("entries", filter=current))
        .order_by("path")
    ]
    by_path = {node["path"]: node for node in tree}
    if path and path not in by_path:
        raise NotFound(
            f"Project {proj.slug!r} has no subtopic {path!r}.", project=proj.slug, subtopic=path
        )
    for node in tree:  # subtree totals, for the tree's counts
        node["total"] = node["entries"]
    for node in reversed(tree):
        parent = node["path"].rpartition("/")[0]
        if parent in by_path:
            by_path[parent]["total"] += node["total"]
    limit = max(1, min(limit, 1000))
    note_types = [] if path else note_types_of(actor, proj)
    kind = note_type_of(kind)[:60]
    if kind and not path:
        listing = _entries_of_kind(actor, proj, kind, note_types, misfits=misfits, limit=limit)
    else:
        kind, entries = "", entry_list(actor).filter(project=proj)
        entries = (
            entries.filter(subtopic__path=path) if path else entries.filter(subtopic__isnull=True)
        )
        listing = list(entries.order_by("title")[:limit])
    parts = path.split("/") if path else []
    crumbs = [
        by_path.get("/".join(parts[: i + 1]), {"path": "/".join(parts[: i + 1])})
        for i in range(len(parts))
    ]
    return {
        "project": proj,
        "subtopic": by_path.get(path),
        "path": path,
        "crumbs": crumbs,
        "tree": tree,
        "entries": listing,
        "note_types": note_types,
        "kind": kind,
        "kind_type": next((t for t in note_types if t.kind == kind), None),
        "misfits": misfits and bool(kind),
        "can_write": writable_projects(actor).filter(pk=proj.pk).exists(),
    }


def _entries_of_kind(actor, proj, kind, note_types, *, misfits: bool, limit: int) -> list:
    """The entries of `kind` in `proj` by title, each with `schema_fit` (a Report, or None
    when the type has no schema); `misfits`: only those that do not fit (of the newest
    MAX_ENTRIES). One query, two when the schema has relation fields."""
    schema = next((t.schema for t in note_types if t.kind == kind), None)
    entries = entry_list(actor).filter(project=proj, kind=kind)
    if misfits and schema is not None:
        found = list(entries[:MAX_ENTRIES])
        for entry, report in zip(found, fits_of(actor, schema, found), strict=True):
            entry.schema_fit = report
        found = [e for e in found if not e.schema_fit.fits]
        return sorted(found, key=lambda e: e.title.lower())[:limit]
    found = list(entries.order_by("title")[:limit])
    reports = fits_of(actor, schema, found) if schema else [None] * len(found)
    for entry, report in zip(found, reports, strict=True):
        entry.schema_fit = report
    return [] if misfits else found


MAX_PAGE_OBSERVATIONS = 200


def entry_page(actor: Actor, ref: str | int) -> dict:
    """One entry as a page: the entry with who wrote, changed and verified it, its sources,
    the entries it supersedes / is superseded by (only those the actor may see), whether
    the actor may change it, its current observations by category ([(category, [obs])]) and
    its relations (`outgoing`, `backlinks`: see knowledge.graph.selectors.entry_relations)."""
    entry = entry_lookup(
        visible_entries(actor)
        .select_related("project", "subtopic", "created_by", "updated_by", "verified_by")
        .prefetch_related("sources"),
        ref,
    )
    if entry is None:
        raise entry_not_found(actor, ref)
    linked = [pk for pk in (entry.supersedes_id, entry.superseded_by_id) if pk]
    around = (
        {e.pk: e for e in visible_entries(actor).filter(pk__in=linked).select_related("project")}
        if linked
        else {}
    )
    # The graph selectors build on this module; imported here to keep the import one-way.
    observations: dict[str, list[Observation]] = {}
    for obs in Observation.objects.filter(entry_id=entry.pk, valid_to__isnull=True).order_by(
        "category", "position", "pk"
    )[:MAX_PAGE_OBSERVATIONS]:
        observations.setdefault(obs.category, []).append(obs)
    return {
        "entry": entry,
        "supersedes": around.get(entry.supersedes_id),
        "superseded_by": around.get(entry.superseded_by_id),
        "can_write": writable_projects(actor).filter(pk=entry.project_id).exists(),
        "observations": sorted(observations.items()),
        # how it fits its note type's schema (None: no schema applies); one query
        "schema_fit": entry_schema_fit(actor, entry),
        **entry_relations(actor, entry),
    }


def search_choices(actor: Actor) -> dict:
    """The values a search form offers: the projects and kinds the actor may see."""
    kinds = visible_entries(actor).order_by("kind").values_list("kind", flat=True).distinct()[:100]
    return {
        "projects": list(visible_projects(actor).order_by("slug").values_list("slug", "name")),
        "kinds": list(kinds),
        "statuses": list(EntryStatus.values),
    }
