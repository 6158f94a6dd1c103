"""The synchronous body of each MCP tool: read the arguments, call selectors/services, render.

Runs in a worker thread (tools.py hops here with sync_to_async); never writes the ORM itself
and builds no queries: counts and filters live in knowledge/selectors/, text in render.py.
"""

from __future__ import annotations

from django.db import InterfaceError, OperationalError

from history.selectors import entry_diff, entry_history
from knowledge import inputs
from knowledge.actors import Actor
from knowledge.errors import KnowledgeError, NotFound
from knowledge.graph.context import build_context as context_of
from knowledge.graph.selectors import entry_relations
from knowledge.search import SearchFilters, search_entries, timing
from knowledge.selectors import entry_get, project_overview, sources_check
from knowledge.selectors.listings import entries_open, entries_recent, project_browse
from knowledge.selectors.whoami import actor_profile
from knowledge.selectors.write_reports import write_report
from knowledge.services import (
    EntryFields,
    entry_correct,
    entry_delete,
    entry_edit,
    entry_update,
    entry_upsert,
    project_create,
)
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
    since,
    before,
    limit,
    include_history,
    category=None,
):
    with timing.stage("search service"):
        filters = SearchFilters.parse(
            project=project,
            subtopic=subtopic,
            kinds=kinds,
            tags=tags,
            status=status,
            after=since,
            before=before,
            include_history=include_history,
            categories=category,
        )
        found = search_entries(actor, query, filters=filters, limit=_limit(limit, 50))
        hits = [hit.as_dict() for hit in found]
    with timing.stage("render"):
        return render.search_results(query, hits, found.note)


def get(actor: Actor, *, id, offset, max_chars):
    entry = entry_get(actor, id)
    return render.entry_window(
        entry,
        offset=max(0, int(offset)),
        max_chars=max(200, min(int(max_chars), MAX_WINDOW)),
        relations=entry_relations(actor, entry),
    )


def upsert(
    actor: Actor,
    *,
    project,
    subtopic,
    title,
    body,
    kind,
    tags,
    status,
    sources,
    expected_version,
    reason,
):
    fields = EntryFields(
        title=title,
        body=body,
        kind=kind or None,
        tags=inputs.str_list(tags) if tags is not None else None,
        status=status or None,
    )
    result = entry_upsert(
        actor=actor,
        project=project,
        subtopic=subtopic or None,
        fields=fields,
        sources=sources,
        expected_version=expected_version,
        reason=reason,
    )
    report = write_report(
        actor, result.entry, result.outcome, sources=sources, before=result.before
    )
    return render.entry_saved(result.entry, result.outcome, report=report)


def edit(actor: Actor, *, id, **change):
    """change: operation, content, find, section, expected_count, expected_version, reason."""
    result = entry_edit(actor=actor, ref=id, **change)
    report = write_report(actor, result.entry, result.outcome, before=result.before)
    return render.entry_saved(result.entry, result.outcome, report=report)


def update(actor: Actor, *, id, title, kind, tags, status, subtopic, expected_version, reason):
    before = entry_get(actor, id).version
    entry = entry_update(
        actor=actor,
        ref=id,
        fields=EntryFields(
            title=title or None,
            kind=kind or None,
            tags=(inputs.str_list(tags) or []) if tags is not None else None,
            status=status or None,
        ),
        subtopic=subtopic,
        expected_version=expected_version,
        reason=reason,
    )
    outcome = "updated" if entry.version != before else "unchanged"
    return render.entry_saved(entry, outcome, report=write_report(actor, entry, outcome))


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
    entry = entry_get(actor, id)
    return render.revisions(entry, entry_history(actor, entry, limit=_limit(limit, 200)))


def diff(actor: Actor, *, id, from_version, to_version):
    entry = entry_get(actor, id)
    text = entry_diff(actor, entry, from_version=from_version, to_version=to_version)
    return render.entry_diff(entry, from_version, to_version or entry.version, text)


def delete(actor: Actor, *, id, reason):
    entry = entry_delete(actor=actor, ref=id, reason=reason)
    return render.entry_deleted(entry.short_id, entry.title)


def check_sources(actor: Actor, *, project, sources):
    items = [s if isinstance(s, dict) else {"kind": "", "external_id": str(s)} for s in sources]
    answer = sources_check(actor, project or None, items)
    return render.sources_checked(answer, project or None)


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
    new, old = entry_correct(actor=actor, ref=id, body=body, reason=reason, title=title or None)
    return render.entry_corrected(new, old)


def build_context(actor: Actor, *, id, depth, since, max_related, include_history, as_of):
    context = context_of(
        actor,
        id,
        depth=depth,
        timeframe=since or None,
        max_related=max_related,
        include_history=include_history,
        as_of=as_of or None,
    )
    return render.context(context)


def whoami(actor: Actor):
    return render.whoami(actor_profile(actor))


def _found_instead(actor: Actor, exc: NotFound) -> list[dict]:
    """For an entry that is not there: what a search for its name finds."""
    term = str(exc.data.get("entry") or "").rsplit("/", 1)[-1]
    if not term or term.isdigit() or exc.data.get("deleted"):
        return []
    return [hit.as_dict() for hit in search_entries(actor, term.replace("-", " "), limit=3)]


def guarded(fn, actor: Actor, **kwargs):
    """Run one handler; knowledge errors become tool errors the agent can act on."""
    try:
        return fn(actor, **kwargs)
    except NotFound as exc:
        return render.knowledge_error(exc, found=_found_instead(actor, exc))
    except KnowledgeError as exc:
        return render.knowledge_error(exc)
    except (OperationalError, InterfaceError):
        return render.database_down()
