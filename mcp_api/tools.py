"""The MCP tools: their signatures, descriptions and annotations, as plain async functions
that hop to a worker thread and call mcp_api.handlers. TOOLS lists them in tools/list order;
mcp_api.app registers them.

Descriptions and Field descriptions are what the agent reads: keep them short and concrete.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal

from asgiref.sync import sync_to_async
from django.conf import settings
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field

from knowledge import limits
from knowledge.actors import Actor
from mcp_api import handlers
from mcp_api.auth import current_actor
from mcp_api.connections import recycle_connection
from ops.timing import content_size, timed

READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
IDEMPOTENT_WRITE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
DESTRUCTIVE = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)

# Every string argument has a maximum length (knowledge.limits): a long one is refused before
# any work, with the argument and the limit named (CairnMCP.call_tool words the error).
Project = Annotated[
    str, Field(max_length=limits.PROJECT, description="Project slug or name (case-insensitive).")
]
OptProject = Annotated[
    str | None, Field(max_length=limits.PROJECT, description="Project slug or name; omit for all.")
]
Subtopic = Annotated[
    str | None,
    Field(max_length=limits.PATH, description="Subtopic path, 'a/b' or 'a > b'; created on write."),
]
_Item = Annotated[str, Field(max_length=limits.SHORT)]
StrList = Annotated[
    Annotated[list[_Item], Field(max_length=limits.ITEMS)]
    | Annotated[str, Field(max_length=limits.TAGS)]
    | None,
    Field(description="A list or 'a, b'."),
]
EntryRef = Annotated[
    int | Annotated[str, Field(max_length=limits.REF)],
    Field(description="Entry id (42), short id, project/subtopic/title or memory:// address."),
]
Status = Annotated[
    Literal["active", "open", "resolved", "superseded", "archived"] | None,
    Field(description="open = needs follow-up; resolved when done."),
]
Version = Annotated[
    int | None, Field(description="Fail with a conflict if the entry's version differs.")
]
Reason = Annotated[
    str, Field(max_length=limits.REASON, description="Why (kept in the entry's history).")
]
Title = Annotated[str, Field(max_length=limits.TITLE)]
Short = Annotated[str, Field(max_length=limits.SHORT)]
Since = Annotated[
    Short | None, Field(description="Changed since: ISO date or age like '7d', '2 weeks'.")
]
# Bodies (and edit's content and find) keep their byte limit, CAIRN_MAX_BODY_BYTES, which the
# services check before any work, in bytes as the setting says.
Body = str
_SourceKey = Annotated[str, Field(max_length=max(map(len, limits.SOURCE_FIELDS)))]
Sources = Annotated[
    list[dict[_SourceKey, Annotated[str, Field(max_length=limits.URL)]]],
    Field(max_length=limits.ITEMS),
]


def _run(handler, actor: Actor, kwargs: dict[str, Any]) -> CallToolResult:
    recycle_connection()  # what Django does around a request, which a tool call doesn't get
    with timed("mcp", handler.__name__, content_bytes=content_size(kwargs)) as timer:
        result = handlers.guarded(handler, actor, **kwargs)
        if result.is_error:
            timer.outcome = "refused"
    return result


async def _call(handler, **kwargs: Any) -> CallToolResult:
    actor = current_actor()
    return await sync_to_async(_run, thread_sensitive=False)(handler, actor, kwargs)


async def search(
    query: Annotated[
        str,
        Field(
            max_length=settings.CAIRN_SEARCH_MAX_QUERY_CHARS,
            description="Words; quotes for phrases. Empty: filters only, newest first.",
        ),
    ] = "",
    project: OptProject = None,
    subtopic: Subtopic = None,
    kinds: StrList = None,
    tags: StrList = None,
    status: StrList = None,
    since: Since = None,
    before: Annotated[Short | None, Field(description="Changed before: ISO date or age.")] = None,
    limit: Annotated[int, Field(ge=1, le=50)] = 10,
    include_history: Annotated[bool, Field(description="Also show superseded entries.")] = False,
    category: Annotated[
        StrList, Field(description="Only entries with an observation '- [category] …' of these.")
    ] = None,
) -> CallToolResult:
    """Search the team memory: compact hits, best first; read one with get(id). Search
    before writing anything."""
    return await _call(handlers.search, **locals())


async def get(
    id: EntryRef,
    offset: Annotated[int, Field(ge=0, description="Start at this character.")] = 0,
    max_chars: Annotated[int, Field(ge=200, le=50000)] = 8000,
) -> CallToolResult:
    """Read one entry: metadata and a window of its body; next_offset says where more
    continues."""
    return await _call(handlers.get, **locals())


async def upsert(
    project: Project,
    title: Annotated[Title, Field(description="Identity within the subtopic (case-insensitive).")],
    body: Annotated[
        Body,
        Field(
            description="The whole Markdown body. `- [category] fact #tag` lines are "
            "observations; `- relation_type [[Other title]]` lines are links."
        ),
    ],
    subtopic: Subtopic = None,
    kind: Annotated[
        Annotated[str, Field(max_length=limits.KIND)] | None,
        Field(description="note, decision, fact, person, session, task, …"),
    ] = None,
    tags: StrList = None,
    status: Status = None,
    sources: Annotated[
        Sources | None,
        Field(description='Where it came from: [{"kind": "email", "external_id": "…"}].'),
    ] = None,
    expected_version: Version = None,
    reason: Reason = "",
) -> CallToolResult:
    """Create or replace the entry with this project + subtopic + title; kind, tags and status
    left out keep their value. Reports created, updated or unchanged, and what the write did.
    To change part of an entry use edit; only its fields, update."""
    return await _call(handlers.upsert, **locals())


async def edit(
    id: EntryRef,
    operation: Literal["append", "prepend", "find_replace", "replace_section"],
    content: Annotated[
        Body,
        Field(description="Text to add, or the replacement; `- [category] fact`, `- rel [[T]]`."),
    ],
    find: Annotated[Body | None, Field(description="find_replace: exact text to replace.")] = None,
    section: Annotated[
        Short | None,
        Field(description="The heading's text: replace_section's, or append/prepend under it."),
    ] = None,
    expected_count: Annotated[
        int | None, Field(description="find_replace: occurrences expected (default 1).")
    ] = None,
    expected_version: Version = None,
    reason: Reason = "",
) -> CallToolResult:
    """Change part of an entry's body without resending it: append, prepend (with section:
    at the end of / right under that heading), find_replace, or replace_section (the body
    under one heading). The answer lists any text removed, with who wrote it."""
    return await _call(handlers.edit, **locals())


async def update(
    id: EntryRef,
    title: Annotated[Title | None, Field(description="New title.")] = None,
    kind: Annotated[str | None, Field(max_length=limits.KIND)] = None,
    tags: Annotated[StrList, Field(description="The new tags (replace the old ones).")] = None,
    status: Status = None,
    subtopic: Annotated[Subtopic, Field(description="Move to this subtopic ('' = root).")] = None,
    expected_version: Version = None,
    reason: Reason = "",
) -> CallToolResult:
    """Set an entry's title, kind, tags, status or subtopic without resending its body; what
    you leave out is kept."""
    return await _call(handlers.update, **locals())


async def list_open(
    project: OptProject = None,
    subtopic: Subtopic = None,
    limit: Annotated[int, Field(ge=1, le=200)] = 50,
) -> CallToolResult:
    """Entries that need follow-up (status open, and tasks until resolved), newest first."""
    return await _call(handlers.list_open, **locals())


async def recent(
    project: OptProject = None,
    since: Annotated[Short, Field(description="ISO date or age: '7d', '2 weeks', '12h'.")] = "7d",
    limit: Annotated[int, Field(ge=1, le=200)] = 20,
) -> CallToolResult:
    """Entries changed recently, newest first."""
    return await _call(handlers.recent, **locals())


async def browse(project: OptProject = None, subtopic: Subtopic = None) -> CallToolResult:
    """Without project: the projects and their entry counts. With project: its subtopic tree
    with counts, and the entries directly in the subtopic (or at the project root)."""
    return await _call(handlers.browse, **locals())


async def history(id: EntryRef, limit: Annotated[int, Field(ge=1, le=200)] = 20) -> CallToolResult:
    """An entry's revisions, newest first: version, when, who, why, git commit."""
    return await _call(handlers.history, **locals())


