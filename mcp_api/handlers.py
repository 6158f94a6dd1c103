"""The synchronous body of each MCP tool: call selectors/services, render text + structure.

Runs in a worker thread (tools.py hops here with sync_to_async); never writes the ORM itself.
"""

from __future__ import annotations

from django.db.models import Count, Q

from history.selectors import entry_diff, entry_history
from knowledge import inputs
from knowledge.actors import Actor
from knowledge.errors import KnowledgeError, NotFound
from knowledge.models import EntryStatus
from knowledge.paths import normalize_path
from knowledge.search_adapter import search as search_hits
from knowledge.selectors import (
    entry_get,
    entry_list,
    project_get,
    project_overview,
    sources_check,
    subtopic_tree,
)
from knowledge.services import (
    entry_delete,
    entry_upsert,
    project_create,
)
from knowledge.services.entries_edit import entry_correct, entry_edit, entry_verify
from mcp_api import render

MAX_WINDOW = 50_000


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
        limit=max(1, min(int(limit), 50)),
        include_history=include_history,
    )
    if not hits:
        text = (
            f"No results for {query!r}. Try fewer or other words, drop filters, or "
            "browse(project) to see what exists."
        )
    else:
        lines = [f"{len(hits)} result(s) for {query!r}:", *map(render.hit_line, hits)]
        lines.append(
            f'Next: get("{hits[0]["short_id"]}") to read one; narrow with project=, '
            "subtopic=, kinds=, tags=, after=."
        )
        text = "\n".join(lines)
    return render.result(text, {"results": hits})


def _entry_or_hints(actor: Actor, ref: str):
    try:
        return entry_get(actor, ref)
    except NotFound as exc:
        term = ref.rsplit("/", 1)[-1]
        hits = [] if term.isdigit() else search_hits(actor, term.replace("-", " "), limit=3)
        answer = render.knowledge_error(exc, hints=render.not_found_hints(exc, ref, hits))
        raise _Handled(answer) from exc


class _Handled(Exception):
    """Carries a finished error answer out of a handler."""

    def __init__(self, answer):
        self.answer = answer


def get(actor: Actor, *, id_or_path, offset, max_chars):
    entry = _entry_or_hints(actor, id_or_path)
    offset = max(0, int(offset))
    max_chars = max(200, min(int(max_chars), MAX_WINDOW))
    window = entry.body[offset : offset + max_chars]
    end = offset + len(window)
    next_offset = end if end < len(entry.body) else None
    meta = render.entry_meta(entry)
    meta["sources"] = [
        {"kind": s.kind, "external_id": s.external_id, "url": s.url} for s in entry.sources.all()
    ]
    head = (
        f"# {entry.title}\n{entry.short_id} · {meta['path']} · {entry.kind} · {entry.status} · "
        f"v{entry.version} · by {entry.generated_by or '?'}"
        + (" · verified" if entry.is_verified else "")
        + (f" · tags: {', '.join(entry.tags)}" if entry.tags else "")
    )
    if entry.superseded_by_id:
        head += f"\nSuperseded by entry {entry.superseded_by_id}: read that one instead."
    tail = (
        f'\n[{len(entry.body) - end} more characters: get("{entry.short_id}", offset={end})]'
        if next_offset is not None
        else ""
    )
    return render.result(
        f"{head}\n\n{window}{tail}",
        {
            "entry": meta,
            "body": window,
            "offset": offset,
            "next_offset": next_offset,
            "total_chars": len(entry.body),
        },
    )


def _saved(entry, outcome: str, extra: str = ""):
    verb = {"created": "Created", "updated": "Updated", "unchanged": "Unchanged (no new revision):"}
    text = (
        f"{verb.get(outcome, outcome.capitalize())} {entry.short_id} {entry.title!r} in "
        f"{entry.path} (version {entry.version}).{extra}\n"
        f'Next: edit("{entry.short_id}", …) to change part of it; get("{entry.short_id}") to '
        "read it."
    )
    return render.result(text, {"outcome": outcome, "entry": render.entry_meta(entry)})


