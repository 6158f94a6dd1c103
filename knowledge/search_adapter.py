"""Search hits as plain dicts, the shape both REST and MCP answer with."""

from __future__ import annotations

from dataclasses import asdict

from knowledge.actors import Actor
from knowledge.search import search_entries


def search(actor: Actor, query: str, **filters) -> list[dict]:
    """id, short_id, title, project, path, kind, tags, status, updated (ISO), score, snippet."""
    hits = []
    for hit in search_entries(actor, query, **filters):
        data = asdict(hit)
        data["updated"] = hit.updated.isoformat()
        hits.append(data)
    return hits