async def diff(
    id: EntryRef,
    from_version: Annotated[int, Field(ge=1, description="The older version.")],
    to_version: Annotated[
        int | None, Field(ge=1, description="The newer version; default the current one.")
    ] = None,
) -> CallToolResult:
    """A compact unified diff of an entry between two versions (see history for versions)."""
    return await _call(handlers.diff, **locals())


async def delete(
    id: EntryRef, reason: Annotated[Reason, Field(description="Why it is deleted.")]
) -> CallToolResult:
    """Delete an entry (its history is kept). To fix a wrong entry use correct instead."""
    return await _call(handlers.delete, **locals())


async def check_sources(
    sources: Annotated[
        Sources,
        Field(description='[{"kind": "email", "external_id": "<message-id>"}, …]'),
    ],
    project: Annotated[
        str | None,
        Field(max_length=limits.PROJECT, description="Project; omit to check all you can see."),
    ] = None,
) -> CallToolResult:
    """Which of these sources are already logged, and by which entries: call before writing
    notes from mail, tickets or chats to avoid duplicates."""
    return await _call(handlers.check_sources, **locals())


async def create_project(
    slug: Annotated[
        str, Field(max_length=limits.SLUG, description="Short name, e.g. 'customer-x'.")
    ],
    name: Annotated[
        str | None, Field(max_length=limits.NAME, description="Display name; defaults to the slug.")
    ] = None,
    description: Annotated[str, Field(max_length=limits.DESCRIPTION)] = "",
    sensitivity: Literal["public", "internal", "confidential", "restricted"] = "internal",
) -> CallToolResult:
    """Create a project. Ask the user first: most writes belong in an existing project."""
    return await _call(handlers.create_project, **locals())