def upsert(
    actor: Actor,
    *,
    project,
    title,
    body,
    subtopic,
    kind,
    tags,
    status,
    sources,
    expected_version,
    reason,
):
    result = entry_upsert(
        actor=actor,
        project=project,
        title=title,
        body=body,
        subtopic=subtopic or None,
        kind=kind or None,
        tags=inputs.str_list(tags) if tags is not None else None,
        status=status or None,
        sources=sources,
        expected_version=expected_version,
        reason=reason,
    )
    return _saved(result.entry, result.outcome)


def edit(
    actor: Actor, *, id, operation, content, find, section, expected_count, expected_version, reason
):
    entry = _entry_or_hints(actor, id)
    before = entry.version
    entry = entry_edit(
        actor=actor,
        entry_id=entry.pk,
        operation=operation,
        content=content,
        find=find,
        section=section,
        expected_count=expected_count,
        expected_version=expected_version,
        reason=reason,
    )
    return _saved(entry, "updated" if entry.version != before else "unchanged")


def _listing(entries, title: str, empty: str, more: str):
    rows = [render.entry_meta(e) for e in entries]
    if not rows:
        return render.result(empty, {"entries": []})
    lines = [title]
    lines += [f"- {r['short_id']} · {r['title']} · {r['path']} · {r['updated'][:10]}" for r in rows]
    lines.append(more)
    return render.result("\n".join(lines), {"entries": rows})


def list_open(actor: Actor, *, project, subtopic, limit):
    entries = entry_list(
        actor, project=project or None, subtopic=subtopic or None, status=[EntryStatus.OPEN]
    ).order_by("-updated_at")[: max(1, min(int(limit), 200))]
    return _listing(
        entries,
        "Open entries (need follow-up):",
        "Nothing is open. Mark an entry open with upsert(…, status='open').",
        "Next: get(id) to read one; upsert(…, status='resolved') when it is done.",
    )


def recent(actor: Actor, *, project, since, limit):
    start = inputs.when(since or "7d", field="since")
    entries = (
        entry_list(actor, project=project or None)
        .filter(updated_at__gte=start)
        .order_by("-updated_at")[: max(1, min(int(limit), 200))]
    )
    return _listing(
        entries,
        f"Changed since {start:%Y-%m-%d %H:%M}:",
        f"Nothing changed since {start:%Y-%m-%d %H:%M}. Widen since= (e.g. '30d').",
        "Next: get(id) to read one; history(id) for what changed.",
    )


def browse(actor: Actor, *, project, subtopic):
    if not project:
        projects = [
            {"slug": p.slug, "name": p.name, "sensitivity": p.sensitivity, "entries": p.entry_count}
            for p in project_overview(actor)
        ]
        lines = ["Projects:"] + [
            f"- {p['slug']} ({p['name']}): {p['entries']} entries" for p in projects
        ]
        lines.append("Next: browse(project) for its subtopics; search(query, project=…).")
        if not projects:
            lines = ["No projects yet. Create one with create_project(slug, name)."]
        return render.result("\n".join(lines), {"projects": projects})
    proj = project_get(actor, project)
    tree = subtopic_tree(actor, proj.pk)
    entries = entry_list(actor, project=proj.pk)
    if subtopic:
        prefix = normalize_path(subtopic)
        tree = [n for n in tree if n["path"] == prefix or n["path"].startswith(prefix + "/")]
        entries = entries.filter(subtopic__path=prefix)
    else:
        entries = entries.filter(subtopic__isnull=True)
    here = [render.entry_meta(e) for e in entries.order_by("title")[:100]]
    counts = entry_list(actor, project=proj.pk).aggregate(
        total=Count("id"), open=Count("id", filter=Q(status=EntryStatus.OPEN))
    )
    lines = [f"{proj.slug} ({proj.name}): {counts['total']} entries, {counts['open']} open."]
    lines += [f"{'  ' * n['depth']}- {n['path']} ({n['entries']})" for n in tree]
    if here:
        lines.append(f"Entries in {proj.slug}/{subtopic or ''}:")
        lines += [f"- {e['short_id']} · {e['title']}" for e in here]
    lines.append("Next: browse(project, subtopic) to go deeper; get(id) to read an entry.")
    return render.result(
        "\n".join(lines),
        {
            "project": {"slug": proj.slug, "name": proj.name, **counts},
            "subtopics": tree,
            "entries": here,
        },
    )


