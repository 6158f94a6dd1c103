"""Shape tool answers: a short text for the model plus structured content for programs.

Every answer ends with one line on what to do next; errors are a menu of next moves.
"""

from __future__ import annotations

import json

from mcp_types import CallToolResult, TextContent

from knowledge.errors import EntryConflict, KnowledgeError, NotFound
from knowledge.models import Entry


def result(text: str, data: dict) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def error(text: str, data: dict) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content={"error": data},
        is_error=True,
    )


def entry_meta(entry: Entry) -> dict:
    return {
        "id": entry.pk,
        "short_id": entry.short_id,
        "title": entry.title,
        "project": entry.project.slug,
        "subtopic": entry.subtopic.path if entry.subtopic_id else "",
        "path": entry.path,
        "kind": entry.kind,
        "tags": list(entry.tags),
        "status": entry.status,
        "version": entry.version,
        "generated_by": entry.generated_by,
        "verified": entry.is_verified,
        "supersedes": entry.supersedes_id,
        "superseded_by": entry.superseded_by_id,
        "updated": entry.updated_at.isoformat(),
    }


def hit_line(hit: dict) -> str:
    tags = f" [{', '.join(hit['tags'])}]" if hit.get("tags") else ""
    status = "" if hit.get("status") in ("active", None) else f" ({hit['status']})"
    head = f"- {hit['short_id']} · {hit['title']}{status} · {hit['path']} · {hit['kind']}{tags}"
    snippet = (hit.get("snippet") or "").strip()
    return f"{head}\n  {snippet}" if snippet else head


def knowledge_error(exc: KnowledgeError, *, hints: list[str] | None = None) -> CallToolResult:
    lines = [exc.message]
    suggestions = exc.data.get("suggestions") or []
    if suggestions:
        lines.append("Close matches: " + ", ".join(json.dumps(s) for s in suggestions))
    lines.extend(hints or [])
    if isinstance(exc, EntryConflict):
        ref = exc.data["entry"]
        lines.append(
            f'Retry: get("{ref}") to read the current text, then repeat your call with '
            f"expected_version={exc.data['current_version']}."
        )
    data = {**exc.as_dict()}
    return error("\n".join(lines), _jsonable(data))


def not_found_hints(exc: NotFound, ref: str, hits: list[dict]) -> list[str]:
    hints = []
    if hits:
        hints.append("Search found: " + "; ".join(f"{h['short_id']} {h['title']!r}" for h in hits))
    term = ref.rsplit("/", 1)[-1] if "/" in ref else ref
    hints.append(
        f'Try search("{term}"), or create it with upsert(project=…, title="{term}", body=…).'
    )
    return hints


def _jsonable(data: dict) -> dict:
    return json.loads(json.dumps(data, default=str))
