"""An entry's fields as every MCP answer carries them (structured content). Imports nothing
of mcp_api, so render may use it."""

from __future__ import annotations

from knowledge.models import Entry
from knowledge.selectors.supersession import LINKS, shown_link


def entry_meta(entry: Entry, unseen: frozenset[int]) -> dict:
    """An entry's fields; a supersession link in `unseen` (knowledge.selectors.supersession:
    an entry the caller may not see) is None, with `<link>_hidden: true`."""
    meta = {
        "id": entry.pk,
        "short_id": entry.short_id,
        "title": entry.title,
        "project": entry.project.slug,
        "subtopic": entry.subtopic.path if entry.subtopic_id else "",
        "path": entry.path,
        "address": entry.permalink,
        "kind": entry.kind,
        "tags": list(entry.tags),
        "status": entry.status,
        "version": entry.version,
        "generated_by": entry.generated_by,
        "verified": entry.is_verified,
        "supersedes": shown_link(entry, "supersedes", unseen),
        "superseded_by": shown_link(entry, "superseded_by", unseen),
        "updated": entry.updated_at.isoformat(),
        "chars": entry.chars,
        "lines": entry.lines,
    }
    for link in LINKS:
        if getattr(entry, f"{link}_id") in unseen:
            meta[f"{link}_hidden"] = True
    return meta