def history(actor: Actor, *, id, limit):
    entry = _entry_or_hints(actor, id)
    rows = [
        {**r, "at": r["at"].isoformat()}
        for r in entry_history(actor, entry.pk, limit=max(1, min(int(limit), 200)))
    ]
    lines = [f"History of {entry.short_id} {entry.title!r} (newest first):"]
    lines += [
        f"- v{r['version']} {r['at'][:16]} {r['action']} by {r['user'] or r['generated_by']}"
        + (f": {r['reason']}" if r["reason"] else "")
        + (f" [{r['git_commit'][:10]}]" if r["git_commit"] else "")
        for r in rows
    ]
    if len(rows) > 1:
        lines.append(
            f"Next: diff({entry.short_id}, from_version={rows[1]['version']}) for the last change."
        )
    return render.result("\n".join(lines), {"entry": entry.short_id, "revisions": rows})


def diff(actor: Actor, *, id, from_version, to_version):
    entry = _entry_or_hints(actor, id)
    text = entry_diff(actor, entry.pk, from_version=from_version, to_version=to_version)
    to_v = to_version or entry.version
    summary = (
        f"Diff of {entry.short_id} {entry.title!r}, version {from_version} → {to_v}:"
        if text
        else f"Versions {from_version} and {to_v} of {entry.short_id} are the same."
    )
    return render.result(
        f"{summary}\n{text}".rstrip(),
        {"entry": entry.short_id, "from_version": from_version, "to_version": to_v, "diff": text},
    )


def delete(actor: Actor, *, id, reason):
    entry = _entry_or_hints(actor, id)
    ref, title = entry.short_id, entry.title
    entry_delete(actor=actor, entry_id=entry.pk, reason=reason)
    return render.result(
        f"Deleted {ref} {title!r}; its history is kept. If it was wrong rather than "
        "unwanted, correct(id, body, reason) is the better tool next time.",
        {"deleted": ref},
    )


def check_sources(actor: Actor, *, project, sources):
    items = [s if isinstance(s, dict) else {"kind": "", "external_id": str(s)} for s in sources]
    answer = sources_check(actor, project, items)
    lines = [
        f"- {a.get('kind')}:{a.get('external_id')} → "
        + (f"logged by {', '.join(a['entries'])}" if a["logged"] else "not logged yet")
        for a in answer
    ]
    new = sum(not a["logged"] for a in answer)
    lines.append(
        f"{new} not logged yet: upsert(…, sources=[{{kind, external_id}}]) records them."
        if new
        else "All logged already: get(id) to read the entries instead of writing again."
    )
    return render.result("\n".join(lines), {"sources": answer})


def create_project(actor: Actor, *, slug, name, description, sensitivity):
    project = project_create(
        actor=actor,
        slug=slug,
        name=name or "",
        description=description or "",
        sensitivity=(sensitivity or "internal").lower(),
    )
    return render.result(
        f"Created project {project.slug} ({project.name}, {project.sensitivity}).\n"
        f'Next: upsert(project="{project.slug}", title=…, body=…, subtopic="a/b").',
        {
            "project": {
                "id": project.pk,
                "slug": project.slug,
                "name": project.name,
                "sensitivity": project.sensitivity,
            }
        },
    )


def correct(actor: Actor, *, id, body, reason, title):
    entry = _entry_or_hints(actor, id)
    new, old = entry_correct(
        actor=actor, entry_id=entry.pk, body=body, reason=reason, title=title or None
    )
    return render.result(
        f"Recorded the correction: {new.short_id} {new.title!r} (new) supersedes "
        f"{old.short_id} (kept as {old.title!r}, status superseded). Search now shows the new "
        "one; include_history=true shows both.",
        {"entry": render.entry_meta(new), "superseded": render.entry_meta(old)},
    )


def verify(actor: Actor, *, id):
    entry = _entry_or_hints(actor, id)
    entry = entry_verify(actor=actor, entry_id=entry.pk)
    return render.result(
        f"Verified {entry.short_id} {entry.title!r} (version {entry.version}) as "
        f"{actor.user.get_username()}. Editing it later clears the verification.",
        {"entry": render.entry_meta(entry)},
    )


def guarded(fn, actor: Actor, **kwargs):
    """Run one handler; knowledge errors become tool errors the agent can act on."""
    try:
        return fn(actor, **kwargs)
    except _Handled as handled:
        return handled.answer
    except KnowledgeError as exc:
        return render.knowledge_error(exc)
