"""Shape tool answers: a short text for the model plus structured content for programs.

Every answer ends with one line on what to do next; errors are a menu of next moves.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from datetime import datetime

from mcp_types import CallToolResult, TextContent

from knowledge.errors import KnowledgeError
from knowledge.models import Entry, Project
from knowledge.selectors.supersession import UNSEEN
from knowledge.write_result import WriteResult
from mcp_api import hints
from mcp_api.entry_meta import entry_meta
from mcp_api.graph_text import context_text, relation_lines
from mcp_api.note_type_text import schema_entry_note, schema_fit_note
from mcp_api.profile_text import whoami_text
from mcp_api.search_text import search_text, size
from mcp_api.write_text import change_summary, rebased_lines, report_lines


def result(text: str, data: dict) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def error(text: str, data: dict) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content={"error": data},
        is_error=True,
    )


def database_down() -> CallToolResult:
    return error(hints.DATABASE_DOWN, {"code": "database_unavailable"})


def search_results(
    query: str,
    hits: list[dict],
    note: str = "",
    *,
    words_matched: bool | None = None,
    no_words: str = "",
    left_out: str = "",
) -> CallToolResult:
    text = search_text(query, hits, note=note, no_words=no_words, left_out=left_out)
    data: dict = {"results": hits}
    if words_matched is not None:
        data["words_matched"] = words_matched
    notes = " ".join(n for n in (no_words, left_out, note) if n)
    return result(text, data | {"note": notes} if notes else data)


def entry_window(
    entry: Entry,
    *,
    offset: int,
    max_chars: int,
    unseen: frozenset[int],
    relations: dict | None = None,
) -> CallToolResult:
    """An entry's metadata and the part of its body from offset, at most max_chars long, then
    its links and backlinks."""
    window = entry.body[offset : offset + max_chars]
    end = offset + len(window)
    next_offset = end if end < len(entry.body) else None
    meta = entry_meta(entry, unseen)
    meta["sources"] = [
        {"kind": s.kind, "external_id": s.external_id, "url": s.url} for s in entry.sources.all()
    ]
    head = (
        f"# {entry.title}\n{entry.short_id} · {entry.permalink} · {entry.kind} · {entry.status} · "
        f"v{entry.version} · by {entry.generated_by or '?'}"
        + (" · verified" if entry.is_verified else "")
        + (f" · tags: {', '.join(entry.tags)}" if entry.tags else "")
    )
    if entry.superseded_by_id in unseen:
        head += f"\nSuperseded by {UNSEEN}."
    elif entry.superseded_by_id:
        head += f"\nSuperseded by entry {entry.superseded_by_id}: read that one instead."
    tail = (
        f'\n[{len(entry.body) - end} more characters: get("{entry.short_id}", offset={end})]'
        if next_offset is not None
        else ""
    )
    data = {
        "entry": meta,
        "body": window,
        "offset": offset,
        "next_offset": next_offset,
        "total_chars": len(entry.body),
    }
    links = ""
    if relations is not None:
        data["relations"] = relations
        links = relation_lines(relations)
    return result(f"{head}\n\n{window}{tail}{links}", data)


def context(ctx: dict) -> CallToolResult:
    return result(context_text(ctx), ctx)


def entry_saved(
    written: WriteResult, *, report: dict | None = None, unseen: frozenset[int]
) -> CallToolResult:
    """What the write did (knowledge.reads.write_reports): the change, on which version when
    it read an older one (`written.rebased`), then the rest."""
    entry, outcome = written.entry, written.outcome
    rebased = written.rebased.as_dict() if written.rebased else None
    verb = {"created": "Created", "updated": "Updated", "unchanged": "Unchanged (no new revision):"}
    lines = [
        f"{verb.get(outcome, outcome.capitalize())} {entry.short_id} {entry.title!r} in "
        f"{entry.path} (version {entry.version}){change_summary(report)}."
        f"{schema_fit_note(entry, written.schema)}{schema_entry_note(entry)}",
        *rebased_lines(rebased),
        *report_lines(report, entry.short_id),
        f'Next: edit("{entry.short_id}", …) to change part of it; get("{entry.short_id}") to '
        "read it.",
    ]
    data = {"outcome": outcome, "entry": entry_meta(entry, unseen)}
    if rebased is not None:
        data["applied_on"] = rebased
    if report is not None:
        data["report"] = report
    if written.schema is not None:
        data["schema"] = written.schema.as_dict()
    return result("\n".join(lines), data)


def _listing(
    entries: list[Entry], title: str, empty: str, more: str, unseen: frozenset[int]
) -> CallToolResult:
    rows = [entry_meta(e, unseen) for e in entries]
    if not rows:
        return result(empty, {"entries": []})
    lines = [title]
    lines += [
        f"- {r['short_id']} · {r['title']} · {r['path']} · {r['updated'][:10]}"
        + (f" by {r['generated_by']}" if r["generated_by"] else "")
        + f" · {size(r)}"
        for r in rows
    ]
    lines.append(more)
    return result("\n".join(lines), {"entries": rows})


def open_entries(entries: list[Entry], *, unseen: frozenset[int]) -> CallToolResult:
    return _listing(
        entries,
        "Open entries (need follow-up; tasks until resolved):",
        "Nothing is open. Mark an entry open with update(id, status='open').",
        "Next: get(id) to read one; update(id, status='resolved') when it is done.",
        unseen,
    )


def recent_entries(
    entries: list[Entry], start: datetime, *, unseen: frozenset[int]
) -> CallToolResult:
    return _listing(
        entries,
        f"Changed since {start:%Y-%m-%d %H:%M}:",
        f"Nothing changed since {start:%Y-%m-%d %H:%M}. Widen since= (e.g. '30d').",
        "Next: get(id) to read one; history(id) for what changed.",
        unseen,
    )


def projects(overview: Iterable[Project]) -> CallToolResult:
    """The projects with their entry counts (`entry_count`, from selectors.project_overview)."""
    rows = [
        {"slug": p.slug, "name": p.name, "sensitivity": p.sensitivity, "entries": p.entry_count}
        for p in overview
    ]
    lines = ["Projects:"] + [f"- {p['slug']} ({p['name']}): {p['entries']} entries" for p in rows]
    lines.append("Next: browse(project) for its subtopics; search(query, project=…).")
    if not rows:
        lines = ["No projects yet. Create one with create_project(slug, name)."]
    return result("\n".join(lines), {"projects": rows})


def project_page(page: dict, subtopic: str, *, unseen: frozenset[int]) -> CallToolResult:
    """One project from reads.listings.project_browse: counts, subtopic tree, entries here."""
    proj, tree = page["project"], page["subtopics"]
    here = [entry_meta(e, unseen) for e in page["entries"]]
    counts = {"total": page["total"], "open": page["open"]}
    lines = [f"{proj.slug} ({proj.name}): {counts['total']} entries, {counts['open']} open."]
    lines += [
        f"{'  ' * n['depth']}- {n['path']} ({n['total']}"
        + (f", {n['entries']} directly" if n["total"] != n["entries"] else "")
        + ")"
        for n in tree
    ]
    if here:
        lines.append(f"Entries in {proj.slug}/{subtopic}:")
        lines += [f"- {e['short_id']} · {e['title']} · {size(e)}" for e in here]
    lines.append("Next: browse(project, subtopic) to go deeper; get(id) to read an entry.")
    return result(
        "\n".join(lines),
        {
            "project": {"slug": proj.slug, "name": proj.name, **counts},
            "subtopics": tree,
            "entries": here,
        },
    )


def entry_deleted(ref: str, title: str, *, back: Entry | None = None) -> CallToolResult:
    if back is None:
        return result(
            f"Deleted {ref} {title!r}; its history is kept (delete(id, reason, undo=true) brings "
            "it back). If it was wrong rather than unwanted, correct(id, body, reason) is better.",
            {"deleted": ref},
        )
    text = f"Brought back {ref} {title!r} in {back.path} as version {back.version}, with its "
    text += f"sources, kind and tags; history({ref}) shows it."
    return result(text, {"undeleted": ref, "version": back.version})


def sources_checked(answer: list[dict], project: str | None = None) -> CallToolResult:
    where = f"in project {project}" if project else "in every project you can see"
    missing = (
        f"not logged in project {project}"
        if project
        else ("logged in none of the projects you can see")
    )
    lines = [f"Checked {where}:"] + [
        f"- {a.get('kind')}:{a.get('external_id')} → "
        + (f"logged by {', '.join(a['entries'])}" if a["logged"] else missing)
        for a in answer
    ]
    new = sum(not a["logged"] for a in answer)
    lines.append(
        f"{new} not logged yet: upsert(…, sources=[{{kind, external_id}}]) records them."
        if new
        else "All logged already: get(id) to read the entries instead of writing again."
    )
    return result("\n".join(lines), {"sources": answer, "project": project, "scope": where})


def project_created(project: Project) -> CallToolResult:
    return result(
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


def entry_corrected(
    written: WriteResult, *, report: dict | None = None, unseen: frozenset[int]
) -> CallToolResult:
    """The correction, then what it changed against the old body (write_text.report_lines)."""
    new, old = written.entry, written.superseded
    lines = [
        f"Recorded the correction: {new.short_id} {new.title!r} (new) supersedes "
        f"{old.short_id} (kept as {old.title!r}, status superseded){change_summary(report)}. "
        f"Search now shows the new one; include_history=true shows both."
        f"{schema_fit_note(new, written.schema)}",
        *report_lines(report, new.short_id),
    ]
    data = {"entry": entry_meta(new, unseen), "superseded": entry_meta(old, unseen)}
    if report is not None:
        data["report"] = report
    if written.schema is not None:
        data["schema"] = written.schema.as_dict()
    return result("\n".join(lines), data)


def whoami(me: dict) -> CallToolResult:
    return result(whoami_text(me), me)


def knowledge_error(exc: KnowledgeError, *, found: list[dict] | None = None) -> CallToolResult:
    """The core's message, the close matches and search hits it does not already name, then the
    MCP next moves (mcp_api.hints)."""
    lines = [exc.message]
    titles = {h["title"] for h in found or []}
    close = [
        s
        for s in exc.data.get("suggestions") or []
        if s not in titles and not _names(exc.message, s)
    ]
    if close:
        lines.append("Close matches: " + ", ".join(json.dumps(s) for s in close))
    if found:
        lines.append("Search found: " + "; ".join(f"{h['short_id']} {h['title']!r}" for h in found))
    lines += hints.conflict_lines(exc)
    lines += hints.next_moves(exc)
    data = _jsonable(exc.as_dict())
    if found:
        data["found"] = [
            {k: h[k] for k in ("id", "short_id", "title", "path", "address")} for h in found
        ]
    return error("\n".join(lines), data)


def _names(message: str, word: str) -> bool:
    """Whether the message offers `word` itself (not inside the quoted input it echoes)."""
    return re.search(rf"(?<![\w'\"/-]){re.escape(word)}(?![\w'\"/-])", message) is not None


def _jsonable(data: dict) -> dict:
    return json.loads(json.dumps(data, default=str))
