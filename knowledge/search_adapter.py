"""One search call for the surfaces: hybrid search when knowledge.search exists, else full text.

knowledge.search (hybrid FTS + vectors) is built in parallel; until it lands this falls back
to selectors.text_search and returns the same hit shape, so the surfaces never change.
"""

from __future__ import annotations

from dataclasses import asdict, is_dataclass
from datetime import datetime

from knowledge.actors import Actor
from knowledge.models import EntryStatus
from knowledge.paths import normalize_path
from knowledge.selectors import entry_list

SNIPPET_CHARS = 200


def _snippet(body: str, query: str) -> str:
    text = " ".join(body.split())
    lower = text.lower()
    pos = min((p for w in query.lower().split() if (p := lower.find(w)) >= 0), default=0)
    start = max(0, pos - 60)
    cut = text[start : start + SNIPPET_CHARS]
    return ("…" if start else "") + cut + ("…" if start + SNIPPET_CHARS < len(text) else "")


def _hit_dict(hit) -> dict:
    data = asdict(hit) if is_dataclass(hit) else dict(hit)
    if isinstance(data.get("updated"), datetime):
        data["updated"] = data["updated"].isoformat()
    return data


def _fallback(
    actor: Actor,
    query: str,
    *,
    project=None,
    subtopic=None,
    kinds=None,
    tags=None,
    tags_all=False,
    status=None,
    after=None,
    before=None,
    limit=10,
    include_history=False,
    include_transcripts=False,
    **_ignored,
) -> list[dict]:
    from django.conf import settings
    from django.contrib.postgres.search import SearchQuery, SearchRank
    from django.db.models import F

    entries = entry_list(
        actor,
        project=project,
        subtopic=subtopic,
        kinds=kinds or None,
        status=status or None,
        include_history=include_history,
    )
    if not include_transcripts:
        entries = entries.filter(searchable=True)
    if tags:
        entries = (
            entries.filter(tags__contains=tags) if tags_all else entries.filter(tags__overlap=tags)
        )
    if after:
        entries = entries.filter(updated_at__gte=after)
    if before:
        entries = entries.filter(updated_at__lt=before)
    if query.strip():
        q = SearchQuery(query, search_type="websearch", config=settings.CAIRN_SEARCH_CONFIG)
        entries = (
            entries.filter(search_vector=q)
            .annotate(rank=SearchRank(F("search_vector"), q))
            .order_by("-rank", "-updated_at")
        )
    hits = []
    for e in entries[:limit]:
        hits.append(
            {
                "id": e.pk,
                "short_id": e.short_id,
                "title": e.title,
                "path": e.path,
                "kind": e.kind,
                "tags": list(e.tags),
                "status": e.status,
                "updated": e.updated_at.isoformat(),
                "score": round(float(getattr(e, "rank", 0.0)), 4),
                "snippet": _snippet(e.body, query),
            }
        )
    return hits


def search(actor: Actor, query: str, **filters) -> list[dict]:
    """Hits as dicts: id, short_id, title, path, kind, tags, status, updated, score, snippet."""
    if filters.get("subtopic"):
        filters["subtopic"] = normalize_path(filters["subtopic"])
    if filters.get("status") and isinstance(filters["status"], str):
        filters["status"] = [filters["status"]]
    if filters.get("status") and EntryStatus.SUPERSEDED in filters["status"]:
        filters["include_history"] = True
    try:
        from knowledge.search import search_entries
    except ImportError:
        return _fallback(actor, query, **filters)
    return [_hit_dict(h) for h in search_entries(actor, query, **filters)]
