"""The synchronous body of each MCP tool: read the arguments, call selectors/services, render.

Runs in a worker thread (tools.py hops here with sync_to_async); never writes the ORM itself
and builds no queries: counts and filters live in knowledge/selectors.py, text in render.py.
"""

from __future__ import annotations

from history.selectors import entry_diff, entry_history
from knowledge import inputs
from knowledge.actors import Actor
from knowledge.errors import KnowledgeError, NotFound
from knowledge.search_adapter import search as search_hits
from knowledge.selectors import (
    entries_open,
    entries_recent,
    entry_get,
    project_browse,
    project_overview,
    sources_check,
)
from knowledge.services import (
    entry_delete,
    entry_upsert,
    project_create,
)
from knowledge.services.entries_edit import entry_correct, entry_edit, entry_verify
from mcp_api import render

MAX_WINDOW = 50_000


def _limit(value, top: int) -> int:
    return max(1, min(int(value), top))


def search(
    actor: Actor,
    *,
    query,
    project,
    subtopic,
    kinds,
    tags,
    status,
    after,
    before,
    limit,
    include_history,
):
    hits = search_hits(
        actor,
        query,
        project=project or None,
        subtopic=subtopic or None,
        kinds=inputs.str_list(kinds),
        tags=[t.lower() for t in inputs.str_list(tags) or []] or None,
        status=inputs.str_list(status),
        after=inputs.when(after, field="after"),
        before=inputs.when(before, field="before"),
        limit=_limit(limit, 50),
        include_history=include_history,
    )
    return render.search_results(query, hits)


class _Handled(Exception):
    """Carries a finished error answer out of a handler."""

    def __init__(self, answer):
        self.answer = answer


def _entry_or_hints(actor: Actor, ref):
    try:
        return entry_get(actor, ref)
    except NotFound as exc:
        term = str(ref).rsplit("/", 1)[-1]
        hits = [] if term.isdigit() else search_hits(actor, term.replace("-", " "), limit=3)
        raise _Handled(render.knowledge_error(exc, found=hits)) from exc


def get(actor: Actor, *, id_or_path, offset, max_chars):
    entry = _entry_or_hints(actor, id_or_path)
    return render.entry_window(
        entry, offset=max(0, int(offset)), max_chars=max(200, min(int(max_chars), MAX_WINDOW))
    )


def upsert(actor: Actor, *, subtopic, kind, tags, status, **fields):
    """fields: project, title, body, sources, expected_version, reason, passed on as given."""
    result = entry_upsert(
        actor=actor,
        subtopic=subtopic or None,
        kind=kind or None,
        tags=inputs.str_list(tags) if tags is not None else None,
        status=status or None,
        **fields,
    )
    return render.entry_saved(result.entry, result.outcome)


def edit(actor: Actor, *, id, **change):
    """change: operation, content, find, section, expected_count, expected_version, reason."""
    entry = _entry_or_hints(actor, id)
    before = entry.version
    entry = entry_edit(actor=actor, entry_id=entry.pk, **change)
    return render.entry_saved(entry, "updated" if entry.version != before else "unchanged")


def list_open(actor: Actor, *, project, subtopic, limit):
    entries = entries_open(
        actor, project=project or None, subtopic=subtopic or None, limit=_limit(limit, 200)
    )
    return render.open_entries(entries)


def recent(actor: Actor, *, project, since, limit):
    start = inputs.when(since or "7d", field="since")
    entries = entries_recent(actor, project=project or None, since=start, limit=_limit(limit, 200))
    return render.recent_entries(entries, start)


def browse(actor: Actor, *, project, subtopic):
    if not project:
        return render.projects(project_overview(actor))
    page = project_browse(actor, project=project, subtopic=subtopic or None)
    return render.project_page(page, subtopic or "")


def history(actor: Actor, *, id, limit):
    entry = _entry_or_hints(actor, id)
    return render.revisions(entry, entry_history(actor, entry.pk, limit=_limit(limit, 200)))


def diff(actor: Actor, *, id, from_version, to_version):
    entry = _entry_or_hints(actor, id)
    text = entry_diff(actor, entry.pk, from_version=from_version, to_version=to_version)
    return render.entry_diff(entry, from_version, to_version or entry.version, text)


def delete(actor: Actor, *, id, reason):
    entry = _entry_or_hints(actor, id)
    ref, title = entry.short_id, entry.title
    entry_delete(actor=actor, entry_id=entry.pk, reason=reason)
    return render.entry_deleted(ref, title)


def check_sources(actor: Actor, *, project, sources):
    items = [s if isinstance(s, dict) else {"kind": "", "external_id": str(s)} for s in sources]
    return render.sources_checked(sources_check(actor, project, items))


def create_project(actor: Actor, *, slug, name, description, sensitivity):
    project = project_create(
        actor=actor,
        slug=slug,
        name=name or "",
        description=description or "",
        sensitivity=(sensitivity or "internal").lower(),
    )
    return render.project_created(project)


def correct(actor: Actor, *, id, body, reason, title):
    entry = _entry_or_hints(actor, id)
    new, old = entry_correct(
        actor=actor, entry_id=entry.pk, body=body, reason=reason, title=title or None
    )
    return render.entry_corrected(new, old)


def verify(actor: Actor, *, id):
    entry = _entry_or_hints(actor, id)
    entry = entry_verify(actor=actor, entry_id=entry.pk)
    return render.entry_verified(entry, actor.user.get_username())


def guarded(fn, actor: Actor, **kwargs):
    """Run one handler; knowledge errors become tool errors the agent can act on."""
    try:
        return fn(actor, **kwargs)
    except _Handled as handled:
        return handled.answer
    except KnowledgeError as exc:
        return render.knowledge_error(exc)
