"""MCP resources and prompts on the same selectors and handlers as the tools.

Resources: every entry the caller can see, at its memory:// address (resources/list paged by
id, one template, resources/read gives the entry as Markdown). Prompts: recall what the memory
holds about a topic, record this session, what changed in a project this week.
"""

from __future__ import annotations

from datetime import timedelta

from asgiref.sync import sync_to_async
from django.utils import timezone
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, Resource, ResourceTemplate
from pydantic import ValidationError

from knowledge.actors import Actor
from knowledge.errors import KnowledgeError
from knowledge.reads.listings import entries_page, entries_recent
from knowledge.selectors import entry_get
from mcp_api import tools
from mcp_api.auth import current_actor
from mcp_api.connections import recycle_connection

PAGE = 100
MARKDOWN = "text/markdown"
TEMPLATES = [
    ResourceTemplate(
        uri_template="memory://{project}/{+path}",
        name="entry",
        description="An entry at memory://project/subtopic/path/entry-slug (its address in "
        "get and search answers).",
        mime_type=MARKDOWN,
    )
]


async def _run(fn, *args):
    actor = current_actor()

    def go():
        recycle_connection()
        return fn(actor, *args)

    return await sync_to_async(go, thread_sensitive=False)()


def _page(actor: Actor, cursor: str | None) -> tuple[list[Resource], str | None]:
    if cursor is not None and not cursor.isdigit():
        raise MCPError(INVALID_PARAMS, f"Invalid cursor {cursor[:40]!r}: pass nextCursor back.")
    entries, after = entries_page(actor, after=int(cursor or 0), limit=PAGE)
    resources = [
        Resource(
            uri=e.permalink,
            name=e.short_id,
            title=e.title,
            description=f"{e.kind} · {e.status} · {e.path}",
            mime_type=MARKDOWN,
        )
        for e in entries
    ]
    return resources, str(after) if after else None


def _read(actor: Actor, uri: str) -> str:
    try:
        entry = entry_get(actor, uri)
    except KnowledgeError as exc:
        raise MCPError(INVALID_PARAMS, exc.message, {"uri": uri}) from exc
    tags = f" · tags: {', '.join(entry.tags)}" if entry.tags else ""
    head = (
        f"# {entry.title}\n\n{entry.short_id} · {entry.permalink} · {entry.kind} · "
        f"{entry.status} · v{entry.version} · {entry.updated_at:%Y-%m-%d}{tags}"
    )
    return f"{head}\n\n{entry.body}"


async def list_page(cursor: str | None) -> tuple[list[Resource], str | None]:
    return await _run(_page, cursor)


async def read(uri: str) -> str:
    return await _run(_read, uri)


# --- prompts --------------------------------------------------------------------------------------


def _text(result) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "text", None))


def _recall(actor: Actor, topic: str) -> str:
    try:
        found = tools.answer("build_context", actor, {"id": topic})
    except ValidationError as exc:  # a topic past the length of a reference
        return "; ".join(err["msg"] for err in exc.errors())
    return (
        f"Recall what the team memory (Cairn) holds about {topic!r}. Retrieved now:\n\n"
        f"{_text(found)}\n\nAnswer from this, naming the entries (short ids) you rely on; say "
        "what it does not cover. Read one in full with get(id); search(query) for more."
    )


def _changes(actor: Actor, project: str) -> str:
    since = timezone.now() - timedelta(days=7)
    try:
        entries = entries_recent(actor, project=project, since=since, limit=50)
    except KnowledgeError as exc:
        return exc.message
    lines = [
        f"- {e.short_id} · {e.title} · {e.path} · {e.kind} · {e.status} · v{e.version} · "
        f"{e.updated_at:%Y-%m-%d}"
        for e in entries
    ] or ["(nothing changed)"]
    return (
        f"Summarise what changed in project {project} since {since:%Y-%m-%d}: decisions, "
        "incidents, open items and what was resolved. Entries changed (newest first):\n"
        + "\n".join(lines)
        + "\n\nFor what changed in one, history(id) then diff(id, from_version=…); "
        "list_open(project) for what still needs follow-up."
    )


async def recall(topic: str) -> str:
    """Recall what the team memory holds about a topic: the best matches with their facts
    and links, to answer from."""
    return await _run(_recall, topic)


async def changes_this_week(project: str) -> str:
    """What changed in a project in the last 7 days, to summarise."""
    return await _run(_changes, project)


def record_session(project: str, topic: str = "") -> str:
    """Record this session in the team memory: decisions, facts, open items, links."""
    day = timezone.now().date().isoformat()
    about = f": {topic}" if topic else ": <what it was about>"
    return (
        f"Record this session in Cairn project {project}.\n"
        "1. search(query=<its topic>) for an entry to update instead of a new one; "
        "check_sources(sources) for mails or tickets you used.\n"
        f'2. upsert(project="{project}", subtopic="sessions/{day[:7]}", kind="session", '
        f'title="Session {day}{about}", body=…) with one line per fact: `- [decision] …`, '
        "`- [fact] …`, `- [todo] …` and links `- relates_to [[Other entry]]`.\n"
        "3. Open items that need follow-up: their own entries, kind task.\n"
        "Leave out secrets and personal data unless the user asked to keep them."
    )


PROMPTS = [recall, record_session, changes_this_week]
