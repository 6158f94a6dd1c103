"""Search without words: the entries the filters select, newest first ("what changed in
incidents this week"). The same scope as a search with words, so the same entries qualify."""

from __future__ import annotations

from knowledge.actors import Actor
from knowledge.errors import ValidationFailed
from knowledge.search.filters import SearchFilters
from knowledge.search.hits import HitRow, plain_snippet
from knowledge.search.scope import search_scope
from knowledge.search.types import SearchHit


def filtered_entries(actor: Actor, filters: SearchFilters, *, limit: int) -> list[SearchHit]:
    """Entries matching the filters, most recently changed first; refused without a filter."""
    if filters.project is None and not filters.narrowed:
        raise ValidationFailed(
            "Give words to search for, or at least one filter (project, subtopic, kinds, tags, "
            "status, category, a date) to list what matches, newest first.",
            field="query",
        )
    entries, _ = search_scope(actor, filters)
    rows = entries.select_related("project", "subtopic").order_by("-updated_at", "-id")[:limit]
    return [
        HitRow.of(e).hit(score=0.0, snippet=plain_snippet(e.body), matched=["filters"])
        for e in rows
    ]