async def correct(
    id: EntryRef,
    body: Annotated[Body, Field(description="The corrected Markdown body.")],
    reason: Annotated[Reason, Field(description="What was wrong.")],
    title: Annotated[Title | None, Field(description="New title; defaults to the old one.")] = None,
) -> CallToolResult:
    """Record that an entry was wrong: a new entry supersedes it; both are kept and search
    shows the new one."""
    return await _call(handlers.correct, **locals())


async def build_context(
    id: Annotated[
        str,
        Field(
            max_length=limits.REF,
            description="memory://project/path/entry, memory://project/sub/* (or /** for "
            "everything below), an entry id, short id or path, or search words.",
        ),
    ],
    depth: Annotated[int, Field(ge=1, le=3, description="Hops through relations.")] = 1,
    since: Since = None,
    max_related: Annotated[int, Field(ge=1, le=50)] = 10,
    include_history: Annotated[
        bool, Field(description="Also the facts no longer current, and since when.")
    ] = False,
    as_of: Annotated[
        Short | None, Field(description="The facts as they were at this ISO date/time.")
    ] = None,
) -> CallToolResult:
    """Recall around a topic in one call: the entry (or the entries of a glob or a search)
    with its observations, the entries it links to and those linking to it, up to depth hops
    in both directions, nearest first."""
    return await _call(handlers.build_context, **locals())


async def whoami() -> CallToolResult:
    """Who you are: user, agent label, token scope and expiry, and the projects you can read
    with your role in each (whom to ask for more)."""
    return await _call(handlers.whoami)


# Registered in this order by mcp_api.app: it is the order of tools/list.
TOOLS: list[tuple[Callable[..., Awaitable[CallToolResult]], ToolAnnotations]] = [
    (search, READ),
    (get, READ),
    (upsert, IDEMPOTENT_WRITE),
    (edit, WRITE),
    (update, IDEMPOTENT_WRITE),
    (list_open, READ),
    (recent, READ),
    (browse, READ),
    (history, READ),
    (diff, READ),
    (delete, DESTRUCTIVE),
    (check_sources, READ),
    (create_project, WRITE),
    (correct, WRITE),
    (build_context, READ),
    (whoami, READ),
]
